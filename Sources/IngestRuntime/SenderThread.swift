import IngestCore
import IngestPOSIX
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Runs a `Sender` on its own thread, so network I/O (connects, sends with timeouts, reconnect
/// backoff) never blocks the capture thread.
///
/// The capture side calls `wake()` after each append; the thread sleeps on a condition variable
/// until woken, until the sink's retry time, or for at most 100 ms (to keep status flowing).
///
/// Each pass ticks the output's control loop, then its status reporter: both read the sink, and
/// the sink is only ever called from this thread.
///
/// A connection attempt blocks the sender thread for up to its connect timeout, so a second
/// thread ticks the control loop and the reporter every 100 ms while an attempt is in progress:
/// memory is still read, the ladder still moves, status events keep coming, stamped with the
/// time they are made. Both see the sink through a `ConnectingSinkGate`, which keeps the two
/// threads' ticks apart and the sink out of them while it connects.
///
/// `@unchecked`: the pthread mutex and conditions are C values the compiler cannot check;
/// every flag they guard is read and written with `mutex` held.
public final class SenderThread: @unchecked Sendable {
  private let sender: Sender
  private let clock: SystemClock
  private let control: ControlLoop?
  private let reporter: StatusReporter?
  private var mutex = pthread_mutex_t()
  private var condition = pthread_cond_t()
  private var thread: pthread_t?
  private var ticker: pthread_t?
  /// The ticker's own condition, so that `wake()` always reaches the sender thread.
  private var tickerCondition = pthread_cond_t()
  private var tickerStopped = false
  private let gate: ConnectingSinkGate
  private var pending = false
  private var stopping = false
  private var drainDeadline: Int64 = .max
  /// The fatal error that ended the thread, written by it and read by the capture side.
  private let failed = HandOverLock<SinkError?>(nil)

  /// - Parameters:
  ///   - control: the output's control loop, ticked on this thread (it reads the sink's link).
  ///   - reporter: the output's status reporter, ticked after it.
  public init(
    sender: Sender, clock: SystemClock = SystemClock(), control: ControlLoop?,
    reporter: StatusReporter?
  ) {
    self.sender = sender
    self.clock = clock
    self.control = control
    self.reporter = reporter
    let gate = ConnectingSinkGate(sink: sender.sink)
    self.gate = gate
    control?.attach(gate)
    reporter?.attach(gate)
    sender.onConnectAttempt = { inProgress in gate.setConnecting(inProgress) }
    pthread_mutex_init(&mutex, nil)
    var attributes = pthread_condattr_t()
    pthread_condattr_init(&attributes)
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
    pthread_cond_init(&condition, &attributes)
    pthread_cond_init(&tickerCondition, &attributes)
    pthread_condattr_destroy(&attributes)
  }

  deinit {
    pthread_cond_destroy(&condition)
    pthread_cond_destroy(&tickerCondition)
    pthread_mutex_destroy(&mutex)
  }

  /// The fatal sink error that stopped the thread, if any.
  public var failure: SinkError? { failed.withLock { $0 } }

  /// Starts the thread (and the one that ticks status while a connect blocks).
  public func start() {
    guard thread == nil else { return }
    thread = SystemThread.start { self.loop() }
    if control != nil || reporter != nil {
      ticker = SystemThread.start { self.tickWhileConnecting() }
    }
  }

  /// New data is in the ring.
  public func wake() {
    pthread_mutex_lock(&mutex)
    pending = true
    pthread_cond_signal(&condition)
    pthread_mutex_unlock(&mutex)
  }

  /// Lets the thread send what the ring holds (up to `timeout` nanoseconds), then stops it.
  /// - Returns: the fatal sink error, if the sender failed.
  public func stop(drainingFor timeout: Int64) -> SinkError? {
    beginStopping(drainingFor: timeout)
    return join()
  }

  /// Tells the thread to send what the ring holds (up to `timeout` nanoseconds) and end; `join`
  /// waits for it. Several outputs drain at the same time this way.
  public func beginStopping(drainingFor timeout: Int64) {
    pthread_mutex_lock(&mutex)
    stopping = true
    drainDeadline = clock.now() + timeout
    pthread_cond_signal(&condition)
    pthread_mutex_unlock(&mutex)
  }

  /// Waits for the thread to end after `beginStopping`, and stops the status ticker.
  /// - Returns: the fatal sink error, if the sender failed.
  public func join() -> SinkError? {
    if let thread { pthread_join(thread, nil) }
    thread = nil
    pthread_mutex_lock(&mutex)
    tickerStopped = true
    pthread_cond_signal(&tickerCondition)
    pthread_mutex_unlock(&mutex)
    if let ticker { pthread_join(ticker, nil) }
    ticker = nil
    return failure
  }

  private func loop() {
    while true {
      let result = sender.pump(now: clock.now())
      // The time after the pump: a connect or a send may have blocked for seconds.
      let now = clock.now()
      gate.tickLock.withLock { tick(now: now) }
      var wakeAt = now + 100_000_000
      switch result {
      case .failed(let error):
        failed.withLock { $0 = error }
        return
      case .blocked(let until):
        wakeAt = min(wakeAt, until)
      case .idle:
        break
      }
      pthread_mutex_lock(&mutex)
      // An output that never answered during the whole run is not waited for at its end.
      if stopping && (result == .idle || now >= drainDeadline || !sender.hasConnected) {
        pthread_mutex_unlock(&mutex)
        return
      }
      if !pending {
        if stopping { wakeAt = min(wakeAt, drainDeadline) }
        var deadline = timespec(
          tv_sec: Int(wakeAt / 1_000_000_000), tv_nsec: Int(wakeAt % 1_000_000_000))
        _ = pthread_cond_timedwait(&condition, &mutex, &deadline)
      }
      pending = false
      pthread_mutex_unlock(&mutex)
    }
  }

  /// The control loop, then the reporter, which reports what the loop read; under `tickLock`.
  private func tick(now: Int64) {
    control?.tick(now: now)
    reporter?.tick(now: now)
  }

  /// The ticker thread: every 100 ms, a status tick if the sender thread is connecting.
  private func tickWhileConnecting() {
    pthread_mutex_lock(&mutex)
    while !tickerStopped {
      let wakeAt = clock.now() + 100_000_000
      var deadline = timespec(
        tv_sec: Int(wakeAt / 1_000_000_000), tv_nsec: Int(wakeAt % 1_000_000_000))
      _ = pthread_cond_timedwait(&tickerCondition, &mutex, &deadline)
      if tickerStopped { break }
      pthread_mutex_unlock(&mutex)
      gate.tickLock.withLock {
        if gate.isConnecting { tick(now: clock.now()) }
      }
      pthread_mutex_lock(&mutex)
    }
    pthread_mutex_unlock(&mutex)
  }
}
