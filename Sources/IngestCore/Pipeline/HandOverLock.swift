import Synchronization

/// A mutual-exclusion lock that owns the state it guards, and whose hand-overs ThreadSanitizer
/// can see.
///
/// The state is reachable only inside `withLock`, so nothing guarded can be read without the
/// lock and no value needs a second, unguarded copy.
///
/// On Linux `Synchronization.Mutex` waits on a futex, which ThreadSanitizer does not model, so it
/// reports every access guarded by a plain `Mutex` as a race and real races drown in the noise.
/// Each critical section here also passes an atomic counter on (acquire on entry, release on
/// exit), which ThreadSanitizer does model. The cost is two uncontended atomic operations per
/// lock; the ordering they add is what the lock already guarantees.
public struct HandOverLock<State: ~Copyable>: ~Copyable, Sendable {
  private let mutex: Mutex<State>
  private let handOver = Atomic<Int>(0)

  /// A lock owning `initial`.
  public init(_ initial: consuming sending State) { mutex = Mutex(initial) }

  /// Runs `body` with the lock held and the state lent to it.
  public func withLock<Result, Failure: Error>(
    _ body: (inout sending State) throws(Failure) -> sending Result
  ) throws(Failure) -> sending Result {
    try mutex.withLock { (state: inout sending State) throws(Failure) -> sending Result in
      _ = handOver.load(ordering: .acquiring)
      defer { handOver.wrappingAdd(1, ordering: .releasing) }
      return try body(&state)
    }
  }
}

extension HandOverLock where State == Void {
  /// A lock that only orders critical sections (its owner keeps the state).
  public init() { self.init(()) }

  /// Runs `body` with the lock held.
  public func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> sending Result)
    throws(Failure) -> sending Result
  {
    try withLock { (_: inout Void) throws(Failure) -> sending Result in try body() }
  }
}
