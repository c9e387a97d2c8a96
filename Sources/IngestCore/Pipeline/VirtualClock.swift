import Synchronization

/// A clock that only moves when told to: simulations and tests run "realtime" schedules instantly.
public final class VirtualClock: PipelineClock {
  private let nanoseconds: Atomic<Int64>

  /// A clock that reads `start` (a second past the origin unless told otherwise) until advanced.
  public init(start: MonotonicInstant = .origin + .seconds(1)) {
    nanoseconds = Atomic(start.nanoseconds)
  }

  public func now() -> MonotonicInstant {
    MonotonicInstant(nanoseconds: nanoseconds.load(ordering: .relaxed))
  }

  /// Moves the clock forward to `deadline` (never backwards).
  public func advance(to deadline: MonotonicInstant) {
    var current = nanoseconds.load(ordering: .relaxed)
    while deadline.nanoseconds > current {
      let (exchanged, original) = nanoseconds.compareExchange(
        expected: current, desired: deadline.nanoseconds, ordering: .relaxed)
      if exchanged { return }
      current = original
    }
  }
}
