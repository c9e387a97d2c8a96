/// A step of the degradation ladder. Higher tiers shed more.
public enum Tier: Int, Comparable, Sendable, CaseIterable, CustomStringConvertible {
  /// Everything flows.
  case normal = 0
  /// The encoder is asked for a lower bitrate.
  case reducedBitrate = 1
  /// The encoder is asked for a lower frame rate; disposable frames are dropped on arrival.
  case reducedFrameRate = 2
  /// Microphone audio is no longer accepted.
  case noMic = 3
  /// Only video keyframes are accepted.
  case keyframesOnly = 4

  public static func < (a: Tier, b: Tier) -> Bool { a.rawValue < b.rawValue }

  public var description: String { "T\(rawValue)" }

  /// The name used in status events.
  public var name: String {
    switch self {
    case .normal: "normal"
    case .reducedBitrate: "reducedBitrate"
    case .reducedFrameRate: "reducedFrameRate"
    case .noMic: "noMic"
    case .keyframesOnly: "keyframesOnly"
    }
  }
}
