/// Why an `srt://` URL was refused. No case carries the passphrase or the stream id: messages name
/// the option at fault (and the file or environment variable a secret came from) and what is
/// wrong with it, never its value when that value is a secret.
public enum SRTOptionsError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The URL does not start with `srt://`; the payload is the scheme found (empty when none).
  case notSRTScheme(found: String)
  /// Nothing between `srt://` and the port.
  case missingHost
  /// An IPv6 host opened with `[` has no closing `]`.
  case unterminatedIPv6Host
  /// No `:PORT` after the host.
  case missingPort
  /// The port is not a number in 1...65535.
  case invalidPort(String)
  /// Something other than `/` or nothing follows the port, before `?`.
  case unexpectedPath
  /// `mode=` is not caller, listener or rendezvous.
  case unsupportedMode(String)
  /// A query key that is not one of the supported options.
  case unknownOption(String)
  /// An option appears twice.
  case duplicateOption(String)
  /// A query item without `=`.
  case missingValue(option: String)
  /// A `%` not followed by two hex digits, at `offset` bytes into the value of `option`.
  case invalidPercentEncoding(option: String, offset: Int)
  /// A value that is not UTF-8 once percent-decoded.
  case invalidUTF8(option: String)
  /// A value out of range or malformed; `reason` says what is allowed and never quotes a secret.
  case invalidValue(option: String, reason: String)
  /// A passphrase or stream id that holds a control character (a `%00`, a tab, a line end once
  /// percent-decoded): libsrt would take the bytes up to a NUL, or the peer refuse the rest, so
  /// the stream would be encrypted with another secret than the one meant. The value is never
  /// quoted.
  case controlCharacter(option: String)
  /// A value and the file holding it are both given (`passphrase=` and `passphrase_file=`): a
  /// usage error, since neither can be preferred without guessing.
  case conflictingOptions(String, String)
  /// The file named by `option` (`passphrase_file`, `streamid_file`) cannot be opened or read;
  /// `reason` is the system's.
  case unreadableSecretFile(option: String, path: String, reason: String)
  /// A secret is empty once its one trailing line end is stripped: from the file at `path` of
  /// `option`, or, when `path` is `nil`, from the environment variable named `option`.
  case emptySecret(option: String, path: String?)
  /// A secret from a file or the environment (as for `emptySecret`) breaks a rule that `reason`
  /// states (length, one line, UTF-8) without quoting it.
  case invalidSecret(option: String, path: String?, reason: String)

  public var description: String {
    switch self {
    case .notSRTScheme(let found):
      found.isEmpty
        ? "not an SRT URL: expected srt://HOST:PORT[?options]"
        : "not an SRT URL: scheme '\(found)', expected srt://HOST:PORT[?options]"
    case .missingHost: "SRT URL has no host: expected srt://HOST:PORT"
    case .unterminatedIPv6Host: "SRT URL host starts with '[' but has no closing ']'"
    case .missingPort: "SRT URL has no port: expected srt://HOST:PORT"
    case .invalidPort(let text): "SRT URL port '\(text)' is not a number in 1...65535"
    case .unexpectedPath:
      "SRT URL has a path after the port; only srt://HOST:PORT?options is accepted"
    case .unsupportedMode(let mode):
      "SRT mode '\(mode)' is not supported: use mode=caller (the default), mode=listener or"
        + " mode=rendezvous"
    case .unknownOption(let key):
      "unknown SRT option '\(key)'; supported: latency, passphrase, passphrase_file, pbkeylen,"
        + " streamid, streamid_file, maxbw, conntimeo, stall_timeout, mode, port"
    case .duplicateOption(let key): "SRT option '\(key)' is given more than once"
    case .missingValue(let key): "SRT option '\(key)' has no value (expected \(key)=VALUE)"
    case .invalidPercentEncoding(let key, let offset):
      "SRT option '\(key)': bad percent-encoding at byte \(offset) of its value"
    case .invalidUTF8(let key): "SRT option '\(key)' is not valid UTF-8 once percent-decoded"
    case .invalidValue(let key, let reason): "SRT option '\(key)' \(reason)"
    case .controlCharacter(let key):
      "SRT option '\(key)' holds a control character (a byte below 0x20, or 0x7F, such as %00);"
        + " it must be printable text"
    case .conflictingOptions(let value, let file):
      "SRT options '\(value)' and '\(file)' are both given; give one of them"
    case .unreadableSecretFile(let key, let path, let reason):
      "SRT option '\(key)': cannot read '\(path)': \(reason)"
    case .emptySecret(let key, let path?): "SRT option '\(key)': '\(path)' is empty"
    case .emptySecret(let name, nil): "environment variable \(name) is set but empty"
    case .invalidSecret(let key, let path?, let reason):
      "SRT option '\(key)': the content of '\(path)' \(reason)"
    case .invalidSecret(let name, nil, let reason): "environment variable \(name) \(reason)"
    }
  }
}
