/// Why a string is not a usable RTMP/RTMPS publish URL, or why its key (from the URL, a
/// `key_file=` or `INGEST_RTMP_KEY`) is not usable. Payloads never contain the stream key; they
/// name the file or variable it came from.
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
  /// A URL option (`key_file`) is malformed; `reason` says how.
  case invalidValue(option: String, reason: String)
  /// The file named by `option` (`key_file`) cannot be opened or read; `reason` is the system's.
  case unreadableSecretFile(option: String, path: String, reason: String)
  /// The key is empty once its one trailing line end is stripped: from the file at `path` of
  /// `option`, or, when `path` is `nil`, from the environment variable named `option`.
  case emptySecret(option: String, path: String?)
  /// A key from a file or the environment (as for `emptySecret`) breaks a rule that `reason`
  /// states (characters, length, UTF-8) without quoting it.
  case invalidSecret(option: String, path: String?, reason: String)

  public var description: String {
    switch self {
    case .unsupportedScheme(let scheme):
      scheme.isEmpty
        ? "not an RTMP URL: expected rtmp://host[:port]/app/key or rtmps://..."
        : "unsupported scheme \"\(scheme)\": expected rtmp or rtmps"
    case .missingHost: "RTMP URL has no host"
    case .invalidPort(let text): "RTMP URL port \"\(text)\" is not in 1...65535"
    case .missingApp: "RTMP URL has no application: expected rtmp://host[:port]/app/key"
    case .missingStreamKey:
      "RTMP URL has no stream key: give rtmp://host[:port]/app/KEY,"
        + " rtmp://host[:port]/app?key_file=PATH or the environment variable INGEST_RTMP_KEY"
    case .invalidCharacter(let offset):
      "RTMP URL has a space or control character at byte \(offset)"
    case .tooLong(let length, let limit): "RTMP URL is \(length) bytes, the limit is \(limit)"
    case .invalidValue(let option, let reason): "RTMP URL option '\(option)' \(reason)"
    case .unreadableSecretFile(let option, let path, let reason):
      "RTMP URL option '\(option)': cannot read '\(path)': \(reason)"
    case .emptySecret(let option, let path?): "RTMP URL option '\(option)': '\(path)' is empty"
    case .emptySecret(let name, nil): "environment variable \(name) is set but empty"
    case .invalidSecret(let option, let path?, let reason):
      "RTMP URL option '\(option)': the stream key in '\(path)' \(reason)"
    case .invalidSecret(let name, nil, let reason):
      "environment variable \(name): the stream key \(reason)"
    }
  }
}
