import Testing

@testable import IngestCore

@Suite struct AnnexBTests {
  static let sps: [UInt8] = [0x67, 0x42, 0x00, 0x1E, 0xAB]
  static let pps: [UInt8] = [0x68, 0xCE, 0x38, 0x80]
  static let idr: [UInt8] = [0x65, 0x88, 0x84, 0x00, 0x33]
  static let pSlice: [UInt8] = [0x41, 0x9A, 0x02]
  static let nonReferenceSlice: [UInt8] = [0x01, 0x9E, 0x04]
  static let sei: [UInt8] = [0x06, 0x05, 0x01, 0x80]
  static let startCode: [UInt8] = [0x00, 0x00, 0x00, 0x01]
  static let aud: [UInt8] = [0x00, 0x00, 0x00, 0x01, 0x09, 0xF0]

  static func format(_ lengthSize: Int) -> H264Format {
    try! H264Format(
      profile: 66, compatibility: 0, level: 30, nalLengthSize: lengthSize, sps: [sps], pps: [pps])
  }

  /// Length-prefixes each NAL unit with `lengthSize` big-endian bytes.
  static func avcc(_ nals: [[UInt8]], lengthSize: Int) -> [UInt8] {
    nals.reduce(into: []) { out, nal in
      for shift in stride(from: (lengthSize - 1) * 8, through: 0, by: -8) {
        out.append(UInt8(truncatingIfNeeded: nal.count >> shift))
      }
      out += nal
    }
  }

  static func convert(_ sample: [UInt8], lengthSize: Int, isKeyframe: Bool) throws -> [UInt8] {
    let format = format(lengthSize)
    var out = [UInt8](
      repeating: 0, count: AnnexB.maximumSize(payloadSize: sample.count, format: format))
    let written = try sample.withUnsafeBytes { avcc in
      try out.withUnsafeMutableBytes { buffer in
        try AnnexB.convert(avcc: avcc, format: format, isKeyframe: isKeyframe, into: buffer)
      }
    }
    return Array(out[0..<written])
  }

  static func inspect(_ sample: [UInt8], lengthSize: Int, isKeyframe: Bool) throws
    -> AnnexB.AccessUnitInfo
  {
    try sample.withUnsafeBytes { avcc in
      try AnnexB.inspect(avcc: avcc, format: format(lengthSize), isKeyframe: isKeyframe)
    }
  }

  @Test(arguments: [1, 2, 4])
  func idrGetsAUDAndParameterSets(lengthSize: Int) throws {
    let sample = Self.avcc([Self.sei, Self.idr], lengthSize: lengthSize)
    let expected =
      Self.aud + Self.startCode + Self.sps + Self.startCode + Self.pps + Self.startCode + Self.sei
      + Self.startCode + Self.idr
    #expect(try Self.convert(sample, lengthSize: lengthSize, isKeyframe: true) == expected)
    let info = try Self.inspect(sample, lengthSize: lengthSize, isKeyframe: true)
    #expect(info.size == expected.count)
    #expect(info.insertsParameterSets)
    #expect(info.containsIDR)
    #expect(!info.isDisposable)
  }

  @Test(arguments: [1, 2, 4])
  func idrSliceWithoutKeyframeFlagStillGetsParameterSets(lengthSize: Int) throws {
    let sample = Self.avcc([Self.idr], lengthSize: lengthSize)
    let expected =
      Self.aud + Self.startCode + Self.sps + Self.startCode + Self.pps + Self.startCode + Self.idr
    #expect(try Self.convert(sample, lengthSize: lengthSize, isKeyframe: false) == expected)
  }

