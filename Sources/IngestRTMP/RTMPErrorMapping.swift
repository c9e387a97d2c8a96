import CFFmpeg
import Glibc
import IngestCore

/// The one mapping of libavformat failures (an AVERROR code and the first error line the call
/// logged) to `SinkError`, for the RTMP sink.
enum RTMPErrorMapping {
  /// What the failed call was doing.
  enum Operation: String {
    case connect
    case write
    case finish
  }

  /// - Parameters:
  ///   - code: the AVERROR the call returned.
  ///   - logged: the first error line libavformat logged during the call; used to classify
  ///     only, never printed (it may hold the URL).
  ///   - detail: the code's text and the logged line with secrets blanked, for the message.
  ///   - endpoint: the redacted URL.
  static func sinkError(
    code: Int32, during operation: Operation, logged: String?, detail: String, endpoint: String
  ) -> SinkError {
    let logged = logged ?? ""
    if code == cffmpeg_averror_exit() || code == cffmpeg_averror(ETIMEDOUT) {
      // GnuTLS waiting for a ServerHello that never comes: a plain RTMP server reads the
      // ClientHello as a malformed RTMP handshake and stays silent until the timeout.
      let hint =
        operation == .connect && endpoint.hasPrefix("rtmps://")
          && tlsHandshakeStalls.contains { logged.contains($0) }
        ? "; the server did not answer the TLS handshake: is this port plain RTMP? (then"
          + " use rtmp://)" : ""
      return .timeout(endpoint: endpoint, operation: operation.rawValue, reason: detail + hint)
    }
    // libavformat's TLS layer (GnuTLS or OpenSSL) logs these and returns EIO, the same code a
    // refused publish gives, so the log line is what tells them apart.
    if certificateMessages.contains(where: { logged.contains($0) }) {
      return .certificate(endpoint: endpoint, reason: detail)
    }
    guard operation == .connect else {
      return .write(
        endpoint: endpoint, reason: "\(operation.rawValue) failed: \(detail)", retryable: true)
    }
    if networkErrors.contains(where: { cffmpeg_averror($0) == code })
      || logged.hasPrefix("Failed to resolve") || logged.hasPrefix("Cannot read RTMP handshake")
    {
      return .connect(endpoint: endpoint, reason: detail, retryable: true)
    }
    if code == cffmpeg_averror(EINVAL) || code == cffmpeg_averror(ENOSYS) {
      return .unsupported(
        endpoint: endpoint, reason: "the rtmp protocol refused the stream: \(detail)")
    }
    // The server closing the connection during the RTMP connect/publish exchange, or answering
    // with an error status: the same app and key will be refused again.
    if code == cffmpeg_averror(EPERM) || code == cffmpeg_averror(EACCES)
      || code == cffmpeg_averror(EIO) || code == cffmpeg_averror_eof()
    {
      return .publishRefused(
        endpoint: endpoint, reason: "app or stream key rejected: \(detail)", retryable: false)
    }
    return .connect(endpoint: endpoint, reason: detail, retryable: true)
  }

  /// GnuTLS backend (Debian's libavformat) lines, and OpenSSL's "certificate verify failed".
  private static let certificateMessages = [
    "verify peer certificate", "Peer certificate failed verification",
    "certificate's owner does not match hostname", "Unsupported certificate type",
    "certificate verify failed",
  ]

  /// What libavformat's TLS layer logs when the handshake gets no answer (GnuTLS, OpenSSL).
  private static let tlsHandshakeStalls = ["Error in the pull function", "handshake"]

  private static let networkErrors: [Int32] = [
    ECONNREFUSED, ECONNRESET, ECONNABORTED, ENETUNREACH, ENETDOWN, EHOSTUNREACH, EHOSTDOWN, EPIPE,
    EAGAIN, ENOTCONN, EADDRNOTAVAIL,
  ]
}
