/// The codec configuration of one track, as the encoder announced it.
public enum FormatDescription: Hashable, Sendable {
  /// H.264 video with its avcC-derived parameters.
  case h264(H264Format)
  /// AAC audio with its AudioSpecificConfig-derived parameters.
  case aac(AACFormat)
}
