import IngestCore
import IngestPOSIX

/// A WHIP output's `--to` URL, parsed: `whip+http://HOST[:PORT]/PATH` or `whip+https://…`, with
/// the bearer token from `?token-file=PATH` or the environment variable `INGEST_WHIP_TOKEN`
/// (`docs/secrets.md`). A token written into the URL (`token=`) is refused: it would be on the
/// command line, where every user of the machine reads it. `?profiles=high,main,baseline`
/// orders the H.264 profiles a live run offers (`docs/whip.md`).
public struct WHIPTarget: Sendable, Equatable {
  /// The environment variable that carries the bearer token, here and in `ingest-whip`'s
  /// environment.
  public static let tokenVariable = "INGEST_WHIP_TOKEN"
  /// The longest token taken (a JWT with claims is a few kilobytes).
  public static let maximumTokenBytes = 8192

  /// The endpoint as `ingest-whip` POSTs to it: `http(s)://HOST[:PORT]/PATH[?QUERY]`, without
  /// `whip+` and without `token-file=`.
  public var endpoint: String
  /// The bearer token, when one is given.
  public var token: String?
  /// The H.264 profiles to offer, most preferred first, from `?profiles=`; nil when the URL
  /// names none (a live run then offers `H264Profile.defaultPreference`).
  public var profiles: [H264Profile]?
  /// The URL for people: scheme, host and port, and the path with its last element as `***`
  /// (a WHIP path often carries a stream key).
  public var redacted: String

  /// Parses `text`, reading the token's file or variable.
  /// - Parameter environment: the variables to read instead of the process's (tests).
  public init(parsing text: String, environment: [String: String]? = nil) throws(WHIPTargetError) {
    let lower = text.lowercased()
    guard lower.hasPrefix("whip+http://") || lower.hasPrefix("whip+https://") else {
      throw .scheme
    }
    var url = String(text.dropFirst(5))
    let schemeEnd = url.firstRange(of: "://")!.upperBound
    let hostEnd = url[schemeEnd...].firstIndex(where: { $0 == "/" || $0 == "?" }) ?? url.endIndex
    let host = url[schemeEnd..<hostEnd]
    guard !host.isEmpty, !host.contains("@") else {
      throw host.isEmpty ? .missingHost : .credentialsInURL
    }
    var tokenFile: String?
    var profiles: [H264Profile]?
    if let mark = url.firstIndex(of: "?") {
      var kept: [Substring] = []
      for item in url[url.index(after: mark)...].split(separator: "&") {
        if item.hasPrefix("token-file=") {
          guard tokenFile == nil else { throw .twice("token-file") }
          let raw = item.dropFirst("token-file=".count)
          guard case .success(let path) = PercentEncoding.decode(raw.utf8), !path.isEmpty else {
            throw .badTokenFile
          }
          tokenFile = String(decoding: path, as: UTF8.self)
        } else if item.hasPrefix("profiles=") {
          guard profiles == nil else { throw .twice("profiles") }
          profiles = try Self.profiles(item.dropFirst("profiles=".count))
        } else if item.hasPrefix("token=") || item.hasPrefix("access_token=") {
          throw .tokenInURL
        } else {
          kept.append(item)
        }
      }
      url = String(url[..<mark]) + (kept.isEmpty ? "" : "?" + kept.joined(separator: "&"))
    }
    endpoint = url
    redacted = Self.redact(url)
    self.profiles = profiles
    if let tokenFile {
      let bytes: [UInt8]
      do { bytes = try SecretSource.file(tokenFile, maximumBytes: Self.maximumTokenBytes) } catch {
        throw .unreadableTokenFile(path: tokenFile, reason: error.description)
      }
      token = try Self.checked(bytes, source: "the content of '\(tokenFile)'")
    } else if let bytes = SecretSource.environment(Self.tokenVariable, in: environment) {
      guard !bytes.isEmpty else { throw .emptyVariable }
      token = try Self.checked(bytes, source: "environment variable \(Self.tokenVariable)")
    }
  }

