import IngestCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The package's one mutex with condition variables, for threads that sleep until another wakes
/// them or a deadline passes (a sender thread, the mix worker, the file writer's thread), and
/// the owner of the state they share: `State` lives inside the lock and is reachable only with
/// the mutex held, in `withLock` (the state lent to the body) or `withConditions` (the state,
/// the waits and the signals through `Locked`). A `ConditionLock<Void>` guards nothing of its
/// own and offers `lock`, `unlock` and the waits to an owner that keeps its state apart.
///
/// Every pthread call's result is checked: a failure means the lock or a condition is broken
/// (never initialised, destroyed, or unlocked by a thread that does not hold it), and going on
/// would corrupt what it guards, so it stops the process with the call's name and error number.
/// In debug builds the mutex is error-checking (`PTHREAD_MUTEX_ERRORCHECK`): a thread that takes
/// it twice, or lets go of a mutex it does not hold, stops there rather than deadlocking or
/// running unguarded.
///
/// The mutex, the conditions and the state live in memory of their own: a pthread object must
/// not move, and the state is reached through its address alone, so a wait (which lets other
/// threads change it) never falls inside an access the compiler could assume exclusive.
/// Deadlines are `SystemClock` instants: on Linux the conditions wait on CLOCK_MONOTONIC;
/// Darwin has no such attribute, so a wait there is given the time left, measured on the same
/// clock.
public final class ConditionLock<State> {
  private let mutex: UnsafeMutablePointer<pthread_mutex_t>
  private let conditions: UnsafeMutablePointer<pthread_cond_t>
  private let conditionCount: Int
  private let storage: UnsafeMutablePointer<State>

  /// A lock owning `initial`.
  /// - Parameter conditions: how many conditions share the mutex (two, when two threads wait
  ///   for different things and each signal must reach its own waiter).
  public init(_ initial: State, conditions: Int = 1) {
    precondition(conditions > 0)
    conditionCount = conditions
    mutex = .allocate(capacity: 1)
    self.conditions = .allocate(capacity: conditions)
    storage = .allocate(capacity: 1)
    storage.initialize(to: initial)
    var mutexAttributes = pthread_mutexattr_t()
    Self.check(pthread_mutexattr_init(&mutexAttributes), "pthread_mutexattr_init")
    #if DEBUG
      Self.check(
        pthread_mutexattr_settype(&mutexAttributes, Int32(PTHREAD_MUTEX_ERRORCHECK)),
        "pthread_mutexattr_settype")
    #endif
    Self.check(pthread_mutex_init(mutex, &mutexAttributes), "pthread_mutex_init")
    Self.check(pthread_mutexattr_destroy(&mutexAttributes), "pthread_mutexattr_destroy")
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
    storage.deinitialize(count: 1)
    storage.deallocate()
    conditions.deallocate()
    mutex.deallocate()
  }

