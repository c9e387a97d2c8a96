import Testing

@testable import IngestRTMP

/// The video tag headers' bytes: legacy AVC (FLV 10.1, E.4.3.1) and the Enhanced RTMP extended
/// header for HEVC (IsExHeader, VideoFrameType, VideoPacketType, FourCC `hvc1`, SI24).
@Suite struct FLVVideoTagHeaderTests {
  static let hvc1: [UInt8] = [0x68, 0x76, 0x63, 0x31]

  static func bytes(_ header: FLVVideoTagHeader) -> [UInt8] {
    var bytes: [UInt8] = []
    header.append(to: &bytes)
    #expect(bytes.count == header.size)
    return bytes
  }

  @Test func legacyAVCHeaders() {
    #expect(
      Self.bytes(.init(codec: .avc, packet: .sequenceStart, isKeyframe: true))
        == [0x17, 0x00, 0, 0, 0])
    #expect(
      Self.bytes(.init(codec: .avc, packet: .codedFrames(compositionTime: 0x42), isKeyframe: true))
        == [0x17, 0x01, 0, 0, 0x42])
    #expect(
      Self.bytes(.init(codec: .avc, packet: .codedFrames(compositionTime: 67), isKeyframe: false))
        == [0x27, 0x01, 0, 0, 67])
    #expect(
      Self.bytes(.init(codec: .avc, packet: .sequenceEnd, isKeyframe: true))
        == [0x17, 0x02, 0, 0, 0])
  }

  /// Byte 0: IsExHeader (0x80) | VideoFrameType << 4 | VideoPacketType; then the FourCC.
  @Test func extendedHEVCSequenceStartAndEnd() {
    #expect(
      Self.bytes(.init(codec: .hevc, packet: .sequenceStart, isKeyframe: true))
        == [0x90] + Self.hvc1)
    #expect(
      Self.bytes(.init(codec: .hevc, packet: .sequenceEnd, isKeyframe: true))
        == [0x92] + Self.hvc1)
  }

  /// CodedFrames (1) with the composition time offset after the FourCC: key frame 0x91, inter
  /// frame 0xA1; never CodedFramesX (3), even for an offset of 0.
  @Test func extendedHEVCCodedFramesCarryTheCompositionTime() {
    #expect(
      Self.bytes(.init(codec: .hevc, packet: .codedFrames(compositionTime: 66), isKeyframe: true))
        == [0x91] + Self.hvc1 + [0, 0, 66])
    #expect(
      Self.bytes(.init(codec: .hevc, packet: .codedFrames(compositionTime: 0), isKeyframe: false))
        == [0xA1] + Self.hvc1 + [0, 0, 0])
    #expect(
      Self.bytes(
        .init(codec: .hevc, packet: .codedFrames(compositionTime: 0x01_0203), isKeyframe: false))
        == [0xA1] + Self.hvc1 + [0x01, 0x02, 0x03])
  }

  /// SI24 is two's complement.
  @Test func negativeCompositionTimeIsTwosComplement() {
    #expect(
      Self.bytes(.init(codec: .hevc, packet: .codedFrames(compositionTime: -1), isKeyframe: false))
        .suffix(3) == [0xFF, 0xFF, 0xFF])
    #expect(
      Self.bytes(.init(codec: .avc, packet: .codedFrames(compositionTime: -2), isKeyframe: false))
        .suffix(3) == [0xFF, 0xFF, 0xFE])
  }

  @Test func fourCCIsTheASCIIBytesBigEndian() {
    #expect(FLVFourCC.hevc.value == 0x6876_6331)
    #expect(FLVFourCC.hevc.number == 1_752_589_105)
    #expect(FLVFourCC.aac.value == 0x6D70_3461)
  }
}
