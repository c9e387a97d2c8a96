/// The video codec `ingest-encode` encodes with (`--codec`).
public enum VideoCodec: String, CaseIterable, Equatable, Sendable {
  /// H.264 through libx264.
  case h264
  /// HEVC through libx265.
  case hevc

  /// The libavcodec encoder.
  var encoderName: String { self == .h264 ? "libx264" : "libx265" }

  /// What the encoder is called in messages.
  var displayName: String { self == .h264 ? "H.264 encoder" : "HEVC encoder" }
}
