import IngestPOSIX
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Writes to the standard streams with write(2), without Foundation (which would add megabytes of
/// resident memory) and without C's shared FILE objects.
///
/// A failed write to standard output (a full disk, `/dev/full`, a closed pipe) is remembered, so
/// `main` can report it and exit non-zero instead of claiming that the output was written.
package enum Console {
  /// The errno of the first failed write to standard output; 0 while none failed.
  private static let standardOutputError = Atomic<Int32>(0)

  /// Writes a line to standard error.
  package static func error(_ line: String) { _ = writeAll(line + "\n", fd: 2) }

  /// Writes text to standard output.
  package static func out(_ text: String) {
    let error = writeAll(text, fd: 1)
    if error != 0 {
      _ = standardOutputError.compareExchange(expected: 0, desired: error, ordering: .relaxed)
    }
  }

  /// Why a write to standard output failed, if one did.
  package static var standardOutputFailure: String? {
    let error = standardOutputError.load(ordering: .relaxed)
    return error == 0 ? nil : String(cString: strerror(error))
  }

  /// True when standard error is a terminal, so a one-line progress display makes sense.
  package static var stderrIsTerminal: Bool { isatty(2) != 0 }

  /// Replaces the current terminal line on standard error.
  /// The columns of the terminal on standard error, read at each call (a resized window
  /// takes effect at the next line); nil when it is no terminal or does not say.
  package static var terminalColumns: Int? {
    var size = winsize()
    guard ioctl(2, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
    return Int(size.ws_col)
  }

  package static func progress(_ line: String) { _ = writeAll("\r\u{1B}[K" + line, fd: 2) }

  /// Writes all of `text` to `fd`.
  /// - Returns: 0, or the errno of the write that failed.
  package static func writeAll(_ text: String, fd: Int32) -> Int32 {
    do { try FileDescriptor(rawValue: fd).writeAll(text) } catch { return error.code }
    return 0
  }
}
