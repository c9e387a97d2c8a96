/// A failure of a sink: what failed (the case), where (`endpoint`: a redacted URL or a path), and
/// whether another attempt can help (`isRetryable`).
///
/// Each library's errors become these cases in one mapping function: libsrt's in `SRTSocket`,
/// libavformat's in `RTMPErrorMapping`, `FileError`'s in `SinkError(file:)`. Neither `endpoint`
/// nor `reason` ever holds a secret (passphrase, stream key, credentials).
public enum SinkError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The destination could not be reached or the connection not set up (DNS, refused, no
  /// listener, handshake).
  case connect(endpoint: String, reason: String, retryable: Bool)
  /// The server answered but refused the stream (RTMP publish denied, SRT stream id rejected);
  /// retryable only when the server says the refusal is temporary (overload).
  case publishRefused(endpoint: String, reason: String, retryable: Bool)
  /// Credentials or the SRT passphrase are wrong, missing or not expected. The same settings
  /// would be refused again.
  case authentication(endpoint: String, reason: String)
  /// The server's TLS certificate could not be verified (unknown issuer, wrong host name,
  /// expired). The same trust settings would refuse it again.
  case certificate(endpoint: String, reason: String)
  /// Sending or writing failed: the connection broke, the sink was not connected, an I/O error.
  case write(endpoint: String, reason: String, retryable: Bool)
  /// The device holding the output is full.
  case diskFull(path: String, reason: String)
  /// `operation` (connect, write, finish, acknowledgement) took longer than its limit.
  case timeout(endpoint: String, operation: String, reason: String)
  /// The output cannot take this stream or these settings (an option the library refuses, a
  /// track the muxer cannot carry, a malformed unit).
  case unsupported(endpoint: String, reason: String)

  /// Whether the sender should close, wait its backoff and connect again.
  public var isRetryable: Bool {
    switch self {
    case .connect(_, _, let retryable), .publishRefused(_, _, let retryable),
      .write(_, _, let retryable):
      retryable
    case .timeout: true
    case .authentication, .certificate, .diskFull, .unsupported: false
    }
  }

  /// The redacted endpoint or path the failure is about.
  public var endpoint: String {
    switch self {
    case .connect(let endpoint, _, _), .publishRefused(let endpoint, _, _),
      .authentication(let endpoint, _), .certificate(let endpoint, _),
      .write(let endpoint, _, _), .diskFull(let endpoint, _), .timeout(let endpoint, _, _),
      .unsupported(let endpoint, _):
      endpoint
    }
  }

  /// One line for people: what failed, where, and the library's reason.
  public var description: String {
    switch self {
    case .connect(let endpoint, let reason, _): "\(endpoint): cannot connect: \(reason)"
    case .publishRefused(let endpoint, let reason, _):
      "\(endpoint): the server refused the stream: \(reason)"
    case .authentication(let endpoint, let reason): "\(endpoint): authentication failed: \(reason)"
    case .certificate(let endpoint, let reason):
      "\(endpoint): TLS certificate verification failed: \(reason)"
    case .write(let endpoint, let reason, _): "\(endpoint): \(reason)"
    case .diskFull(let path, let reason): "\(path): disk full: \(reason)"
    case .timeout(let endpoint, let operation, let reason):
      "\(endpoint): \(operation) timed out: \(reason)"
    case .unsupported(let endpoint, let reason): "\(endpoint): \(reason)"
    }
  }
}
