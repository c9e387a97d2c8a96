import IngestCore
import IngestPOSIX
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
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
/// `@unchecked`: the flags below are guarded by `lock`, which the compiler cannot check; every
/// one is read and written with it held.
public final class SenderThread: @unchecked Sendable {
  private let sender: Sender
  private let clock: SystemClock
  private let control: ControlLoop?
  private let reporter: StatusReporter?
  /// Condition `sending` wakes the sender thread; the ticker has its own, `ticking`, so that
  /// `wake()` always reaches the sender thread.
  private let lock = ConditionLock(conditions: 2)
  private static let sending = 0
  private static let ticking = 1
  private var thread: pthread_t?
  private var ticker: pthread_t?
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
    lock.withLock {
      pending = true
      lock.signal(Self.sending)
    }
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
    lock.withLock {
      stopping = true
      drainDeadline = clock.now() + timeout
      lock.signal(Self.sending)
    }
  }

  /// Waits for the thread to end after `beginStopping`, and stops the status ticker.
  /// - Returns: the fatal sink error, if the sender failed.
  public func join() -> SinkError? {
    if let thread { pthread_join(thread, nil) }
    thread = nil
    lock.withLock {
      tickerStopped = true
      lock.signal(Self.ticking)
    }
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
      lock.lock()
      // An output that never answered during the whole run is not waited for at its end.
      if stopping && (result == .idle || now >= drainDeadline || !sender.hasConnected) {
        lock.unlock()
        return
      }
      if !pending {
        if stopping { wakeAt = min(wakeAt, drainDeadline) }
        lock.wait(Self.sending, until: wakeAt)
      }
      pending = false
      lock.unlock()
    }
  }

  /// The control loop, then the reporter, which reports what the loop read; under `tickLock`.
  private func tick(now: Int64) {
    control?.tick(now: now)
    reporter?.tick(now: now)
  }

  /// The ticker thread: every 100 ms, a status tick if the sender thread is connecting.
  private func tickWhileConnecting() {
    lock.lock()
    while !tickerStopped {
      lock.wait(Self.ticking, until: clock.now() + 100_000_000)
      if tickerStopped { break }
      lock.unlock()
      gate.tickLock.withLock {
        if gate.isConnecting { tick(now: clock.now()) }
      }
      lock.lock()
    }
    lock.unlock()
  }
}
