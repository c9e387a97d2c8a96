import IngestCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A clock the replay loop can wait on: real time, or a simulation that jumps ahead.
public protocol PacingClock: PipelineClock {
  /// Returns at `deadline` or soon after.
  func sleep(until deadline: MonotonicInstant)
  /// Whether waiting on this clock takes real time (true but for a `VirtualClock`, on which a
  /// run goes as fast as its threads: a thread that waits for another costs it nothing, so a
  /// replay on it models no capture that must not wait).
  var passesInRealTime: Bool { get }
}

extension PacingClock {
  public var passesInRealTime: Bool { true }
}

/// CLOCK_MONOTONIC: the package's one monotonic clock. Pacing, sink timeouts and
/// deadlines, condition waits (`ConditionLock`) and the benchmarks all read this one, so their
/// figures compare.
public struct SystemClock: PacingClock {
  public init() {}

  public func now() -> MonotonicInstant {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return MonotonicInstant(nanoseconds: spec.span.nanoseconds)
  }

  public func sleep(until deadline: MonotonicInstant) {
    #if os(Linux)
      // An absolute deadline: a sleep resumed after a signal does not drift.
      var spec = timespec(deadline.sinceOrigin)
      _ = FileDescriptor.retryingOnInterrupt(returningError: {
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &spec, nil)
      })
    #else
      // Darwin has no clock_nanosleep: a relative sleep, recomputed after each interruption.
      _ = FileDescriptor.retryingOnInterrupt(
        {
          let left = deadline - now()
          guard left > .zero else { return Int32(0) }
          var spec = timespec(left)
          return nanosleep(&spec, nil)
        }, failed: { $0 != 0 })
    #endif
  }

  /// Sleeps for `span` (nothing when it is not positive; `.max` saturates at the end of time
  /// rather than overflowing the deadline).
  public func sleep(for span: TimeSpan) {
    guard span > .zero else { return }
    sleep(until: now() + span)
  }
}
