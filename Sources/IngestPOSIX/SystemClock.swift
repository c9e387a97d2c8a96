import IngestCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A clock the replay loop can wait on: real time, or a simulation that jumps ahead.
public protocol PacingClock: PipelineClock {
  /// Returns at `deadline` (nanoseconds on this clock) or soon after.
  func sleep(until deadline: Int64)
}

/// CLOCK_MONOTONIC in nanoseconds.
public struct SystemClock: PacingClock {
  public init() {}

  public func now() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
  }

  public func sleep(until deadline: Int64) {
    var spec = timespec(
      tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
    while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &spec, nil) == EINTR {}
  }
}
