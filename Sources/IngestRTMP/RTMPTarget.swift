import IngestCore

/// A parsed RTMP/RTMPS publish URL: `rtmp[s]://[user:password@]host[:port]/app[/more]/key`.
///
/// The last path component is the stream key (a query such as `key?token=x` stays part of it); every
/// component before it is the application. The key and any credentials are kept out of
/// `description`, `debugDescription` and reflection, so printing a target never leaks them.
///
/// The key need not be in the URL, where `ps` would show it:
/// - `rtmp[s]://host[:port]/app[/more]?key_file=PATH` publishes with the content of the file
///   (one trailing line end stripped) as the key. The whole path is then the application, so
///   `key_file=` must be the URL's last query item: its value is the rest of the URL
///   (percent-decoded), and anything before it (`live2?backup=1&key_file=...`) stays part of
///   the application.
/// - `rtmp[s]://host[:port]/app[/more]` or `.../app/more/`, with no key, publishes with the key
///   in environment variable `INGEST_RTMP_KEY`.
public struct RTMPTarget: Sendable, Equatable, CustomStringConvertible,
  CustomDebugStringConvertible, CustomReflectable
{
  /// The transport: plain TCP or TLS.
  public enum Scheme: String, Sendable {
    case rtmp
    case rtmps

    /// The port used when the URL names none.
    public var defaultPort: Int { self == .rtmp ? 1935 : 443 }
  }

  /// The longest URL accepted, in bytes, the key included wherever it came from.
  public static let maximumLength = 1024
  /// The environment variable holding the stream key when the URL has none.
  public static let keyVariable = "INGEST_RTMP_KEY"

  /// The transport.
  public let scheme: Scheme
  /// Host name or address as written (IPv6 without brackets).
  public let host: String
  /// The TCP port (explicit or the scheme's default).
  public let port: Int
  /// The application name (`live` in `rtmp://host/live/key`).
  public let app: String
  /// The stream key; never printed.
  let streamKey: String
  /// `user:password` when the URL carried credentials; never printed.
  let userInfo: String?

  /// Parses and validates a publish URL, reading the file its `key_file=` names.
  /// - Parameter environment: where `INGEST_RTMP_KEY` is looked up when the URL has no key;
  ///   `nil` (the default) is the process's environment.
  /// - Throws: `RTMPTargetError` naming the part that is wrong (never quoting the key).
  public init(url: String, environment: [String: String]? = nil) throws(RTMPTargetError) {
    let bytes = Array(url.utf8)
    guard bytes.count <= Self.maximumLength else {
      throw .tooLong(length: bytes.count, limit: Self.maximumLength)
    }
    if let bad = bytes.firstIndex(where: { $0 <= 0x20 || $0 == 0x7F }) {
      throw .invalidCharacter(offset: bad)
    }
    guard let schemeEnd = url.firstRange(of: "://") else { throw .unsupportedScheme("") }
    let schemeText = String(url[..<schemeEnd.lowerBound])
    guard let scheme = Scheme(rawValue: schemeText.lowercased()) else {
      throw .unsupportedScheme(schemeText.count <= 16 ? schemeText : String(schemeText.prefix(16)))
    }
    let rest = url[schemeEnd.upperBound...]
    let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
    var authority = rest[..<authorityEnd]
    var userInfo: String?
    if let at = authority.lastIndex(of: "@") {
      userInfo = String(authority[..<at])
      authority = authority[authority.index(after: at)...]
    }
    // A query straight after the host ("rtmp://h?key_file=/k") leaves no application. Looked for
    // only past the credentials, whose password may hold a "?".
    guard !authority.contains("?") else { throw .missingApp }
    let host: Substring
    var portText: Substring?
    if authority.first == "[" {
      guard let close = authority.firstIndex(of: "]") else { throw .missingHost }
      host = authority[authority.index(after: authority.startIndex)..<close]
      let after = authority[authority.index(after: close)...]
      if !after.isEmpty {
        guard after.first == ":" else { throw .invalidPort(String(after.prefix(8))) }
        portText = after.dropFirst()
      }
    } else if let colon = authority.firstIndex(of: ":") {
      host = authority[..<colon]
      portText = authority[authority.index(after: colon)...]
    } else {
      host = authority
    }
    guard !host.isEmpty else { throw .missingHost }
    var port = scheme.defaultPort
    if let portText {
      guard portText.count <= 5, let value = Int(portText), (1...65535).contains(value) else {
        throw .invalidPort(String(portText.prefix(8)))
      }
      port = value
    }
    var path = rest[authorityEnd...].drop(while: { $0 == "/" })
    var keyFile: String?
    if let item = Self.keyFileItem(in: path) {
      let value = path[item.value...]
      guard !value.isEmpty else {
        throw .invalidValue(option: "key_file", reason: "has no value (expected key_file=PATH)")
      }
      keyFile = try Self.percentDecode(value, option: "key_file")
      path = path[..<item.start]
    }

    let app: Substring
    var key: String?
    if keyFile != nil {
      app = path.last == "/" ? path.dropLast() : path
    } else if let lastSlash = path.lastIndex(of: "/") {
      app = path[..<lastSlash]
      let inURL = path[path.index(after: lastSlash)...]
      key = inURL.isEmpty ? nil : String(inURL)
    } else {
      app = path
    }
    guard !app.isEmpty else { throw .missingApp }

    // The bound is on the URL as sent, which holds the key wherever it came from.
    let room =
      Self.maximumLength
      - Self.urlPrefix(scheme, userInfo, String(host), port, String(app)).utf8.count
    if let keyFile {
      key = try RTMPSecret.read(file: keyFile, option: "key_file", maximumBytes: max(room, 0))
    } else if key == nil {
      key = try RTMPSecret.environment(
        Self.keyVariable, in: environment, maximumBytes: max(room, 0))
    }
    guard let key else { throw .missingStreamKey }
    self.scheme = scheme
    self.host = String(host)
    self.port = port
    self.app = String(app)
    self.streamKey = key
    self.userInfo = userInfo
  }

  /// Where a `key_file=` item of the path's query starts (its `?` or `&`) and where its value
  /// starts; `nil` when the query has none.
  private static func keyFileItem(in path: Substring) -> (start: String.Index, value: String.Index)?
  {
    guard let question = path.firstIndex(of: "?") else { return nil }
    let name = "key_file="
    var index = question
    while index < path.endIndex {
      let afterSeparator = path.index(after: index)
      if path[afterSeparator...].hasPrefix(name) {
        return (index, path.index(afterSeparator, offsetBy: name.count))
      }
      guard let next = path[afterSeparator...].firstIndex(of: "&") else { return nil }
      index = next
    }
    return nil
  }

  /// `value` with `%XX` escapes decoded, so a path may hold bytes a URL cannot (`%20`, `%26`).
  private static func percentDecode(_ value: Substring, option: String)
    throws(RTMPTargetError) -> String
  {
    let decoded: [UInt8]
    switch PercentEncoding.decode(value.utf8) {
    case .success(let bytes): decoded = bytes
    case .failure(let malformed):
      throw .invalidValue(
        option: option, reason: "has bad percent-encoding at byte \(malformed.offset)")
    }
    guard let text = String(validating: decoded, as: UTF8.self) else {
      throw .invalidValue(option: option, reason: "is not valid UTF-8 once percent-decoded")
    }
    return text
  }

  /// `rtmp://host:port/app/***`: safe to print and log.
  public var redactedDescription: String {
    "\(scheme.rawValue)://\(userInfo == nil ? "" : "***@")\(Self.bracketed(host)):\(port)/\(app)/***"
  }

  public var description: String { redactedDescription }
  public var debugDescription: String { "RTMPTarget(\(redactedDescription))" }
  public var customMirror: Mirror {
    Mirror(self, children: ["url": redactedDescription], displayStyle: .struct)
  }

  /// The full URL handed to libavformat; contains the key.
  var url: String { Self.urlPrefix(scheme, userInfo, host, port, app) + streamKey }

  /// The URL up to the key: `scheme://[user:password@]host:port/app/`.
  private static func urlPrefix(
    _ scheme: Scheme, _ userInfo: String?, _ host: String, _ port: Int, _ app: String
  ) -> String {
    "\(scheme.rawValue)://\(userInfo.map { "\($0)@" } ?? "")\(bracketed(host)):\(port)/\(app)/"
  }

  /// An IPv6 literal in brackets, as a URL writes it.
  private static func bracketed(_ host: String) -> String {
    host.contains(":") ? "[\(host)]" : host
  }
}