  /// The profiles a live run offers for the `--to` URL `text`, without reading its token: those
  /// its `profiles=` names, else `H264Profile.defaultPreference` (a wrong list is reported
  /// when the output is made).
  public static func offeredProfiles(in text: String) -> [H264Profile] {
    guard let mark = text.firstIndex(of: "?") else { return H264Profile.defaultPreference }
    for item in text[text.index(after: mark)...].split(separator: "&")
    where item.hasPrefix("profiles=") {
      return (try? profiles(item.dropFirst("profiles=".count))) ?? H264Profile.defaultPreference
    }
    return H264Profile.defaultPreference
  }

  /// `high,main,baseline`: each profile once, at least one.
  static func profiles(_ text: Substring) throws(WHIPTargetError) -> [H264Profile] {
    var list: [H264Profile] = []
    for name in text.split(separator: ",", omittingEmptySubsequences: false) {
      guard let profile = H264Profile(rawValue: String(name)) else {
        let plain = name.count <= 24 && name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" }
        throw .unknownProfile(plain ? String(name) : "…")
      }
      guard !list.contains(profile) else { throw .repeatedProfile(profile.rawValue) }
      list.append(profile)
    }
    return list
  }

  /// A token is visible ASCII on one line (RFC 6750's b64token and more), within its size.
  static func checked(_ bytes: [UInt8], source: String) throws(WHIPTargetError) -> String {
    guard !bytes.isEmpty, bytes.count <= maximumTokenBytes,
      bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
    else { throw .badToken(source: source) }
    return String(decoding: bytes, as: UTF8.self)
  }

  static func redact(_ url: String) -> String {
    let schemeEnd = url.firstRange(of: "://")!.upperBound
    let pathStart = url[schemeEnd...].firstIndex(where: { $0 == "/" || $0 == "?" }) ?? url.endIndex
    let origin = "whip+" + url[..<pathStart]
    let path = url[pathStart...].prefix { $0 != "?" }
    var elements = path.split(separator: "/", omittingEmptySubsequences: false)
    guard elements.count > 2 || (elements.count == 2 && !elements[1].isEmpty) else {
      return origin + path
    }
    elements[elements.count - 1] = "***"
    return origin + elements.joined(separator: "/")
  }
}

/// A WHIP `--to` URL that cannot be used; never quotes the token.
public enum WHIPTargetError: Error, Equatable, Sendable, CustomStringConvertible {
  case scheme
  case missingHost
  case credentialsInURL
  case tokenInURL
  case twice(String)
  case badTokenFile
  case unreadableTokenFile(path: String, reason: String)
  case emptyVariable
  case badToken(source: String)
  /// A name in `profiles=` that is not `baseline`, `main` or `high`.
  case unknownProfile(String)
  case repeatedProfile(String)

  public var description: String {
    switch self {
    case .scheme: "a WHIP URL starts with whip+http:// or whip+https://"
    case .missingHost: "WHIP URL names no host"
    case .credentialsInURL:
      "WHIP URL carries user credentials; give a bearer token with token-file= or \(WHIPTarget.tokenVariable)"
    case .tokenInURL:
      "a token in the WHIP URL would be on the command line; use token-file=PATH or \(WHIPTarget.tokenVariable)"
    case .twice(let name): "WHIP URL option '\(name)' is given twice"
    case .badTokenFile: "WHIP URL option 'token-file' names no path"
    case .unreadableTokenFile(let path, let reason):
      "WHIP URL option 'token-file': cannot read '\(path)': \(reason)"
    case .emptyVariable: "environment variable \(WHIPTarget.tokenVariable) is set but empty"
    case .unknownProfile(let name):
      "WHIP URL option 'profiles': unknown H.264 profile '\(name)' (known: baseline, main, high)"
    case .repeatedProfile(let name):
      "WHIP URL option 'profiles' names '\(name)' twice"
    case .badToken(let source):
      "\(source) is not a bearer token (1 to \(WHIPTarget.maximumTokenBytes) visible ASCII characters on one line)"
    }
  }
}