  @Test(arguments: [1, 2, 4])
  func sampleCarryingParameterSetsAndAUDKeepsItsOwn(lengthSize: Int) throws {
    let ownSPS: [UInt8] = [0x67, 0x64, 0x00, 0x1F]
    let ownPPS: [UInt8] = [0x68, 0xEB]
    let sample = Self.avcc([[0x09, 0x10], ownSPS, ownPPS, Self.idr], lengthSize: lengthSize)
    // The sample's AUD (primary_pic_type 0) is replaced by ours; no avcC sets are added.
    let expected =
      Self.aud + Self.startCode + ownSPS + Self.startCode + ownPPS + Self.startCode + Self.idr
    #expect(try Self.convert(sample, lengthSize: lengthSize, isKeyframe: true) == expected)
    #expect(
      try !Self.inspect(sample, lengthSize: lengthSize, isKeyframe: true).insertsParameterSets)
  }

  @Test(arguments: [1, 2, 4])
  func nonIDRGetsOnlyAUD(lengthSize: Int) throws {
    let sample = Self.avcc([Self.pSlice], lengthSize: lengthSize)
    #expect(
      try Self.convert(sample, lengthSize: lengthSize, isKeyframe: false)
        == Self.aud + Self.startCode + Self.pSlice)
    #expect(try !Self.inspect(sample, lengthSize: lengthSize, isKeyframe: false).isDisposable)
  }

  @Test func disposableOnlyWhenEveryVCLIsUnreferenced() throws {
    let disposable = Self.avcc(
      [Self.sei, Self.nonReferenceSlice, Self.nonReferenceSlice], lengthSize: 4)
    #expect(try Self.inspect(disposable, lengthSize: 4, isKeyframe: false).isDisposable)
    let mixed = Self.avcc([Self.nonReferenceSlice, Self.pSlice], lengthSize: 4)
    #expect(try !Self.inspect(mixed, lengthSize: 4, isKeyframe: false).isDisposable)
    // No slice at all is not something to drop on its own.
    let noSlice = Self.avcc([Self.sei], lengthSize: 4)
    #expect(try !Self.inspect(noSlice, lengthSize: 4, isKeyframe: false).isDisposable)
  }

  @Test func emptyNALUnitsAreLeftOut() throws {
    let sample = Self.avcc([[], Self.pSlice, []], lengthSize: 2)
    #expect(
      try Self.convert(sample, lengthSize: 2, isKeyframe: false) == Self.aud + Self.startCode
        + Self.pSlice)
  }

  @Test(arguments: [1, 2, 4])
  func lengthPastTheEndThrows(lengthSize: Int) {
    var sample = Self.avcc([Self.sei, Self.pSlice], lengthSize: lengthSize)
    sample.removeLast()  // the slice now claims one byte more than is left
    let sliceOffset = lengthSize + Self.sei.count
    #expect(throws: FormatError.nalLengthPastEnd(offset: sliceOffset, length: Self.pSlice.count)) {
      try Self.convert(sample, lengthSize: lengthSize, isKeyframe: false)
    }
  }

  @Test func cutOffLengthPrefixThrows() {
    let sample = Self.avcc([Self.pSlice], lengthSize: 4) + [0x00, 0x00]
    #expect(throws: FormatError.nalLengthPastEnd(offset: 7, length: 4)) {
      try Self.inspect(sample, lengthSize: 4, isKeyframe: false)
    }
  }

  @Test func hugeClaimedLengthThrowsWithoutAllocating() {
    let sample: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF, 0x41]
    #expect(throws: FormatError.nalLengthPastEnd(offset: 0, length: 0xFFFF_FFFF)) {
      try Self.inspect(sample, lengthSize: 4, isKeyframe: false)
    }
  }

  @Test(arguments: [1, 2, 4])
  func maximumSizeBoundsWorstCase(lengthSize: Int) throws {
    // Many one-byte NAL units grow the most.
    let sample = Self.avcc(Array(repeating: [0x41], count: 50), lengthSize: lengthSize) + [0x00]
    let format = Self.format(lengthSize)
    let bound = AnnexB.maximumSize(payloadSize: sample.count, format: format)
    let trimmed = Array(sample.dropLast())
    let size = try Self.inspect(trimmed, lengthSize: lengthSize, isKeyframe: true).size
    #expect(size <= bound)
    #expect(size == 6 + 4 + Self.sps.count + 4 + Self.pps.count + 50 * 5)
  }
}
