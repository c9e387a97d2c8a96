/// Why `ingest-whip` stopped before its end of input: one line on standard error, and the exit
/// status that says whether a new attempt may help.
enum WHIPClientError: Error, CustomStringConvertible {
  /// The command line is wrong (exit status 2).
  case usage(String)
  /// The dump on standard input is not readable, or names no video.
  case input(String)
  /// GStreamer could not build or run the pipeline (a missing plugin names itself).
  case pipeline(String)
  /// The HTTP exchange failed before any answer (connection refused, TLS, timeout).
  case transport(String)
  /// The endpoint's TLS certificate is not trusted (self-signed, another name, an unknown
  /// authority): a new attempt meets the same certificate, so it is final.
  case certificate(String)
  /// The endpoint answered the offer with another status than 201.
  case rejected(status: Int, reason: String)
  /// The answer is not an SDP answer webrtcbin accepts.
  case badAnswer(String)
  /// The answer refuses the video codec (HEVC to a receiver that only takes H.264).
  case codecRefused(String)
  /// The answer (or, when the endpoint refused the offer, a second offer listing every
  /// profile) allows none of the H.264 profiles the stream can be sent in: the message names
  /// the stream's and those the endpoint accepted.
  case profileRefused(String)
  /// ICE or DTLS failed: no path to the receiver.
  case connectionFailed(String)

  var exitStatus: Int32 {
    switch self {
    case .usage: 2
    case .input, .pipeline, .badAnswer, .codecRefused, .profileRefused: 3
    case .transport, .certificate, .rejected, .connectionFailed: 1
    }
  }

  /// The error's name in the `error` line on standard output.
  var name: String {
    switch self {
    case .usage: "usage"
    case .input: "input"
    case .pipeline: "pipeline"
    case .transport: "transport"
    case .certificate: "certificate"
    case .rejected: "rejected"
    case .badAnswer: "badAnswer"
    case .codecRefused: "codecRefused"
    case .profileRefused: "profileRefused"
    case .connectionFailed: "connectionFailed"
    }
  }

  /// Whether a new session may succeed where this one failed.
  var isRetryable: Bool {
    switch self {
    case .transport, .connectionFailed: true
    case .rejected(let status, _): status >= 500 || status == 429
    case .certificate, .usage, .input, .pipeline, .badAnswer, .codecRefused, .profileRefused: false
    }
  }

  var description: String {
    switch self {
    case .usage(let text): text
    case .input(let text): "input: \(text)"
    case .pipeline(let text): "GStreamer: \(text)"
    case .transport(let text): "WHIP endpoint: \(text)"
    case .certificate(let text):
      "WHIP endpoint's certificate is not trusted: \(text) (--ca-file names the authority "
        + "that signed it)"
    case .rejected(let status, let reason):
      "WHIP endpoint refused the offer: HTTP \(status)\(reason.isEmpty ? "" : " \(reason)")"
    case .badAnswer(let text): "WHIP answer: \(text)"
    case .codecRefused(let codec): "the WHIP endpoint does not accept \(codec) video"
    case .profileRefused(let text): text
    case .connectionFailed(let text): "WebRTC connection failed: \(text)"
    }
  }
}
