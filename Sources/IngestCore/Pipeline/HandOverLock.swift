import Synchronization

/// A mutual-exclusion lock whose hand-overs ThreadSanitizer can see.
///
/// On Linux `Synchronization.Mutex` waits on a futex, which ThreadSanitizer does not model, so it
/// reports every access guarded by a plain `Mutex` as a race and real races drown in the noise.
/// Each critical section here also passes an atomic counter on (acquire on entry, release on
/// exit), which ThreadSanitizer does model. The cost is two uncontended atomic operations per
/// lock; the ordering they add is what the lock already guarantees.
public struct HandOverLock: ~Copyable, Sendable {
  private let mutex = Mutex(())
  private let handOver = Atomic<Int>(0)

  public init() {}

  /// Runs `body` with the lock held.
  public func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result)
    throws(Failure) -> Result
  {
    try mutex.withLock { _ throws(Failure) -> Result in
      _ = handOver.load(ordering: .acquiring)
      defer { handOver.wrappingAdd(1, ordering: .releasing) }
      return try body()
    }
  }
}
