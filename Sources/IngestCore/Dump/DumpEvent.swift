/// A timeline event recorded alongside the samples.
public enum DumpEvent: Hashable, Sendable {
  /// The system interrupted an audio track (a phone call, Siri): its clock may jump afterwards.
  case audioInterruptionBegan(SampleKind, at: MediaTime)
  /// The audio track resumed; `at` is on the track's clock after the interruption.
  case audioInterruptionEnded(SampleKind, at: MediaTime)

  /// Event codes as stored in the dump.
  public enum Code: UInt8, Sendable {
    case audioInterruptionBegan = 1
    case audioInterruptionEnded = 2
  }

  /// The stored code of this event.
  public var code: Code {
    switch self {
    case .audioInterruptionBegan: .audioInterruptionBegan
    case .audioInterruptionEnded: .audioInterruptionEnded
    }
  }

  /// The track the event concerns.
  public var kind: SampleKind {
    switch self {
    case .audioInterruptionBegan(let kind, _), .audioInterruptionEnded(let kind, _): kind
    }
  }

  /// When the event happened, on the track's clock.
  public var time: MediaTime {
    switch self {
    case .audioInterruptionBegan(_, let time), .audioInterruptionEnded(_, let time): time
    }
  }
}
