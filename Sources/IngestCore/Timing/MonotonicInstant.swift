/// A point on a monotonic clock (`PipelineClock.now()`): nanoseconds since the clock's
/// arbitrary origin.
///
/// Like swift-nio's `NIODeadline`: an instant plus or minus a `TimeSpan` saturates at the ends
/// of the Int64 range, so `.distantFuture` stays "never" whatever is added to it, and the span
/// between two instants saturates rather than trapping.
public struct MonotonicInstant: Hashable, Comparable, Sendable, CustomStringConvertible {
  /// Nanoseconds since the clock's origin.
  public var nanoseconds: Int64

  /// The instant `nanoseconds` after the clock's origin (a value `PipelineClock.now()` returns).
  @inlinable public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

  /// The clock's origin.
  public static var origin: MonotonicInstant { MonotonicInstant(nanoseconds: 0) }
  /// An instant before every other: a deadline that has always passed.
  public static var distantPast: MonotonicInstant { MonotonicInstant(nanoseconds: .min) }
  /// An instant after every other: a deadline that never comes.
  public static var distantFuture: MonotonicInstant { MonotonicInstant(nanoseconds: .max) }

  /// The span from the clock's origin to this instant.
  public var sinceOrigin: TimeSpan { TimeSpan(nanoseconds: nanoseconds) }

  public var description: String { "\(nanoseconds) ns" }

  public static func < (lhs: MonotonicInstant, rhs: MonotonicInstant) -> Bool {
    lhs.nanoseconds < rhs.nanoseconds
  }

  /// The instant `span` after `instant`, saturating.
  public static func + (instant: MonotonicInstant, span: TimeSpan) -> MonotonicInstant {
    MonotonicInstant(nanoseconds: TimeSpan.saturatingSum(instant.nanoseconds, span.nanoseconds))
  }

  /// The instant `span` after `instant`, saturating.
  public static func + (span: TimeSpan, instant: MonotonicInstant) -> MonotonicInstant {
    instant + span
  }

  /// The instant `span` before `instant`, saturating.
  public static func - (instant: MonotonicInstant, span: TimeSpan) -> MonotonicInstant {
    MonotonicInstant(
      nanoseconds: TimeSpan.saturatingDifference(instant.nanoseconds, span.nanoseconds))
  }

  /// The span from `rhs` to `lhs` (negative when `lhs` is earlier), saturating.
  public static func - (lhs: MonotonicInstant, rhs: MonotonicInstant) -> TimeSpan {
    TimeSpan(nanoseconds: TimeSpan.saturatingDifference(lhs.nanoseconds, rhs.nanoseconds))
  }

  /// Moves `instant` `span` later, saturating.
  public static func += (instant: inout MonotonicInstant, span: TimeSpan) {
    instant = instant + span
  }

  /// Moves `instant` `span` earlier, saturating.
  public static func -= (instant: inout MonotonicInstant, span: TimeSpan) {
    instant = instant - span
  }
}

extension MonotonicInstant {
  /// The instant `span` after the clock's origin: a fixed point in time for a simulation or a
  /// test (`now: .at(.seconds(2))`).
  public static func at(_ span: TimeSpan) -> MonotonicInstant { origin + span }
}
