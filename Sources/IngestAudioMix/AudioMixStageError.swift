/// Why the audio mix could not start or lost a frame: what failed, where, and libav's reason.
public enum AudioMixStageError: Error, Equatable, Sendable, CustomStringConvertible {
  /// libavcodec could not be loaded: what to install.
  case libraryUnavailable(String)
  /// libavcodec has no codec for `what` ("AAC decoder", "AAC encoder").
  case codecMissing(String)
  /// A libav call failed: the step (`"opening the app decoder"`), and libav's message.
  case libav(step: String, message: String)
  /// A track format the mix cannot take: which track and why.
  case format(track: String, reason: String)

  public var description: String {
    switch self {
    case .libraryUnavailable(let message): "audio mix: \(message)"
    case .codecMissing(let what): "audio mix: libavcodec has no \(what)"
    case .libav(let step, let message): "audio mix: \(step) failed: \(message)"
    case .format(let track, let reason): "audio mix: the \(track) track \(reason)"
    }
  }
}
