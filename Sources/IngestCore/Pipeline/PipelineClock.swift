/// A monotonic clock in nanoseconds, injected so tests and simulations can run faster than real time.
public protocol PipelineClock: Sendable {
  /// Nanoseconds since an arbitrary fixed point.
  func now() -> Int64
}
