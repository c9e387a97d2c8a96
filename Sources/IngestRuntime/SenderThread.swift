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
public final class SenderThread: @unchecked Sendable {
  private let sender: Sender
  private let clock: SystemClock
  private let reporter: StatusReporter?
  private var mutex = pthread_mutex_t()
  private var condition = pthread_cond_t()
  private var thread: pthread_t?
  private var pending = false
  private var stopping = false
  private var drainDeadline: Int64 = .max
  /// The fatal error that ended the thread, written by it and read by the capture side.
  private let failed = HandOverLock<SinkError?>(nil)

  public init(sender: Sender, clock: SystemClock = SystemClock(), reporter: StatusReporter?) {
    self.sender = sender
    self.clock = clock
    self.reporter = reporter
    pthread_mutex_init(&mutex, nil)
    var attributes = pthread_condattr_t()
    pthread_condattr_init(&attributes)
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
    pthread_cond_init(&condition, &attributes)
    pthread_condattr_destroy(&attributes)
  }

  deinit {
    pthread_cond_destroy(&condition)
    pthread_mutex_destroy(&mutex)
  }

  /// The fatal sink error that stopped the thread, if any.
  public var failure: SinkError? { failed.withLock { $0 } }

  /// Starts the thread.
  public func start() {
    guard thread == nil else { return }
    let box = Unmanaged.passRetained(self)
    var handle = pthread_t()
    let result = pthread_create(
      &handle, nil,
      { argument in
        let owner = Unmanaged<SenderThread>.fromOpaque(argument!).takeRetainedValue()
        owner.loop()
        return nil
      }, box.toOpaque())
    if result == 0 { thread = handle } else { box.release() }
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
    pthread_mutex_lock(&mutex)
    stopping = true
    drainDeadline = clock.now() + timeout
    pthread_cond_signal(&condition)
    pthread_mutex_unlock(&mutex)
    if let thread { pthread_join(thread, nil) }
    thread = nil
    return failure
  }

  private func loop() {
    while true {
      let now = clock.now()
      let result = sender.pump(now: now)
      reporter?.tick(now: now)
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
}
