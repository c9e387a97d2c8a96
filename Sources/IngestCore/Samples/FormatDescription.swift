/// The codec configuration of one track, as the encoder announced it.
public enum FormatDescription: Hashable, Sendable {
  /// H.264 video with its avcC-derived parameters.
  case h264(H264Format)
  /// AAC audio with its AudioSpecificConfig-derived parameters.
  case aac(AACFormat)
  /// HEVC video with its hvcC-derived parameters.
  case hevc(HEVCFormat)

  /// The video configuration this describes, or nil for audio.
  public var video: VideoFormat? {
    switch self {
    case .h264(let format): .h264(format)
    case .hevc(let format): .hevc(format)
    case .aac: nil
    }
  }
}
