/// One of the two PCM tracks an `AudioMixer` mixes.
public enum AudioMixInput: Int, Sendable, CaseIterable, CustomStringConvertible {
  /// The app's audio (`SampleKind.audioApp`): its rate and channels are the mix's.
  case app = 0
  /// The microphone (`SampleKind.audioMic`): muted in the mix at the ladder's mic tier.
  case mic = 1

  /// The input that mixes the samples of `kind`, nil for video.
  public init?(_ kind: SampleKind) {
    switch kind {
    case .audioApp: self = .app
    case .audioMic: self = .mic
    case .video: return nil
    }
  }

  public var description: String { self == .app ? "app" : "mic" }
}
