/// Why a string is not a usable RTMP/RTMPS publish URL. Payloads never contain the stream key.
public enum RTMPTargetError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The scheme is not `rtmp` or `rtmps` (the scheme found, or "" when there is none).
  case unsupportedScheme(String)
  /// Nothing between `//` and the path.
  case missingHost
  /// The port is not a number in 1...65535 (the text found).
  case invalidPort(String)
  /// The path has no application name (`rtmp://host/app/key` needs both parts).
  case missingApp
  /// The path has no stream key after the application name.
  case missingStreamKey
  /// A space or control character at byte `offset` of the URL.
  case invalidCharacter(offset: Int)
  /// The URL is longer than `limit` bytes (librtmp-style servers cap the play path well below it).
  case tooLong(length: Int, limit: Int)

  public var description: String {
    switch self {
    case .unsupportedScheme(let scheme):
      scheme.isEmpty
        ? "not an RTMP URL: expected rtmp://host[:port]/app/key or rtmps://..."
        : "unsupported scheme \"\(scheme)\": expected rtmp or rtmps"
    case .missingHost: "RTMP URL has no host"
    case .invalidPort(let text): "RTMP URL port \"\(text)\" is not in 1...65535"
    case .missingApp: "RTMP URL has no application: expected rtmp://host[:port]/app/key"
    case .missingStreamKey: "RTMP URL has no stream key after the application"
    case .invalidCharacter(let offset):
      "RTMP URL has a space or control character at byte \(offset)"
    case .tooLong(let length, let limit): "RTMP URL is \(length) bytes, the limit is \(limit)"
    }
  }
}
