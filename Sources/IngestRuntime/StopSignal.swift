import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// SIGINT and SIGTERM as a request to stop: the run finishes its outputs (drained for a bounded
/// time, the HLS segment closed and listed, the playlist ended, the summary written) and exits 0.
///
/// The handler does nothing but an atomic store (async-signal-safe); the replay loop polls
/// `requested` between samples and while it waits, at least every 100 ms. A second signal while
/// the run is finishing ends the process at once with status 128 + signal (130, 143): the user
/// insisted, and an HLS directory left like that is what `ingest recover` is for.
public enum StopSignal {
  /// How long a stopped run waits for its output to take what the ring still holds.
  public static let drainNanoseconds: Int64 = 5_000_000_000

  /// Installs the SIGINT and SIGTERM handlers for the whole process. Call it once, early.
  public static func install() {
    // Touch the flag so its lazy initialisation never runs inside the handler.
    _ = received.load(ordering: .relaxed)
    var action = sigaction()
    #if canImport(Glibc)
      action.__sigaction_handler.sa_handler = { signal in stopSignalHandler(signal) }
    #else
      action.__sigaction_u.__sa_handler = { signal in stopSignalHandler(signal) }
    #endif
    sigemptyset(&action.sa_mask)
    // Restarted system calls keep the data path unaware of signals; the loop polls the flag.
    action.sa_flags = SA_RESTART
    // Installed even over an inherited SIG_IGN or signal mask: a host app or test runner that
    // spawned us with the signals ignored or blocked still needs a way to end the run cleanly.
    // Threads started later inherit the unblocked mask of this one.
    sigaction(SIGINT, &action, nil)
    sigaction(SIGTERM, &action, nil)
    var set = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, SIGINT)
    sigaddset(&set, SIGTERM)
    pthread_sigmask(SIG_UNBLOCK, &set, nil)
  }

  /// The name of the signal that asked the run to stop (`SIGINT`, `SIGTERM`), or nil.
  public static var requested: String? {
    switch received.load(ordering: .acquiring) {
    case 0: nil
    case SIGINT: "SIGINT"
    case SIGTERM: "SIGTERM"
    case let other: "signal \(other)"
    }
  }
}

private let received = Atomic<Int32>(0)

/// Records the first signal; a second one exits at once (only `_exit`: async-signal-safe).
private func stopSignalHandler(_ signal: Int32) {
  let (first, _) = received.compareExchange(
    expected: 0, desired: signal, ordering: .acquiringAndReleasing)
  if !first { _exit(128 + signal) }
}
