import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Set by SIGINT, SIGTERM, SIGHUP, SIGUSR1 or SIGQUIT: the encoder finishes the frame in hand,
/// drains and exits 0. A closed terminal sends SIGHUP to the encoder child as well as to the
/// pipeline, which then finishes its outputs: the encoder must end as cleanly.
private let signalled = Atomic<Bool>(false)

/// The process's stop signals. SIGPIPE is ignored, so that a reader going away shows as EPIPE on
/// the write, which ends the run cleanly instead of killing the process.
enum StopSignal {
  static func install() {
    signal(SIGPIPE, SIG_IGN)
    for stop in [SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGQUIT] {
      signal(stop) { _ in signalled.store(true, ordering: .relaxed) }
    }
  }

  /// Whether a stop signal arrived.
  static var received: Bool { signalled.load(ordering: .relaxed) }
}
