#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The package's one mutex with condition variables, for threads that sleep until another wakes
/// them or a deadline passes (a sender thread, the file writer's thread). The state it guards
/// belongs to the owner, which reads and writes it only between `lock` and `unlock` (or in
/// `withLock`).
///
/// Every pthread call's result is checked: a failure means the lock or a condition is broken
/// (never initialised, destroyed, or unlocked by a thread that does not hold it), and going on
/// would corrupt what it guards, so it stops the process with the call's name and error number.
///
/// The mutex and conditions live in memory of their own: a pthread object must not move.
/// Deadlines are `SystemClock` nanoseconds: on Linux the conditions wait on CLOCK_MONOTONIC;
/// Darwin has no such attribute, so a wait there is given the time left, measured on the same
/// clock.
public final class ConditionLock: @unchecked Sendable {
  private let mutex: UnsafeMutablePointer<pthread_mutex_t>
  private let conditions: UnsafeMutablePointer<pthread_cond_t>
  private let conditionCount: Int

  /// - Parameter conditions: how many conditions share the mutex (two, when two threads wait
  ///   for different things and each signal must reach its own waiter).
  public init(conditions: Int = 1) {
    precondition(conditions > 0)
    conditionCount = conditions
    mutex = .allocate(capacity: 1)
    self.conditions = .allocate(capacity: conditions)
    Self.check(pthread_mutex_init(mutex, nil), "pthread_mutex_init")
    var attributes = pthread_condattr_t()
    Self.check(pthread_condattr_init(&attributes), "pthread_condattr_init")
    #if os(Linux)
      Self.check(
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC), "pthread_condattr_setclock")
    #endif
    for index in 0..<conditions {
      Self.check(pthread_cond_init(self.conditions + index, &attributes), "pthread_cond_init")
    }
    Self.check(pthread_condattr_destroy(&attributes), "pthread_condattr_destroy")
  }

  deinit {
    for index in 0..<conditionCount {
      Self.check(pthread_cond_destroy(conditions + index), "pthread_cond_destroy")
    }
    Self.check(pthread_mutex_destroy(mutex), "pthread_mutex_destroy")
    conditions.deallocate()
    mutex.deallocate()
  }

  /// Takes the mutex.
  public func lock() { Self.check(pthread_mutex_lock(mutex), "pthread_mutex_lock") }

  /// Releases the mutex; the calling thread must hold it.
  public func unlock() { Self.check(pthread_mutex_unlock(mutex), "pthread_mutex_unlock") }

  /// Runs `body` with the mutex held.
  public func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result)
    throws(Failure) -> Result
  {
    lock()
    defer { unlock() }
    return try body()
  }

  /// Releases the mutex until `condition` is signalled (or the system wakes the thread
  /// spuriously: the caller re-checks its state), then takes it again. The mutex must be held.
  public func wait(_ condition: Int = 0) {
    Self.check(pthread_cond_wait(conditions + condition, mutex), "pthread_cond_wait")
  }

  /// Like `wait(_:)`, but returns by `deadline` (`SystemClock` nanoseconds) at the latest.
  /// - Returns: false when the deadline passed.
  @discardableResult
  public func wait(_ condition: Int = 0, until deadline: Int64) -> Bool {
    #if os(Linux)
      var spec = timespec(
        tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
      let result = pthread_cond_timedwait(conditions + condition, mutex, &spec)
    #else
      let left = deadline - SystemClock().now()
      guard left > 0 else { return false }
      var spec = timespec(tv_sec: Int(left / 1_000_000_000), tv_nsec: Int(left % 1_000_000_000))
      let result = pthread_cond_timedwait_relative_np(conditions + condition, mutex, &spec)
    #endif
    if result == ETIMEDOUT { return false }
    Self.check(result, "pthread_cond_timedwait")
    return true
  }

  /// Wakes one thread waiting on `condition`.
  public func signal(_ condition: Int = 0) {
    Self.check(pthread_cond_signal(conditions + condition), "pthread_cond_signal")
  }

  /// Wakes every thread waiting on `condition`.
  public func broadcast(_ condition: Int = 0) {
    Self.check(pthread_cond_broadcast(conditions + condition), "pthread_cond_broadcast")
  }

  private static func check(_ result: Int32, _ call: StaticString) {
    guard result != 0 else { return }
    fatalError("\(call) failed: error \(result)")
  }
}
