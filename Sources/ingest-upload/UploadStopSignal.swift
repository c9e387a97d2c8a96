import IngestPOSIX

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// SIGINT, SIGTERM and SIGHUP as a request to stop the upload: the request in flight is ended,
/// the summary written, and the process exits 0, as `ingest replay` does on the same signals.
/// SIGHUP is what a closed terminal sends. A second signal ends the process at once with
/// 128 + the signal (130, 143): the user insisted; the journal is synced line by line, so a rerun
/// still resumes.
///
/// The handler only writes the signal's number to a pipe (both async-signal-safe), which the
/// uploader reads without blocking between steps, in its waits and from libcurl's progress
/// callback: no shared memory between the handler and the program.
enum UploadStopSignal {
  private static let handled: [(signal: Int32, name: String)] = [
    (SIGINT, "SIGINT"), (SIGTERM, "SIGTERM"), (SIGHUP, "SIGHUP"),
  ]

  /// The name of the signal seen, once one was.
  nonisolated(unsafe) private static var seen: String?

  /// Installs the handlers for the whole process. Call it once, early (before libcurl starts
  /// any thread, which then inherits the unblocked mask).
  static func install() {
    var ends: [Int32] = [-1, -1]
    guard pipe(&ends) == 0 else { return }
    for end in ends {
      _ = fcntl(end, F_SETFD, FD_CLOEXEC)
      _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
    }
    stopPipeRead = ends[0]
    stopPipeWrite = ends[1]
    // Touched here so that no lazy initialisation of it ever runs inside the handler.
    stopSignalCount = 0
    SignalHandlers.install(handled.map(\.signal), handler: uploadStopHandler)
  }

  /// The name of the signal that asked the run to stop, or nil.
  static var requested: String? {
    if let seen { return seen }
    var byte: UInt8 = 0
    guard stopPipeRead >= 0, read(stopPipeRead, &byte, 1) == 1 else { return nil }
    let number = Int32(byte)
    seen = handled.first { $0.signal == number }?.name ?? "signal \(number)"
    return seen
  }
}

/// The pipe's ends; set once by `install`, before any handler can run.
nonisolated(unsafe) private var stopPipeRead: Int32 = -1
nonisolated(unsafe) private var stopPipeWrite: Int32 = -1
/// Touched only by the handler: whether a signal came before.
nonisolated(unsafe) private var stopSignalCount: Int32 = 0

/// Passes the first signal on through the pipe; a second one exits at once (`_exit` and `write`
/// only: async-signal-safe).
private func uploadStopHandler(_ signal: Int32) {
  stopSignalCount += 1
  if stopSignalCount > 1 { _exit(128 + signal) }
  var byte = UInt8(truncatingIfNeeded: signal)
  _ = write(stopPipeWrite, &byte, 1)
}
