/// The bytes that open a video tag's body, before the codec's data: a legacy AVC header for
/// H.264, an E-RTMP v1 extended header (`ExVideoTagHeader`) with the FourCC `hvc1` for HEVC.
///
/// Legacy AVC (FLV 10.1, E.4.3.1), 5 bytes:
/// ```
/// UB[4] FrameType (1 key, 2 inter) | UB[4] CodecID 7
/// UI8   AVCPacketType: 0 sequence header (avcC follows), 1 NALUs, 2 end of sequence
/// SI24  CompositionTime: pts - dts in milliseconds (0 unless NALUs)
/// ```
/// E-RTMP extended (Enhanced RTMP, "Enhanced Video"), 5 bytes, and 3 more for coded frames:
/// ```
/// UB[1] IsExHeader 1 | UB[3] VideoFrameType (1 key, 2 inter) | UB[4] VideoPacketType
///       (0 SequenceStart: hvcC follows; 1 CodedFrames; 2 SequenceEnd: nothing follows)
/// FOURCC VideoFourCc 'hvc1'
/// SI24  CompositionTimeOffset, CodedFrames only: pts - dts in milliseconds
/// ```
/// Coded frames always go as `CodedFrames` with their offset, never as `CodedFramesX` (the
/// offset left out when zero): three bytes a frame buy every reader one path.
struct FLVVideoTagHeader: Equatable, Sendable {
  /// How the codec is signalled.
  enum Codec: Equatable, Sendable {
    /// H.264 in a legacy tag (CodecID 7).
    case avc
    /// HEVC in an extended tag (FourCC `hvc1`).
    case hevc

    /// Whether the tag is an E-RTMP extended one.
    var isEnhanced: Bool { self == .hevc }
  }

  /// What the tag carries.
  enum Packet: Equatable, Sendable {
    /// The decoder configuration record (avcC, hvcC).
    case sequenceStart
    /// One access unit, with its composition time offset in milliseconds (SI24).
    case codedFrames(compositionTime: Int32)
    /// The stream ends: no data follows.
    case sequenceEnd
  }

  var codec: Codec
  var packet: Packet
  /// A keyframe (IDR/IRAP) or a configuration; an inter frame otherwise.
  var isKeyframe: Bool

  /// The header's size in bytes.
  var size: Int {
    switch (codec, packet) {
    case (.avc, _): 5
    case (.hevc, .codedFrames): 8
    case (.hevc, _): 5
    }
  }

  /// Appends the header's bytes.
  func append(to bytes: inout [UInt8]) {
    let frameType: UInt8 = isKeyframe ? 1 : 2
    switch codec {
    case .avc:
      bytes.append(frameType << 4 | 7)
      switch packet {
      case .sequenceStart:
        bytes.append(0)
        bytes.appendSigned24(0)
      case .codedFrames(let compositionTime):
        bytes.append(1)
        bytes.appendSigned24(compositionTime)
      case .sequenceEnd:
        bytes.append(2)
        bytes.appendSigned24(0)
      }
    case .hevc:
      let packetType: UInt8
      switch packet {
      case .sequenceStart: packetType = 0
      case .codedFrames: packetType = 1
      case .sequenceEnd: packetType = 2
      }
      bytes.append(0x80 | frameType << 4 | packetType)
      bytes.appendBigEndian(UInt64(FLVFourCC.hevc.value), count: 4)
      if case .codedFrames(let compositionTime) = packet { bytes.appendSigned24(compositionTime) }
    }
  }
}
