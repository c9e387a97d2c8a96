import IngestPOSIX
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// SIGINT and SIGTERM as a request to stop: the session is DELETEd and the process exits 0,
/// as at the end of input. The handler only stores the signal's number (an atomic store is
/// async-signal-safe); the main loop reads it between its waits.
enum WHIPStop {
  static let signal = Atomic<Int32>(0)

  static func install() {
    _ = signal.load(ordering: .relaxed)
    SignalHandlers.install([SIGINT, SIGTERM, SIGHUP]) { number in
      WHIPStop.signal.store(number, ordering: .relaxed)
    }
  }

  static var requested: Bool { signal.load(ordering: .relaxed) != 0 }
}
