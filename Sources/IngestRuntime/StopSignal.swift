import IngestCore
import IngestPOSIX
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// SIGINT, SIGTERM, SIGHUP and SIGUSR1 as a request to stop: the run finishes its outputs
/// (drained for a bounded time, the HLS segment closed and listed, the playlist ended, the
/// summary written) and exits 0. SIGHUP is how most hand-started broadcasts end (a closed
/// terminal, a dropped ssh session), so it must finish the recording, not kill it. SIGQUIT, as
/// ffmpeg treats it, stops at once: no drain, the outputs closed as they are, a summary, and a
/// non-zero exit status.
///
/// The handler does nothing but an atomic store (async-signal-safe); the replay loop polls
/// `requested` between samples and while it waits, at least every 100 ms. A second signal while
/// the run is finishing ends the process at once with status 128 + signal (130, 143): the user
/// insisted, and an HLS directory left like that is what `ingest recover` is for.
public enum StopSignal {
  /// How long a stopped run waits for its output to take what the ring still holds.
  public static let drainTimeout: TimeSpan = .seconds(5)

  /// The signals handled, in the order of their names.
  private static let handled: [(signal: Int32, name: String)] = [
    (SIGINT, "SIGINT"), (SIGTERM, "SIGTERM"), (SIGHUP, "SIGHUP"), (SIGUSR1, "SIGUSR1"),
    (SIGQUIT, "SIGQUIT"),
  ]

  /// Installs the handlers for the whole process. Call it once, early.
  public static func install() {
    // Touch the flag so its lazy initialisation never runs inside the handler.
    _ = received.load(ordering: .relaxed)
    _ = receivedAt.load(ordering: .relaxed)
    // The loop polls the flag; see `SignalHandlers` for the rest.
    SignalHandlers.install(handled.map(\.signal), handler: stopSignalHandler)
  }

  /// The name of the signal that asked the run to stop (`SIGINT`, `SIGTERM`, ...), or nil.
  public static var requested: String? {
    let signal = received.load(ordering: .acquiring)
    guard signal != 0 else { return nil }
    return handled.first { $0.signal == signal }?.name ?? "signal \(signal)"
  }

  /// Whether a stop was asked for longer ago than the drain takes (and a second more), or is
  /// immediate: a write still waiting then (a pipe nobody reads) is given up.
  public static var drainIsOver: Bool {
    guard received.load(ordering: .acquiring) != 0 else { return false }
    if isImmediate { return true }
    let since =
      SystemClock().now() - MonotonicInstant(nanoseconds: receivedAt.load(ordering: .acquiring))
    return since > drainTimeout + .seconds(1)
  }

  /// Whether the stop asked for is immediate (SIGQUIT): no drain, and the run does not succeed.
  public static var isImmediate: Bool { received.load(ordering: .acquiring) == SIGQUIT }

  /// The name of the immediate stop, for the summary.
  public static let immediateName = "SIGQUIT"
}

private let received = Atomic<Int32>(0)
/// When the first signal came, `SystemClock` nanoseconds (CLOCK_MONOTONIC).
private let receivedAt = Atomic<Int64>(0)

/// Records the first signal; a second one exits at once (only `_exit`: async-signal-safe).
private func stopSignalHandler(_ signal: Int32) {
  // clock_gettime is async-signal-safe; the time is stored before the signal, which is read
  // (acquiring) before it.
  var spec = timespec()
  clock_gettime(CLOCK_MONOTONIC, &spec)
  if received.load(ordering: .relaxed) == 0 {
    receivedAt.store(spec.span.nanoseconds, ordering: .releasing)
  }
  let (first, _) = received.compareExchange(
    expected: 0, desired: signal, ordering: .acquiringAndReleasing)
  if !first { _exit(128 + signal) }
}
