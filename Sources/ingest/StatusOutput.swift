import IngestCLI
import IngestPOSIX
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Where `--status` events go: standard output (`-`) or a file, one `write` per line so a host app
/// can follow them.
///
/// A write that fails ends status output, never the recording: a reader that went away (EPIPE,
/// `--status - | head`; SIGPIPE is ignored) is only noted, any other failure (a full disk,
/// `/dev/full`) is a `problem` that the command reports and turns into exit status 1.
final class StatusOutput: Sendable {
  private let fd: Int32
  private let name: String
  /// The errno of the first failed write; 0 while every write succeeded.
  private let failure = Atomic<Int32>(0)
  private let linesWritten = Atomic<Int>(0)

  /// Opens `destination` (`-` for standard output), created or truncated.
  /// - Parameter input: the run's input, which a status file must not overwrite.
  init(destination: String, input: String) throws(UsageError) {
    if destination == "-" {
      fd = 1
      name = "standard output"
      return
    }
    if SameFileCheck.isSameFile(destination, input) {
      throw UsageError(
        "--status \(SystemPath.display(destination)) is the input \(SystemPath.display(input)):"
          + " it would be overwritten")
    }
    // Non-blocking, so that a FIFO nobody reads fails here (ENXIO) instead of hanging the run
    // before it starts; blocking again once open, so a slow reader slows the writes and never
    // loses a line.
    fd = SystemPath.withCString(destination) {
      open($0, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK, 0o644)
    }
    name = SystemPath.display(destination)
    guard fd >= 0 else {
      if errno == ENXIO {
        throw UsageError(
          "--status: \(name) is a FIFO with no reader; start its reader first "
            + "(e.g. cat \(name)), or give a regular file or -")
      }
      throw UsageError(
        "--status: cannot create \(name): \(String(cString: strerror(errno)))")
    }
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
  }

  /// Writes one event line (a newline is added); does nothing after a failed write.
  func write(_ line: String) {
    guard failure.load(ordering: .relaxed) == 0 else { return }
    let error = Console.writeAll(line + "\n", fd: fd)
    if error == 0 {
      linesWritten.add(1, ordering: .relaxed)
    } else {
      failure.store(error, ordering: .relaxed)
    }
  }

  /// The failed write, as a message, unless it was a reader going away.
  var problem: String? {
    let error = failure.load(ordering: .relaxed)
    guard error != 0, error != EPIPE else { return nil }
    return "--status: cannot write \(name) after \(linesWritten.load(ordering: .relaxed)) events: "
      + String(cString: strerror(error)) + "; later status events were lost"
  }

  /// A note for standard error when the reader went away, nil otherwise.
  var closedNote: String? {
    guard failure.load(ordering: .relaxed) == EPIPE else { return nil }
    return "status output ended after \(linesWritten.load(ordering: .relaxed)) events: "
      + "\(name) was closed by its reader; the run went on"
  }
}
