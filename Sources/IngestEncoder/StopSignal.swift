import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Set by SIGINT or SIGTERM: the encoder finishes the frame in hand, drains and exits 0.
private let signalled = Atomic<Bool>(false)

/// The process's stop signals. SIGPIPE is ignored, so that a reader going away shows as EPIPE on
/// the write, which ends the run cleanly instead of killing the process.
enum StopSignal {
  static func install() {
    signal(SIGPIPE, SIG_IGN)
    signal(SIGINT) { _ in signalled.store(true, ordering: .relaxed) }
    signal(SIGTERM) { _ in signalled.store(true, ordering: .relaxed) }
  }

  /// Whether a stop signal arrived.
  static var received: Bool { signalled.load(ordering: .relaxed) }
}
