/// A parsed RTMP/RTMPS publish URL: `rtmp[s]://[user:password@]host[:port]/app[/more]/key`.
///
/// The last path component is the stream key (a query such as `key?token=x` stays part of it); every
/// component before it is the application. The key and any credentials are kept out of
/// `description`, `debugDescription` and reflection, so printing a target never leaks them.
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

  /// The longest URL accepted, in bytes.
  public static let maximumLength = 1024

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

  /// Parses and validates a publish URL.
  /// - Throws: `RTMPTargetError` naming the part that is wrong (never quoting the key).
  public init(url: String) throws(RTMPTargetError) {
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
    let path = rest[authorityEnd...].drop(while: { $0 == "/" })
    guard let lastSlash = path.lastIndex(of: "/") else {
      throw path.isEmpty ? .missingApp : .missingStreamKey
    }
    let app = path[..<lastSlash]
    let key = path[path.index(after: lastSlash)...]
    guard !app.isEmpty else { throw .missingApp }
    guard !key.isEmpty else { throw .missingStreamKey }
    self.scheme = scheme
    self.host = String(host)
    self.port = port
    self.app = String(app)
    self.streamKey = String(key)
    self.userInfo = userInfo
  }

  /// `rtmp://host:port/app/***`: safe to print and log.
  public var redactedDescription: String {
    "\(scheme.rawValue)://\(userInfo == nil ? "" : "***@")\(hostForURL):\(port)/\(app)/***"
  }

  public var description: String { redactedDescription }
  public var debugDescription: String { "RTMPTarget(\(redactedDescription))" }
  public var customMirror: Mirror {
    Mirror(self, children: ["url": redactedDescription], displayStyle: .struct)
  }

  /// The full URL handed to libavformat; contains the key.
  var url: String {
    "\(scheme.rawValue)://\(userInfo.map { "\($0)@" } ?? "")\(hostForURL):\(port)/\(app)/\(streamKey)"
  }

  private var hostForURL: String { host.contains(":") ? "[\(host)]" : host }
}
