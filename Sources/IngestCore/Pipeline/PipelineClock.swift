/// A monotonic clock in nanoseconds, injected so tests and simulations can run faster than real time.
public protocol PipelineClock: Sendable {
  /// Nanoseconds since an arbitrary fixed point.
  func now() -> Int64
}

extension PipelineClock {
  /// `now()` as an instant.
  public func instant() -> MonotonicInstant { MonotonicInstant(nanoseconds: now()) }
}
