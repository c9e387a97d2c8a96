import CFFmpeg
import Glibc

/// Keeps libavformat's log off stderr and lets a sink read the errors raised in its own calls.
///
/// libavformat logs full URLs, which carry the stream key, so nothing it logs is ever printed. The
/// handler is process-wide (libavutil has only one): every line is dropped, except that an
/// error-level line raised on a thread that has a capture installed is kept by that capture, for
/// the sink to redact and quote in its `SinkError`.
enum RTMPLog {
  /// Installs the silencing handler once per process.
  static func install() { _ = installed }

  private static let installed: Void = {
    cffmpeg_install_log_handler()
  }()

  /// Runs `body` with `capture` receiving the first error logged on this thread.
  static func capturing<T, E: Error>(
    into capture: RTMPLogCapture, _ body: () throws(E) -> T
  ) throws(E) -> T {
    install()
    capture.message = nil
    let previous = pthread_getspecific(captureKey)
    pthread_setspecific(captureKey, Unmanaged.passUnretained(capture).toOpaque())
    defer { pthread_setspecific(captureKey, previous) }
    return try body()
  }
}

/// libav's log lines at error level or worse, formatted by the C callback in shim.h.
@_cdecl("cffmpeg_ingest_log_line")
func ingestLogLine(_ level: Int32, _ line: UnsafePointer<CChar>?) {
  guard let line, let slot = pthread_getspecific(captureKey) else { return }
  Unmanaged<RTMPLogCapture>.fromOpaque(slot).takeUnretainedValue().record(line)
}

private let captureKey: pthread_key_t = {
  var key = pthread_key_t()
  pthread_key_create(&key, nil)
  return key
}()

/// The first error line of one libavformat call (at most 255 bytes, cut by the C formatter).
final class RTMPLogCapture {
  /// The line without its trailing newline, or nil when nothing was logged.
  fileprivate(set) var message: String?

  fileprivate func record(_ line: UnsafePointer<CChar>) {
    guard message == nil else { return }
    var text = String(cString: line)
    while text.last == "\n" || text.last == "\r" { text.removeLast() }
    message = text
  }
}
