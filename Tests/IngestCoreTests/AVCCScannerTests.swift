import Testing

@testable import IngestCore

private func nals(_ payload: [UInt8], lengthSize: Int) throws -> [[Int]] {
  var found: [[Int]] = []
  try payload.withUnsafeBytes { raw in
    try AVCCScanner.forEachNAL(in: raw, lengthSize: lengthSize) { found.append([$0, $1]) }
  }
  return found
}

private func disposable(_ payload: [UInt8], lengthSize: Int = 4) throws -> Bool {
  try payload.withUnsafeBytes { raw in
    try AVCCScanner.summarize(raw, lengthSize: lengthSize).isDisposable
  }
}

@Suite struct AVCCScannerTests {
  /// One walk gives everything later stages need: counts, Annex B size (delimiters left out),
  /// IDR and parameter sets.
  @Test func summaryRecordsWhatTheWalkFound() throws {
    // AUD, SPS, PPS, IDR (3 bytes), an empty NAL.
    let payload: [UInt8] = [
      0, 0, 0, 2, 0x09, 0xF0, 0, 0, 0, 1, 0x67, 0, 0, 0, 1, 0x68, 0, 0, 0, 3, 0x65, 1, 2, 0, 0, 0,
      0,
    ]
    let summary = try payload.withUnsafeBytes { try AVCCScanner.summarize($0, lengthSize: 4) }
    #expect(summary.payloadSize == payload.count)
    #expect(summary.nalCount == 4)
    #expect(summary.annexBSize == 5 + 5 + 7)
    #expect(summary.containsIDR && summary.hasParameterSets && !summary.isDisposable)
    payload.withUnsafeBytes { raw in
      #expect(summary.describes(raw, lengthSize: 4))
      #expect(!summary.describes(raw, lengthSize: 2))
      #expect(!summary.describes(UnsafeRawBufferPointer(rebasing: raw[1...]), lengthSize: 4))
    }
  }

  @Test func walksNALsForEveryLengthSize() throws {
    #expect(try nals([2, 0x65, 1, 1, 0x41], lengthSize: 1) == [[1, 2], [4, 1]])
    #expect(try nals([0, 2, 0x65, 1, 0, 1, 0x41], lengthSize: 2) == [[2, 2], [6, 1]])
    #expect(
      try nals([0, 0, 0, 3, 0x65, 1, 2, 0, 0, 0, 1, 0x41], lengthSize: 4) == [[4, 3], [11, 1]])
    // Zero-length NAL units are skipped; an empty payload has none.
    #expect(try nals([0, 0, 0, 0, 0, 0, 0, 1, 0x09], lengthSize: 4) == [[8, 1]])
    #expect(try nals([], lengthSize: 4) == [])
  }

  @Test func lengthsPastTheEndAreErrorsNamingTheOffset() {
    #expect(throws: FormatError.nalLengthPastEnd(offset: 0, length: 6)) {
      try nals([0, 0, 0, 6, 0x65, 1], lengthSize: 4)
    }
    #expect(throws: FormatError.nalLengthPastEnd(offset: 6, length: 4)) {
      try nals([0, 0, 0, 2, 0x65, 1, 0, 0], lengthSize: 4)  // a truncated length prefix
    }
    #expect(throws: FormatError.nalLengthPastEnd(offset: 3, length: 0xFFFF)) {
      try nals([0, 1, 0x65, 0xFF, 0xFF, 1], lengthSize: 2)
    }
    #expect(throws: FormatError.nalLengthPastEnd(offset: 0, length: 0xFFFF_FFFF)) {
      try nals([0xFF, 0xFF, 0xFF, 0xFF, 0x65], lengthSize: 4)
    }
  }

  @Test func disposableMeansEverySliceUnreferenced() throws {
    #expect(try disposable(CoreFixtures.disposable()))
    #expect(try !disposable(CoreFixtures.pFrame()))
    #expect(try !disposable(CoreFixtures.idr()))
    // Non-slice NAL units do not count: SEI alone is not disposable, SEI + unreferenced slice is.
    #expect(try !disposable(CoreFixtures.avcc(header: 0x06)))
    #expect(try disposable(CoreFixtures.avcc(header: 0x06) + CoreFixtures.disposable()))
    #expect(try !disposable(CoreFixtures.disposable() + CoreFixtures.avcc(header: 0x21)))
    #expect(try !disposable([]))
    #expect(throws: FormatError.nalLengthPastEnd(offset: 0, length: 9)) {
      try disposable([0, 0, 0, 9, 0x01])
    }
  }

  @Test func randomBytesNeverEscapeTheBuffer() {
    var generator = SeededGenerator(state: 0xA7CC)
    for _ in 0..<20_000 {
      let count = Int.random(in: 0...24, using: &generator)
      let payload = (0..<count).map { _ in
        // Mostly small bytes so that lengths often fit.
        UInt8.random(in: 0...(Bool.random(using: &generator) ? 6 : 255), using: &generator)
      }
      let lengthSize = [1, 2, 4].randomElement(using: &generator)!
      do {
        for nal in try nals(payload, lengthSize: lengthSize) {
          #expect(nal[0] >= lengthSize && nal[1] > 0 && nal[0] + nal[1] <= payload.count)
        }
      } catch {
        guard case FormatError.nalLengthPastEnd(let offset, _) = error else {
          Issue.record("unexpected \(error)")
          continue
        }
        #expect(offset >= 0 && offset < payload.count)
      }
    }
  }
}
