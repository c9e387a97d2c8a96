import IngestCore
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Runs an `OutputDriver` on its own thread, so network I/O (connects, sends with timeouts,
/// reconnect backoff) never blocks the capture thread: the driver's threaded variant, used by
/// the CLI's network outputs and by the embedding engine.
///
/// The thread sends what the ring holds as soon as it is woken. `wake()`, called after each
/// append, costs two atomic operations; it takes the lock and signals only when the thread waits
/// on an empty ring. Otherwise the thread sleeps until the sink can take more
/// (`Sender.PumpResult.blocked`), or until its control loop or status reporter is due, whichever
/// comes first: one timer for all three. It does not gather units into batches: libsrt sends
/// what it is handed back to back, so a batch leaves as a burst at line rate with the link idle
/// in between, which cost more packets than it saved CPU (`docs/architecture.md`).
///
/// Each pass is one `OutputDriver.step`: it ticks the output's control loop, then its status
/// reporter (the driver's tickers), which read the sink, and the sink is only ever called from
/// this thread. They read it through `sink`, a `ConnectingSinkGate`: attach them to it before
/// `start`.
///
/// A connection attempt blocks the sender thread for up to its connect timeout, so a second
/// thread ticks the control loop and the reporter every 100 ms while an attempt is in progress:
/// memory is still read, the ladder still moves, status events keep coming, stamped with the
/// time they are made. Between attempts it sleeps without a deadline. Both see the sink through
/// a `ConnectingSinkGate`, which keeps the two threads' ticks apart and the sink out of them
/// while it connects.
///
/// `@unchecked`: the driver and the gate are not `Sendable`. The driver's sender is pumped by
/// the sender thread alone (set up here before it starts); its tickers are ticked by that
/// thread or the ticker thread, always under the gate's `tickLock`, and the gate keeps the sink
/// out of the ticks while it connects (`ConnectingSinkGate`). Everything else the threads share
/// is in `lock`'s state or atomic.
public final class SenderThread: @unchecked Sendable {
  /// What the owner's thread, the sender thread and the ticker share.
  private struct State {
    var thread: pthread_t?
    var ticker: pthread_t?
    var tickerStopped = false
    /// When a drain ends: set by `beginStopping`, before `stopRequested`.
    var drainDeadline: MonotonicInstant = .distantFuture
  }

  private let driver: OutputDriver
  private let clock: SystemClock
  /// Condition `sending` wakes the sender thread; the ticker has its own, `ticking`, so that
  /// each signal reaches the thread it is meant for.
  private let lock = ConditionLock(State(), conditions: 2)
  private static let sending = 0
  private static let ticking = 1
  private let gate: ConnectingSinkGate
  /// Runs a pass's ticks under the gate's lock; made once (a closure per pass would allocate).
  private let tickingUnderGate: (() -> MonotonicInstant) -> MonotonicInstant
  /// Set by `wake()`; cleared by the thread before each pass over the ring.
  private let appended = Atomic<Bool>(false)
  /// Set while the thread waits on an empty ring: the one time `wake()` has to signal it.
  private let waitingForData = Atomic<Bool>(false)
  private let stopRequested = Atomic<Bool>(false)
  /// The fatal error that ended the thread, written by it and read by the capture side.
  private let failed = HandOverLock<SinkError?>(nil)

  /// - Parameter driver: the output's sender and the tickers that watch it (its control loop,
  ///   which reads the link, then its status reporter), stepped on this thread from `start`.
  public init(driver: OutputDriver, clock: SystemClock = SystemClock()) {
    self.driver = driver
    self.clock = clock
    let gate = ConnectingSinkGate(sink: driver.sender.sink)
    self.gate = gate
    tickingUnderGate = { ticks in gate.tickLock.withLock { ticks() } }
    let lock = lock
    driver.sender.onConnectAttempt = { inProgress in
      gate.setConnecting(inProgress)
      // The ticker sleeps without a deadline between attempts.
      if inProgress { lock.withLock { _ in lock.signal(Self.ticking) } }
    }
  }

  /// The output's sink as its tickers must read it: while a connection attempt blocks this
  /// thread, the gate answers for it (no figures, no link).
  public var sink: any OutputSink { gate }

  /// The fatal sink error that stopped the thread, if any.
  public var failure: SinkError? { failed.withLock { $0 } }

  /// Starts the thread (and the one that ticks status while a connect blocks).
  public func start() {
    guard lock.withLock({ $0.thread == nil }) else { return }
    let thread = SystemThread.start { self.loop() }
    let ticker = driver.hasTickers ? SystemThread.start { self.tickWhileConnecting() } : nil
    lock.withLock {
      $0.thread = thread
      $0.ticker = ticker
    }
  }

  /// New data is in the ring. Called after each append: lock-free unless the thread waits on an
  /// empty ring.
  public func wake() {
    // Sequentially consistent, as the thread's store to `waitingForData` and load of
    // `appended`: of the two, at least one sees the other's store, so a unit is never left
    // waiting for a signal that nobody sends.
    appended.store(true, ordering: .sequentiallyConsistent)
    guard waitingForData.exchange(false, ordering: .sequentiallyConsistent) else { return }
    // Taking and letting go of the lock orders this after the thread's check of `appended`
    // (made under it) or after it began to wait; the signal goes once the lock is free, so the
    // woken thread does not block at once on a mutex this thread still holds.
    lock.withLock { _ in }
    lock.signal(Self.sending)
  }

  /// Lets the thread send what the ring holds (up to `timeout`), then stops it.
  /// - Returns: the fatal sink error, if the sender failed.
  public func stop(drainingFor timeout: TimeSpan) -> SinkError? {
    beginStopping(drainingFor: timeout)
    return join()
  }

  /// Stops the thread as `stop` does, then finishes the sink (`Sender.finish`: the recording's
  /// last segment, a connection's clean end) on the calling thread.
  /// - Throws: the fatal sink error that stopped the thread, or the one finishing raised.
  public func finish(drainingFor timeout: TimeSpan) throws(SinkError) {
    if let error = stop(drainingFor: timeout) { throw error }
    try driver.sender.finish()
  }

  /// Tells the thread to send what the ring holds (up to `timeout`) and end; `join`
  /// waits for it. Several outputs drain at the same time this way.
  public func beginStopping(drainingFor timeout: TimeSpan) {
    lock.withLock {
      $0.drainDeadline = clock.now() + timeout
      stopRequested.store(true, ordering: .releasing)
      lock.signal(Self.sending)
    }
  }

  /// Waits for the thread to end after `beginStopping`, and stops the status ticker.
  /// - Returns: the fatal sink error, if the sender failed.
  public func join() -> SinkError? {
    if let thread = lock.withLock({ $0.thread }) { pthread_join(thread, nil) }
    let ticker = lock.withLock {
      $0.thread = nil
      $0.tickerStopped = true
      lock.signal(Self.ticking)
      return $0.ticker
    }
    if let ticker { pthread_join(ticker, nil) }
    lock.withLock { $0.ticker = nil }
    return failure
  }

  private func loop() {
    while true {
      // Read before the pass: a stop seen here comes after the last append, so a pass that
      // then finds the ring empty has sent everything.
      let stopping = stopRequested.load(ordering: .acquiring)
      // Whether units came in since the last pass: if so, the thread looks again before it
      // waits to be signalled.
      let flowing = appended.exchange(false, ordering: .sequentiallyConsistent)
      let step = driver.step(clock: clock, ticking: tickingUnderGate)
      if case .failed(let error) = step.pump {
        failed.withLock { $0 = error }
        return
      }
      if stopping {
        let drainDeadline = lock.withLock { $0.drainDeadline }
        if driver.drainEnds(after: step, now: clock.now(), deadline: drainDeadline) { return }
        sleep(until: min(step.wakeAt, drainDeadline), wakingOnStop: false)
        continue
      }
      let wakeAt = step.wakeAt
      if step.pump == .idle {
        if !flowing && !appended.load(ordering: .sequentiallyConsistent) {
          waitForData(until: wakeAt)
        }
        continue
      }
      sleep(until: wakeAt, wakingOnStop: true)
    }
  }

  /// Waits on an empty ring until `wake()` or `beginStopping` signals, or `deadline`.
  private func waitForData(until deadline: MonotonicInstant) {
    lock.withConditions { locked in
      waitingForData.store(true, ordering: .sequentiallyConsistent)
      if !appended.load(ordering: .sequentiallyConsistent)
        && !stopRequested.load(ordering: .acquiring)
      {
        locked.wait(Self.sending, until: deadline)
      }
      waitingForData.store(false, ordering: .sequentiallyConsistent)
    }
  }

  /// Sleeps until `deadline`, or, `wakingOnStop`, until `beginStopping` signals (a thread
  /// already draining sleeps its whole time).
  private func sleep(until deadline: MonotonicInstant, wakingOnStop: Bool) {
    guard clock.now() < deadline else { return }
    lock.withConditions { locked in
      // Read under the lock: `beginStopping` signals with it held.
      let stop = wakingOnStop && stopRequested.load(ordering: .acquiring)
      if !stop && clock.now() < deadline {
        locked.wait(Self.sending, until: deadline)
      }
    }
  }

  /// The ticker thread: every 100 ms while the sender thread is inside a connection attempt, a
  /// status tick; otherwise asleep until an attempt starts.
  private func tickWhileConnecting() {
    lock.withConditions { locked in
      while !locked.state.tickerStopped {
        guard gate.isConnecting else {
          locked.wait(Self.ticking)
          continue
        }
        locked.wait(Self.ticking, until: clock.now() + .milliseconds(100))
        if locked.state.tickerStopped { break }
        locked.whileUnlocked {
          gate.tickLock.withLock {
            if gate.isConnecting { driver.tick(now: clock.now()) }
          }
        }
      }
    }
  }
}
