import Synchronization

/// A clock that only moves when told to: simulations and tests run "realtime" schedules instantly.
public final class VirtualClock: PipelineClock {
  private let nanoseconds: Atomic<Int64>

  public init(start: Int64 = TimeSpan.seconds(1).nanoseconds) { nanoseconds = Atomic(start) }

  public func now() -> Int64 { nanoseconds.load(ordering: .relaxed) }

  /// Moves the clock forward to `deadline` (never backwards).
  public func advance(to deadline: Int64) {
    var current = nanoseconds.load(ordering: .relaxed)
    while deadline > current {
      let (exchanged, original) = nanoseconds.compareExchange(
        expected: current, desired: deadline, ordering: .relaxed)
      if exchanged { return }
      current = original
    }
  }
}
