import Testing

@testable import IngestCore

@Suite struct ADTSHeaderTests {
  @Test func stereo48k() throws {
    let format = try AACFormat(objectType: 2, sampleRate: 48000, channels: 2)
    let header = try ADTSHeader(format: format, payloadSize: 100)
    #expect(header.frameLength == 107)
    // FFF sync, ID 0, layer 00, protection_absent 1            -> FF F1
    // profile 01 (LC) | index 0011 (48k) | private 0 | ch 0..   -> 0100 1100 = 4C
    // ch ..10 | 0000 | length 107 = 0 0000 0110 1011           -> 1000 0000 = 80
    // length bits 10-3 = 0000 1101                             -> 0D
    // length bits 2-0 011 | fullness 11111                     -> 0111 1111 = 7F
    // fullness 111111 | raw blocks 00                          -> FC
    #expect(header.bytes == [0xFF, 0xF1, 0x4C, 0x80, 0x0D, 0x7F, 0xFC])
  }

  @Test func mono44k() throws {
    let format = try AACFormat(objectType: 2, sampleRate: 44100, channels: 1)
    let header = try ADTSHeader(format: format, payloadSize: 200)
    // profile 01 | index 0100 (44.1k) | 0 | ch 0 -> 0101 0000 = 50
    // ch 01 | 0000 | length 207 = 0 0000 1100 1111 -> 0100 0000 = 40; 0001 1001 = 19
    // length 111 | 11111 -> FF
    #expect(header.bytes == [0xFF, 0xF1, 0x50, 0x40, 0x19, 0xFF, 0xFC])
  }

  @Test func frameLengthLimitIs13Bits() throws {
    let format = try AACFormat(objectType: 2, sampleRate: 48000, channels: 2)
    let largest = try ADTSHeader(format: format, payloadSize: 8184)
    #expect(largest.frameLength == 0x1FFF)
    #expect(Array(largest.bytes[3...5]) == [0x83, 0xFF, 0xFF])
    #expect(throws: FormatError.aacFrameTooLarge(8185)) {
      try ADTSHeader(format: format, payloadSize: 8185)
    }
  }

  @Test func writesAtOffset() throws {
    let format = try AACFormat(objectType: 2, sampleRate: 48000, channels: 2)
    let header = try ADTSHeader(format: format, payloadSize: 0)
    var buffer = [UInt8](repeating: 0xAA, count: 10)
    buffer.withUnsafeMutableBytes { header.write(to: $0, at: 2) }
    #expect(Array(buffer[0..<2]) == [0xAA, 0xAA])
    #expect(Array(buffer[2..<9]) == header.bytes)
    #expect(buffer[9] == 0xAA)
  }
}
