/// Why a sample's timestamps could not be placed on the 90 kHz timeline.
public enum TimelineError: Error, Equatable, Sendable, CustomStringConvertible {
  /// A timescale of zero or below (CMTime's "invalid").
  case invalidTimescale(SampleKind, MediaTime)
  /// The time is so far from the shared base that its distance does not fit in 64 bits of ticks.
  case outOfRange(SampleKind, MediaTime)
  /// A sample of a coarse audio clock (several frames on one value of its timescale) before any
  /// track with a fine clock started: where it lies within its clock's unit is not known yet.
  /// Unlike the other errors, the timeline counts it, so that such a track alone starts after
  /// `Timeline.Configuration.jumpThreshold` of its frames.
  case awaitingSharedClock(SampleKind)

  public var description: String {
    switch self {
    case .invalidTimescale(let kind, let time): "\(kind) sample has invalid time \(time)"
    case .outOfRange(let kind, let time):
      "\(kind) sample time \(time) is out of range of the timeline"
    case .awaitingSharedClock(let kind):
      "\(kind) sample on a coarse clock waits for a track with a fine clock"
    }
  }
}