  /// Runs `body` with the mutex held and the state lent to it.
  public func withLock<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result)
    throws(Failure) -> Result
  {
    takeMutex()
    defer { releaseMutex() }
    return try body(&storage.pointee)
  }

  /// Runs `body` with the mutex held; through `Locked` it reads and writes the state, waits on
  /// the conditions (the mutex let go meanwhile) and signals them.
  public func withConditions<Result, Failure: Error>(
    _ body: (Locked) throws(Failure) -> Result
  ) throws(Failure) -> Result {
    takeMutex()
    defer { releaseMutex() }
    return try body(Locked(owner: self))
  }

  /// Wakes one thread waiting on `condition`. The mutex need not be held: a signal sent after
  /// letting go of it does not wake a thread into a mutex still taken.
  public func signal(_ condition: Int = 0) {
    Self.check(pthread_cond_signal(conditions + condition), "pthread_cond_signal")
  }

  /// Wakes every thread waiting on `condition`.
  public func broadcast(_ condition: Int = 0) {
    Self.check(pthread_cond_broadcast(conditions + condition), "pthread_cond_broadcast")
  }

  /// The state and the conditions while the mutex is held: only inside `withConditions`, and
  /// never kept beyond it. Each access to `state` is a short one of its own, so a wait between
  /// two of them sees what other threads changed meanwhile. (Not `~Copyable`: Swift 6.3's
  /// optimizer stops with "Cannot initialize a nonCopyable type with a guaranteed value" when
  /// it inlines a `withConditions` that lends a noncopyable one, so a release build fails.)
  public struct Locked {
    fileprivate let owner: ConditionLock

    /// The guarded state.
    public var state: State {
      unsafeAddress { UnsafePointer(owner.storage) }
      nonmutating unsafeMutableAddress { owner.storage }
    }

    /// Lets go of the mutex until `condition` is signalled (or the system wakes the thread
    /// spuriously: the caller re-checks the state), then takes it again.
    public func wait(_ condition: Int = 0) { owner.waitHeld(condition) }

    /// Like `wait(_:)`, but returns by `deadline` (on `SystemClock`) at the latest.
    /// - Returns: false when the deadline passed.
    @discardableResult
    public func wait(_ condition: Int = 0, until deadline: MonotonicInstant) -> Bool {
      owner.waitHeld(condition, until: deadline)
    }

    /// Wakes one thread waiting on `condition`.
    public func signal(_ condition: Int = 0) { owner.signal(condition) }

    /// Wakes every thread waiting on `condition`.
    public func broadcast(_ condition: Int = 0) { owner.broadcast(condition) }

    /// Lets go of the mutex for `body` (work that must not hold it: a call into a sink, a
    /// codec), then takes it again. `body` does not reach the state.
    public func whileUnlocked<Result, Failure: Error>(_ body: () throws(Failure) -> Result)
      throws(Failure) -> Result
    {
      owner.releaseMutex()
      defer { owner.takeMutex() }
      return try body()
    }
  }

  private func takeMutex() { Self.check(pthread_mutex_lock(mutex), "pthread_mutex_lock") }

  private func releaseMutex() { Self.check(pthread_mutex_unlock(mutex), "pthread_mutex_unlock") }

  private func waitHeld(_ condition: Int) {
    Self.check(pthread_cond_wait(conditions + condition, mutex), "pthread_cond_wait")
  }

  private func waitHeld(_ condition: Int, until deadline: MonotonicInstant) -> Bool {
    #if os(Linux)
      var spec = timespec(deadline.sinceOrigin)
      let result = pthread_cond_timedwait(conditions + condition, mutex, &spec)
    #else
      let left = deadline - SystemClock().now()
      guard left > .zero else { return false }
      var spec = timespec(left)
      let result = pthread_cond_timedwait_relative_np(conditions + condition, mutex, &spec)
    #endif
    if result == ETIMEDOUT { return false }
    Self.check(result, "pthread_cond_timedwait")
    return true
  }

  private static func check(_ result: Int32, _ call: StaticString) {
    guard result != 0 else { return }
    fatalError("\(call) failed: error \(result)")
  }
}

/// `@unchecked`, and the one place that proves it: the state is reached only through
/// `withLock` and `withConditions`, both with the mutex held (`Locked` cannot outlive the
/// call), and the pthread objects are used only through their checked calls. A state that is
/// not `Sendable` could still leave through a body's result and be used by two threads at once,
/// so the lock is `Sendable` only when its state is.
extension ConditionLock: @unchecked Sendable where State: Sendable {}

extension ConditionLock where State == Void {
  /// A lock that guards no state of its own: its owner keeps the state and reads and writes it
  /// only between `lock` and `unlock` (or in `withLock`).
  public convenience init(conditions: Int = 1) { self.init((), conditions: conditions) }

  /// Takes the mutex.
  public func lock() { takeMutex() }

  /// Releases the mutex; the calling thread must hold it.
  public func unlock() { releaseMutex() }

  /// Runs `body` with the mutex held.
  public func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result)
    throws(Failure) -> Result
  {
    try withLock { (_: inout Void) throws(Failure) -> Result in try body() }
  }

  /// Releases the mutex until `condition` is signalled (or the system wakes the thread
  /// spuriously: the caller re-checks its state), then takes it again. The mutex must be held.
  public func wait(_ condition: Int = 0) { waitHeld(condition) }

  /// Like `wait(_:)`, but returns by `deadline` (on `SystemClock`) at the latest.
  /// - Returns: false when the deadline passed.
  @discardableResult
  public func wait(_ condition: Int = 0, until deadline: MonotonicInstant) -> Bool {
    waitHeld(condition, until: deadline)
  }
}
