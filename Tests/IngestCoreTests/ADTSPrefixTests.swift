import Testing

@testable import IngestCore

@Suite struct ADTSPrefixTests {
  let format = CoreFixtures.app

  /// A raw frame behind the header our own packetizer writes.
  func wrapped(_ raw: [UInt8], format: AACFormat) throws -> [UInt8] {
    try ADTSHeader(format: format, payloadSize: raw.count).bytes + raw
  }

  @Test func parsesTheHeaderThePacketizerWrites() throws {
    let frame = try wrapped([0x21, 0x10, 0x05], format: format)
    let prefix = try #require(frame.withUnsafeBytes { ADTSPrefix(parsing: $0) })
    #expect(prefix.headerSize == 7)
    #expect(prefix.frameLength == 10)
    #expect(prefix.objectType == 2 && prefix.sampleRateIndex == 3 && prefix.channels == 2)
    try prefix.validate(against: format)
  }

  @Test func aProtectedHeaderIsNineBytes() throws {
    var frame = try wrapped([0x21, 0x10, 0x05, 0, 0], format: format)
    // protection_absent 0: a 16-bit CRC follows the 7 bytes (here the two extra bytes).
    frame[1] &= 0xFE
    let prefix = try #require(frame.withUnsafeBytes { ADTSPrefix(parsing: $0) })
    #expect(prefix.headerSize == 9)
  }

  @Test func aRawFrameIsNotTakenForAHeader() {
    let raw: [UInt8] = [0x21, 0x10, 0x05, 0x00, 0xA0, 0x1C, 0x00, 0x00]
    #expect(raw.withUnsafeBytes { ADTSPrefix(parsing: $0) } == nil)
    // The syncword, but a frame_length other than the sample's size.
    var framed = (try? wrapped([0x21, 0x10, 0x05], format: format)) ?? []
    framed.append(0)
    #expect(framed.withUnsafeBytes { ADTSPrefix(parsing: $0) } == nil)
  }

  @Test func aHeaderForAnotherStreamNamesBothValues() throws {
    let other = try AACFormat(objectType: 2, sampleRate: 44100, channels: 2)
    let frame = try wrapped([0x21, 0x10, 0x05], format: other)
    let prefix = try #require(frame.withUnsafeBytes { ADTSPrefix(parsing: $0) })
    #expect(
      throws: FormatError.adtsConfigurationMismatch(
        field: "sampling frequency index", header: 4, config: 3)
    ) { try prefix.validate(against: format) }
    let error = FormatError.adtsConfigurationMismatch(
      field: "sampling frequency index", header: 4, config: 3)
    #expect(
      error.description
        == "ADTS header says sampling frequency index 4, the track's AudioSpecificConfig says 3")
  }

  @Test func moreThanOneRawBlockIsRefused() throws {
    var frame = try wrapped([0x21, 0x10, 0x05], format: format)
    frame[6] |= 0x01
    let prefix = try #require(frame.withUnsafeBytes { ADTSPrefix(parsing: $0) })
    #expect(throws: FormatError.adtsRawDataBlocks(2)) { try prefix.validate(against: format) }
  }
}
