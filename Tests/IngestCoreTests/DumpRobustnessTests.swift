import Testing

@testable import IngestCore

@Suite struct DumpRobustnessTests {
  @Test func everyPrefixEndsCleanlyOrWithATypedError() throws {
    let (bytes, boundaries) = try DumpFixtures.smallDump()
    for length in 0...bytes.count {
      let outcome = DumpFixtures.readAll(Array(bytes[..<length]))
      if boundaries.contains(length) {
        #expect(outcome.cleanEnd, "prefix \(length) ends on a record boundary")
        #expect(outcome.errors.isEmpty, "prefix \(length)")
      } else {
        #expect(!outcome.cleanEnd, "prefix \(length)")
        let last = try #require(outcome.errors.last, "prefix \(length)")
        let recordStart = boundaries.last { $0 <= length } ?? 0
        #expect(
          last == .truncated(offset: Int64(recordStart > 0 ? recordStart : 0)), "prefix \(length)")
      }
    }
  }

  @Test func randomByteFlipsNeverGoUnnoticed() throws {
    let (bytes, _) = try DumpFixtures.smallDump()
    let clean = DumpFixtures.readAll(bytes)
    var generator = SeededGenerator(state: 0x1234_5678)
    for _ in 0..<2000 {
      var corrupt = bytes
      let flips = Int.random(in: 1...3, using: &generator)
      var touched: [Int] = []
      for _ in 0..<flips {
        let index = Int.random(in: 0..<corrupt.count, using: &generator)
        corrupt[index] ^= UInt8.random(in: 1...255, using: &generator)
        touched.append(index)
      }
      let outcome = DumpFixtures.readAll(corrupt)
      let onlyReserved = touched.allSatisfy { (10..<12).contains($0) }
      if onlyReserved {
        // The reserved header bytes are ignored by readers of version 1.
        #expect(outcome.records == clean.records)
      } else {
        #expect(!outcome.errors.isEmpty, "flips at \(touched)")
        #expect(!outcome.cleanEnd || outcome.errors.allSatisfy(\.isRecoverable))
      }
      #expect(outcome.maxBufferCapacity <= 2 * bytes.count + DumpReader<MemorySource>.readChunk)
    }
  }

  @Test func fatalErrorsRepeatAndRecoverableOnesSkipOneRecord() throws {
    let (bytes, boundaries) = try DumpFixtures.smallDump()
    var corrupt = bytes
    corrupt[boundaries[4] + 8] ^= 0x01
    var reader = DumpReader(source: MemorySource(corrupt))
    for _ in 0..<4 { _ = try reader.next() }
    let error = #expect(throws: DumpError.self) { try reader.next() }
    #expect(error == .crcMismatch(offset: Int64(boundaries[4]), recordType: 2))
    #expect(throws: error!) { try reader.next() }
  }

  @Test func lengthAboveTheMaximumIsRejectedBeforeReading() throws {
    var bytes = try DumpWriter(sink: MemorySink()).sink.bytes
    let size = DumpFormat.maximumPayloadSize + 1
    bytes += [2, UInt8(size & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size >> 16 & 0xFF), 0]
    bytes += [UInt8](repeating: 0, count: 100)
    var reader = DumpReader(source: MemorySource(bytes))
    #expect(throws: DumpError.recordTooLarge(offset: 12, size: size)) { try reader.next() }
    // One block was read; nothing was sized by the bad length.
    #expect(reader.bufferCapacity <= DumpReader<MemorySource>.readChunk + 8192)  // + malloc rounding
  }

  @Test func maximumLengthOnShortInputAllocatesOnlyWhatArrived() throws {
    var bytes = try DumpWriter(sink: MemorySink()).sink.bytes
    let size = DumpFormat.maximumPayloadSize
    bytes += [2, UInt8(size & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size >> 16 & 0xFF), 0]
    bytes += [UInt8](repeating: 0, count: 100)
    var reader = DumpReader(source: MemorySource(bytes))
    #expect(throws: DumpError.truncated(offset: 12)) { try reader.next() }
    #expect(reader.bufferCapacity <= DumpReader<MemorySource>.readChunk + 8192)  // + malloc rounding
  }

  @Test func nalLengthPastTheSampleIsATypedRecoverableError() throws {
    var writer = try DumpWriter(sink: MemorySink())
    try writer.writeFormat(.h264(DumpFixtures.h264), for: .video)
    let badOffset = writer.offset
    var payload = DumpFixtures.videoPayload(3, nalSizes: [4, 6])
    payload[11] = 100  // second NAL claims 100 bytes, 6 remain
    try writeRawSample(&writer, kind: 0, timescale: 30, payload: payload)
    try writer.writeSample(
      MediaSample(
        kind: .video, pts: MediaTime(value: 1, timescale: 30), isKeyframe: false,
        payload: DumpFixtures.videoPayload(4)))
    var reader = DumpReader(source: MemorySource(writer.sink.bytes))
    _ = try reader.next()
    #expect(throws: DumpError.format(offset: badOffset, .nalLengthPastEnd(offset: 8, length: 100)))
    {
      try reader.next()
    }
    guard case .sample(let header) = try reader.next() else {
      Issue.record("the sample after the bad one should be readable")
      return
    }
    #expect(header.pts == MediaTime(value: 1, timescale: 30))
  }

  @Test func zeroTimescaleIsRecoverable() throws {
    var writer = try DumpWriter(sink: MemorySink())
    try writer.writeFormat(.aac(DumpFixtures.app), for: .audioApp)
    let badOffset = writer.offset
    try writeRawSample(&writer, kind: 1, timescale: 0, payload: [1, 2, 3])
    try writer.writeSample(DumpFixtures.samples[1])
    var reader = DumpReader(source: MemorySource(writer.sink.bytes))
    _ = try reader.next()
    #expect(throws: DumpError.invalidTimestamp(offset: badOffset)) { try reader.next() }
    #expect(try reader.next() != nil)
    #expect(try reader.next() == nil)
  }

  @Test func unknownKindAndSampleBeforeFormatAreRecoverable() throws {
    var writer = try DumpWriter(sink: MemorySink())
    let first = writer.offset
    try writeRawSample(&writer, kind: 7, timescale: 30, payload: [1])
    let second = writer.offset
    try writeRawSample(&writer, kind: 2, timescale: 30, payload: [1])
    let outcome = DumpFixtures.readAll(writer.sink.bytes)
    #expect(
      outcome.errors == [
        .unknownKind(offset: first, kind: 7), .missingFormat(offset: second, kind: .audioMic),
      ])
    #expect(outcome.cleanEnd)
  }

  @Test func badMagicAndVersion() throws {
    var bytes = try DumpWriter(sink: MemorySink()).sink.bytes
    bytes[8] = 2
    #expect(DumpFixtures.readAll(bytes).errors == [.unsupportedVersion(2)])
    #expect(DumpFixtures.readAll(Array("GIF89a".utf8)).errors == [.badMagic])
    #expect(DumpFixtures.readAll([]).errors == [.truncated(offset: 0)])
  }

  @Test func writerRejectsWhatTheReaderWould() throws {
    var writer = try DumpWriter(sink: MemorySink())
    #expect(throws: DumpError.missingFormat(offset: 12, kind: .video)) {
      try writer.writeSample(DumpFixtures.samples[0])
    }
    try writer.writeFormat(.h264(DumpFixtures.h264), for: .video)
    var bad = DumpFixtures.samples[0]
    bad.payload.removeLast()
    #expect(throws: DumpError.self) { try writer.writeSample(bad) }
    var zero = DumpFixtures.samples[0]
    zero.dts = MediaTime(value: 5, timescale: 0)
    #expect(throws: DumpError.invalidTimestamp(offset: writer.offset)) {
      try writer.writeSample(zero)
    }
    #expect(throws: DumpError.self) { try writer.writeFormat(.aac(DumpFixtures.app), for: .video) }
    #expect(DumpFixtures.readAll(writer.sink.bytes).records.count == 1)
  }

  /// Writes a sample record bypassing the writer's checks.
  private func writeRawSample(
    _ writer: inout DumpWriter<MemorySink>, kind: UInt8, timescale: Int32, payload: [UInt8]
  ) throws {
    var body: [UInt8] = [kind, 1]
    withUnsafeBytes(of: Int64(0).littleEndian) { body += $0 }
    withUnsafeBytes(of: timescale.littleEndian) { body += $0 }
    body += [UInt8](repeating: 0, count: 12)
    body += payload
    try body.withUnsafeBytes { try writer.writeRawRecord(type: 2, payload: $0) }
  }
}
