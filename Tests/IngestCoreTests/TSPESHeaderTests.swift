import Testing

@testable import IngestCore

@Suite struct TSPESHeaderTests {
  static func timestamp(_ ticks: Int64, prefix: UInt8 = 0b0010) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: 5)
    bytes.withUnsafeMutableBytes { PESHeader.writeTimestamp(ticks, prefix: prefix, to: $0, at: 0) }
    return bytes
  }

  static func header(_ header: PESHeader, payloadSize: Int) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: header.size)
    bytes.withUnsafeMutableBytes { header.write(to: $0, at: 0, payloadSize: payloadSize) }
    return bytes
  }

  @Test func timestampLayout() {
    // 0010 | 000 | 1   0000 0000   0000 010 | 1   1011 1111   0010 000 | 1
    // 90000 = 0x15F90: bits 29-15 = 0x0002, bits 14-0 = 0x5F90.
    #expect(Self.timestamp(90_000) == [0x21, 0x00, 0x05, 0xBF, 0x21])
    #expect(Self.timestamp(0) == [0x21, 0x00, 0x01, 0x00, 0x01])
    // All 33 bits set: every bit of every field plus the markers.
    #expect(Self.timestamp(1 << 33 - 1) == [0x2F, 0xFF, 0xFF, 0xFF, 0xFF])
    #expect(Self.timestamp(1 << 32) == [0x29, 0x00, 0x01, 0x00, 0x01])
  }

  @Test func timestampsWrapModulo2To33() {
    #expect(Self.timestamp(1 << 33) == Self.timestamp(0))
    #expect(Self.timestamp(1 << 33 + 12_345) == Self.timestamp(12_345))
    #expect(Self.timestamp(3 << 33 + 7) == Self.timestamp(7))
    #expect(Self.timestamp(-1) == Self.timestamp(1 << 33 - 1))
    #expect(PESHeader.wrap(1 << 33 + 5) == 5)
  }

  @Test(arguments: [0, 1, 90_000, 1 << 32, 1 << 33 - 1, 1 << 33, 1 << 40 + 999] as [Int64])
  func timestampRoundTrip(_ ticks: Int64) {
    let bytes = Self.timestamp(ticks)
    let read = bytes.withUnsafeBytes { PESHeader.readTimestamp($0, at: 0) }
    #expect(read == PESHeader.wrap(ticks))
  }

  @Test func prefixesSelectPTSOnlyOrPTSAndDTS() {
    #expect(Self.timestamp(0, prefix: 0b0011)[0] == 0x31)
    #expect(Self.timestamp(0, prefix: 0b0001)[0] == 0x11)
  }

  @Test func audioHeaderPTSOnly() {
    let header = PESHeader(streamID: PESHeader.audioStreamID, pts: 90_000)
    #expect(header.size == 14)
    #expect(
      Self.header(header, payloadSize: 107) == [
        0x00, 0x00, 0x01, 0xC0,  // start code, stream_id audio
        0x00, 0x73,  // PES_packet_length 115 = 8 header bytes after the length field + 107
        0x84,  // '10', data_alignment_indicator
        0x80,  // PTS_DTS_flags '10'
        0x05,  // PES_header_data_length
        0x21, 0x00, 0x05, 0xBF, 0x21,  // PTS 90000, prefix '0010'
      ])
  }

  @Test func videoHeaderWithDTS() {
    let header = PESHeader(streamID: PESHeader.videoStreamID, pts: 93_000, dts: 90_000)
    #expect(header.size == 19)
    let bytes = Self.header(header, payloadSize: 1000)
    #expect(Array(bytes[0..<9]) == [0x00, 0x00, 0x01, 0xE0, 0x03, 0xF5, 0x84, 0xC0, 0x0A])
    #expect(Array(bytes[9..<14]) == Self.timestamp(93_000, prefix: 0b0011))
    #expect(Array(bytes[14..<19]) == Self.timestamp(90_000, prefix: 0b0001))
  }

  @Test func dtsEqualToPTSIsLeftOut() {
    #expect(PESHeader(streamID: 0xE0, pts: 5, dts: 5).dts == nil)
    // Equal modulo 2^33 is equal on the wire.
    #expect(PESHeader(streamID: 0xE0, pts: 5, dts: 1 << 33 + 5).dts == nil)
    let bytes = Self.header(PESHeader(streamID: 0xE0, pts: 5, dts: 5), payloadSize: 0)
    #expect(bytes[7] == 0x80)
    #expect(bytes[8] == 5)
  }

  @Test func oversizedVideoPESHasUnboundedLength() {
    let header = PESHeader(streamID: PESHeader.videoStreamID, pts: 0)
    #expect(header.packetLength(payloadSize: 65_535 - 8) == 65_535)
    #expect(header.packetLength(payloadSize: 65_535 - 7) == 0)
    let bytes = Self.header(header, payloadSize: 100_000)
    #expect(bytes[4] == 0 && bytes[5] == 0)
  }
}
