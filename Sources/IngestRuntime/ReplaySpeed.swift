/// How fast a dump is replayed.
public enum ReplaySpeed: Equatable, Sendable, CustomStringConvertible {
  /// As fast as the pipeline takes samples (the sink may still be paced by its link).
  case max
  /// Paced by timestamps, `factor` times faster than real time (1 is realtime).
  case factor(Double)

  /// Parses `realtime`, `max` or a positive number.
  public init?(_ text: String) {
    switch text {
    case "realtime": self = .factor(1)
    case "max": self = .max
    default:
      guard let value = Double(text), value.isFinite, value > 0, value <= 1000 else { return nil }
      self = .factor(value)
    }
  }

  public var description: String {
    switch self {
    case .max: "max"
    case .factor(1): "realtime"
    case .factor(let value): "\(value)x"
    }
  }
}
