import Testing

@testable import IngestRTMP

/// The framing of FLV tags: the 11-byte header, the PreviousTagSize, the file header.
@Suite struct FLVTagHeaderTests {
  /// A timestamp past 24 bits goes into the extended byte, which comes after the low 24 bits.
  @Test func headerCarriesTypeSizeAndSplitTimestamp() {
    var bytes: [UInt8] = []
    FLVTagHeader.append(type: .video, bodySize: 0x01_0203, timestamp: 0x1234_5678, to: &bytes)
    #expect(bytes == [9, 0x01, 0x02, 0x03, 0x34, 0x56, 0x78, 0x12, 0, 0, 0])
    var trailer: [UInt8] = []
    FLVTagHeader.appendTrailer(bodySize: 0x01_0203, to: &trailer)
    #expect(trailer == [0x00, 0x01, 0x02, 0x0E])
  }

  @Test func fileHeaderFlagsTheTracksAndEndsWithPreviousTagSizeZero() {
    #expect(
      FLVTagHeader.fileHeader(audio: true, video: true)
        == [0x46, 0x4C, 0x56, 1, 0x05, 0, 0, 0, 9, 0, 0, 0, 0])
    #expect(FLVTagHeader.fileHeader(audio: false, video: true)[4] == 0x01)
    #expect(FLVTagHeader.fileHeader(audio: true, video: false)[4] == 0x04)
  }

  /// A whole tag: header, codec header, payload, and 11 + body size after it.
  @Test func writerFramesAPayloadWithoutCopyingIt() {
    var writer = FLVTagWriter()
    let header = FLVAudioTagHeader(packet: .codedFrames, trackID: nil)
    let framed = writer.frame(audio: header, payloadSize: 3, timestamp: 21)
    #expect(framed)
    #expect(writer.head == [8, 0, 0, 5, 0, 0, 21, 0, 0, 0, 0, 0xAF, 0x01])
    #expect(writer.tail == [0, 0, 0, 16])
    #expect(writer.tag(with: [1, 2, 3]) == writer.head + [1, 2, 3] + writer.tail)
  }

  /// DataSize is 24 bits: a body one byte larger is refused, not truncated.
  @Test func oversizedBodyIsRefused() {
    var writer = FLVTagWriter()
    let header = FLVVideoTagHeader(
      codec: .hevc, packet: .codedFrames(compositionTime: 0), isKeyframe: true)
    let largest = writer.frame(
      video: header, payloadSize: FLVTagHeader.maximumBodySize - header.size, timestamp: 0)
    let tooLarge = writer.frame(
      video: header, payloadSize: FLVTagHeader.maximumBodySize - header.size + 1, timestamp: 0)
    #expect(largest && !tooLarge)
  }
}
