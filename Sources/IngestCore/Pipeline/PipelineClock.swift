/// A monotonic clock, injected so tests and simulations can run faster than real time.
public protocol PipelineClock: Sendable {
  /// The current instant (nanoseconds since an arbitrary fixed point).
  func now() -> MonotonicInstant
}
