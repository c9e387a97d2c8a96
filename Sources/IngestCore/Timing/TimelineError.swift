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
  /// An audio sample whose clock, ticking on normally, is behind frames placed ahead of it: a
  /// burst of frames delivered with one time (a producer that stamps on delivery after a
  /// stall) was laid out frame by frame past where the clock now is. Dropped until the clock
  /// catches up, so that the track comes back to its own clock rather than staying behind it.
  case behindPlacedFrames(SampleKind)

  public var description: String {
    switch self {
    case .invalidTimescale(let kind, let time): "\(kind) sample has invalid time \(time)"
    case .outOfRange(let kind, let time):
      "\(kind) sample time \(time) is out of range of the timeline"
    case .awaitingSharedClock(let kind):
      "\(kind) sample on a coarse clock waits for a track with a fine clock"
    case .behindPlacedFrames(let kind):
      "\(kind) sample is behind frames a burst placed ahead of its clock"
    }
  }
}
