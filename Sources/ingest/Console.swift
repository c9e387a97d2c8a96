#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Writes to the standard streams with write(2), without Foundation (which would add megabytes of
/// resident memory) and without C's shared FILE objects.
enum Console {
  /// Writes a line to standard error.
  static func error(_ line: String) { put(line + "\n", fd: 2) }

  /// Writes text to standard output.
  static func out(_ text: String) { put(text, fd: 1) }

  /// True when standard error is a terminal, so a one-line progress display makes sense.
  static var stderrIsTerminal: Bool { isatty(2) != 0 }

  /// Replaces the current terminal line on standard error.
  static func progress(_ line: String) { put("\r\u{1B}[K" + line, fd: 2) }

  private static func put(_ text: String, fd: Int32) {
    var text = text
    text.withUTF8 { bytes in
      var offset = 0
      while offset < bytes.count {
        let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { return }
        offset += n
      }
    }
  }
}
