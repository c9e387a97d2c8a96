import Testing

@testable import IngestRTMP

/// The audio tag headers' bytes: legacy AAC for the default track, and the E-RTMP v2
/// multitrack header (SoundFormat 9 ExHeader, AudioPacketType 5 Multitrack, AvMultitrackType 0
/// OneTrack, the track's packet type, FourCC `mp4a`, track id) for another.
@Suite struct FLVAudioTagHeaderTests {
  static let mp4a: [UInt8] = [0x6D, 0x70, 0x34, 0x61]

  static func bytes(_ header: FLVAudioTagHeader) -> [UInt8] {
    var bytes: [UInt8] = []
    header.append(to: &bytes)
    #expect(bytes.count == header.size)
    return bytes
  }

  @Test func legacyAACHeaders() {
    #expect(Self.bytes(.init(packet: .sequenceStart, trackID: nil)) == [0xAF, 0x00])
    #expect(Self.bytes(.init(packet: .codedFrames, trackID: nil)) == [0xAF, 0x01])
  }

  @Test func multitrackHeadersNameTheTrack() {
    #expect(
      Self.bytes(.init(packet: .sequenceStart, trackID: 1)) == [0x95, 0x00] + Self.mp4a + [1])
    #expect(Self.bytes(.init(packet: .codedFrames, trackID: 1)) == [0x95, 0x01] + Self.mp4a + [1])
    #expect(Self.bytes(.init(packet: .codedFrames, trackID: 7)).last == 7)
  }
}
