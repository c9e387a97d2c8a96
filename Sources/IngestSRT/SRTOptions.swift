import IngestCore

/// Where and how an SRT sink connects, parsed from
/// `srt://HOST:PORT?latency=MS|auto&passphrase=..&pbkeylen=16|24|32&streamid=..&maxbw=..&conntimeo=MS`
/// `&stall_timeout=S&mode=caller|listener|rendezvous&port=LOCALPORT`.
///
/// The secrets need not be in the URL, where `ps` would show them: `passphrase_file=PATH` and
/// `streamid_file=PATH` read them from a file (its content, one trailing line end stripped), and
/// when the URL gives neither form, `INGEST_SRT_PASSPHRASE` and `INGEST_SRT_STREAMID` are used.
///
/// Values are percent-decoded. `description` and `debugDescription` are the redacted form, so
/// interpolating options into a log line cannot leak the passphrase or the stream id.
public struct SRTOptions: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible
{
  /// Host name or address literal (IPv6 without brackets).
  public var host: String
  /// UDP port of the listener (caller), the one to listen on (listener) or the peer's
  /// (rendezvous).
  public var port: UInt16
  /// How the connection is made.
  public var mode: SRTMode
  /// Rendezvous only: the local UDP port (`port=`); `nil` binds the same port as the peer's.
  public var localPort: UInt16?
  /// Receiver latency proposed to the peer, in milliseconds; `nil` keeps libsrt's default
  /// (or, with `latencyIsAuto`, the latency chosen from the round trip).
  public var latencyMilliseconds: Int?
  /// `latency=auto`: a caller measures the round trip before connecting and proposes
  /// max(120 ms, 4 × RTT), as the SRT deployment guide advises.
  public var latencyIsAuto = false
  /// AES passphrase, 10 to 79 bytes; `nil` for an unencrypted stream.
  public var passphrase: String?
  /// AES key length in bytes (16, 24 or 32); only with a passphrase.
  public var keyLength: Int?
  /// Stream id sent to the listener (at most 512 bytes), often carrying access credentials.
  public var streamID: String?
  /// `SRTO_MAXBW` in bytes per second: -1 unlimited, 0 relative to the input rate, or a cap.
  public var maxBandwidth: Int64?
  /// How long one connection attempt waits for the listener (`SRTO_CONNTIMEO`), in milliseconds;
  /// `nil` keeps `defaultConnectTimeoutMilliseconds`.
  public var connectTimeoutMilliseconds: Int?
  /// How long a connection may hold unacknowledged data without any of it being acknowledged
  /// before it is dropped and made again, in milliseconds; `nil` keeps
  /// `defaultStallTimeoutMilliseconds`.
  public var stallTimeoutMilliseconds: Int?

  /// libsrt's default latency, used when none is given.
  public static let defaultLatencyMilliseconds = 120
  /// Connection attempt limit when none is given (libsrt's own default).
  public static let defaultConnectTimeoutMilliseconds = 3000
  /// No-progress limit when none is given.
  public static let defaultStallTimeoutMilliseconds = 5000
  /// The longest stream id libsrt accepts.
  public static let maxStreamIDBytes = 512
  /// The environment variable holding the passphrase when the URL has none.
  public static let passphraseVariable = "INGEST_SRT_PASSPHRASE"
  /// The environment variable holding the stream id when the URL has none.
  public static let streamIDVariable = "INGEST_SRT_STREAMID"
  static let passphraseBytes = 10...79
  static let streamIDBytes = 1...maxStreamIDBytes
  static let latencyRange = 0...60_000
  static let connectTimeoutRange = 100...120_000
  static let stallTimeoutRange = 1000...3_600_000

  /// Options checked against the same rules as a parsed URL.
  public init(
    host: String, port: UInt16, latencyMilliseconds: Int? = nil, passphrase: String? = nil,
    keyLength: Int? = nil, streamID: String? = nil, maxBandwidth: Int64? = nil,
    connectTimeoutMilliseconds: Int? = nil, stallTimeoutMilliseconds: Int? = nil,
    mode: SRTMode = .caller, localPort: UInt16? = nil
  ) throws(SRTOptionsError) {
    self.host = host
    self.port = port
    self.mode = mode
    self.localPort = localPort
    self.latencyMilliseconds = latencyMilliseconds
    self.passphrase = passphrase
    self.keyLength = keyLength
    self.streamID = streamID
    self.maxBandwidth = maxBandwidth
    self.connectTimeoutMilliseconds = connectTimeoutMilliseconds
    self.stallTimeoutMilliseconds = stallTimeoutMilliseconds
    try validate()
  }

  /// Parses an `srt://` URL, reading the files its `passphrase_file=` and `streamid_file=` name.
  /// Unknown or repeated options are errors, so a typo never silently sends an unencrypted
  /// stream; so is a secret variable that is set but empty.
  /// - Parameter environment: where `INGEST_SRT_PASSPHRASE` and `INGEST_SRT_STREAMID` are
  ///   looked up; `nil` (the default) is the process's environment.
  public init(parsing url: String, environment: [String: String]? = nil)
    throws(SRTOptionsError)
  {
    let bytes = Array(url.utf8)
    let schemeEnd = Self.find(Array("://".utf8), in: bytes)
    guard let schemeEnd else { throw .notSRTScheme(found: "") }
    let scheme = String(decoding: bytes[..<schemeEnd], as: UTF8.self)
    guard scheme.lowercased() == "srt" else {
      // Only echo something that looks like a scheme: a malformed URL may hold a secret there.
      let plausible = scheme.utf8.count <= 16 && scheme.utf8.allSatisfy { Self.isSchemeByte($0) }
      throw .notSRTScheme(found: plausible ? scheme : "")
    }
    var rest = bytes[(schemeEnd + 3)...]

    var query: ArraySlice<UInt8> = []
    if let q = rest.firstIndex(of: UInt8(ascii: "?")) {
      query = rest[(q + 1)...]
      rest = rest[..<q]
    }
    // Authority, then an optional lone "/".
    if rest.last == UInt8(ascii: "/") { rest = rest.dropLast() }
    guard !rest.contains(UInt8(ascii: "/")) else { throw .unexpectedPath }
    guard !rest.isEmpty else { throw .missingHost }

    let host: String
    var portPart: ArraySlice<UInt8>
    if rest.first == UInt8(ascii: "[") {
      guard let close = rest.firstIndex(of: UInt8(ascii: "]")) else { throw .unterminatedIPv6Host }
      host = String(decoding: rest[(rest.startIndex + 1)..<close], as: UTF8.self)
      portPart = rest[(close + 1)...]
      guard portPart.first == UInt8(ascii: ":") else { throw .missingPort }
      portPart = portPart.dropFirst()
    } else {
      guard let colon = rest.lastIndex(of: UInt8(ascii: ":")) else {
        if rest.isEmpty { throw .missingHost }
        throw .missingPort
      }
      host = String(decoding: rest[..<colon], as: UTF8.self)
      portPart = rest[(colon + 1)...]
    }
    guard !host.isEmpty else { throw .missingHost }
    guard !host.utf8.contains(where: { $0 <= 0x20 || $0 == UInt8(ascii: "@") || $0 >= 0x7F }) else {
      throw .invalidValue(option: "host", reason: "must be a plain host name or address literal")
    }
    guard !portPart.isEmpty else { throw .missingPort }
    let portText = String(decoding: portPart, as: UTF8.self)
    guard portPart.count <= 5, portPart.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
      let portNumber = Int(portText), (1...65535).contains(portNumber)
    else { throw .invalidPort(portText) }

    var latency: Int?
    var latencyIsAuto = false
    var passphrase: String?
    var passphraseFile: String?
    var keyLength: Int?
    var streamID: String?
    var streamIDFile: String?
    var maxBandwidth: Int64?
    var connectTimeout: Int?
    var stallTimeout: Int?
    var mode = SRTMode.caller
    var localPort: UInt16?
    var seen: Set<String> = []

    let items = query.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true)
    for (position, item) in items.enumerated() {
      let equals = item.firstIndex(of: UInt8(ascii: "="))
      let key = String(decoding: item[..<(equals ?? item.endIndex)], as: UTF8.self)
      guard Self.knownKeys.contains(key) else {
        // A stray secret pasted without its key must not come back in the message.
        let plausible =
          equals != nil && key.utf8.count <= 32
          && key.utf8.allSatisfy { Self.isSchemeByte($0) || $0 == UInt8(ascii: "_") }
        throw .unknownOption(plausible ? key : "query item \(position + 1)")
      }
      guard seen.insert(key).inserted else { throw .duplicateOption(key) }
      guard let equals, equals + 1 < item.endIndex else { throw .missingValue(option: key) }
      let value = try Self.percentDecode(item[(equals + 1)...], option: key)
      switch key {
      case "latency" where value == "auto": latencyIsAuto = true
      case "latency": latency = try Self.integer(value, option: key)
      case "passphrase": passphrase = value
      case "passphrase_file": passphraseFile = value
      case "pbkeylen": keyLength = try Self.integer(value, option: key)
      case "streamid": streamID = value
      case "streamid_file": streamIDFile = value
      case "maxbw":
        guard let number = Int64(value) else {
          throw .invalidValue(option: key, reason: "must be an integer (bytes per second)")
        }
        maxBandwidth = number
      case "conntimeo": connectTimeout = try Self.integer(value, option: key)
      case "stall_timeout":
        // Seconds, like the CLI's other durations; fractions allowed.
        guard let seconds = Double(value), seconds.isFinite, seconds >= 0, seconds <= 3600 else {
          throw .invalidValue(option: key, reason: "must be a number of seconds, 1 to 3600")
        }
        stallTimeout = Int((seconds * 1000).rounded())
      case "port":
        guard let number = Int(value), (1...65535).contains(number) else {
          throw .invalidValue(option: key, reason: "must be a UDP port number, 1 to 65535")
        }
        localPort = UInt16(number)
      default:  // "mode"
        guard let parsed = SRTMode(rawValue: value.lowercased()) else {
          // A "?" typed for "&" makes the rest of the URL, secrets included, part of this value.
          let plain = value.utf8.count <= 16 && value.utf8.allSatisfy { Self.isSchemeByte($0) }
          throw .unsupportedMode(plain ? value : "(not shown)")
        }
        mode = parsed
      }
    }
    // Files are read only once every query item has parsed, so a typo costs no read.
    passphrase = try Self.secret(
      passphrase, option: "passphrase", file: passphraseFile, variable: Self.passphraseVariable,
      environment: environment, allowed: Self.passphraseBytes)
    streamID = try Self.secret(
      streamID, option: "streamid", file: streamIDFile, variable: Self.streamIDVariable,
      environment: environment, allowed: Self.streamIDBytes)
    try self.init(
      host: host, port: UInt16(portNumber), latencyMilliseconds: latency, passphrase: passphrase,
      keyLength: keyLength, streamID: streamID, maxBandwidth: maxBandwidth,
      connectTimeoutMilliseconds: connectTimeout, stallTimeoutMilliseconds: stallTimeout,
      mode: mode, localPort: localPort)
    self.latencyIsAuto = latencyIsAuto
  }

  /// The URL with the passphrase and the stream id replaced by `***` (wherever they came from),
  /// safe to print.
  public var redacted: String {
    var text = "srt://"
    text += host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host
    text += ":\(port)"
    var items: [String] = []
    if mode != .caller { items.append("mode=\(mode.rawValue)") }
    if let localPort { items.append("port=\(localPort)") }
    if latencyIsAuto { items.append("latency=auto") }
    if let latencyMilliseconds { items.append("latency=\(latencyMilliseconds)") }
    if passphrase != nil { items.append("passphrase=***") }
    if let keyLength { items.append("pbkeylen=\(keyLength)") }
    if streamID != nil { items.append("streamid=***") }
    if let maxBandwidth { items.append("maxbw=\(maxBandwidth)") }
    if let connectTimeoutMilliseconds { items.append("conntimeo=\(connectTimeoutMilliseconds)") }
    if let stallTimeoutMilliseconds {
      let seconds =
        stallTimeoutMilliseconds % 1000 == 0
        ? "\(stallTimeoutMilliseconds / 1000)"
        : JSONObject.fixed(Double(stallTimeoutMilliseconds) / 1000, decimals: 3)
      items.append("stall_timeout=\(seconds)")
    }
    if !items.isEmpty {
      text += "?"
      var first = true
      for item in items {
        if !first { text += "&" }
        text += item
        first = false
      }
    }
    return text
  }

  public var description: String { redacted }
  public var debugDescription: String { "SRTOptions(\(redacted))" }

  /// The latency asked for: the one given, or libsrt's default (also the least `auto` picks).
  public var effectiveLatencyMilliseconds: Int {
    latencyMilliseconds ?? Self.defaultLatencyMilliseconds
  }

  /// The connection attempt limit in effect.
  public var effectiveConnectTimeoutMilliseconds: Int {
    connectTimeoutMilliseconds ?? Self.defaultConnectTimeoutMilliseconds
  }

  /// The no-progress limit in effect.
  public var effectiveStallTimeoutMilliseconds: Int {
    stallTimeoutMilliseconds ?? Self.defaultStallTimeoutMilliseconds
  }

  private func validate() throws(SRTOptionsError) {
    guard !host.isEmpty else { throw .missingHost }
    guard port != 0 else { throw .invalidPort("0") }
    if let latencyMilliseconds, !Self.latencyRange.contains(latencyMilliseconds) {
      throw .invalidValue(option: "latency", reason: "must be 0...60000 milliseconds")
    }
    if let passphrase, !Self.passphraseBytes.contains(passphrase.utf8.count) {
      throw .invalidValue(option: "passphrase", reason: "must be 10 to 79 bytes long")
    }
    if let passphrase, passphrase.utf8.contains(where: Self.isControl) {
      throw .controlCharacter(option: "passphrase")
    }
    if let streamID, streamID.utf8.contains(where: Self.isControl) {
      throw .controlCharacter(option: "streamid")
    }
    if let keyLength {
      guard [16, 24, 32].contains(keyLength) else {
        throw .invalidValue(option: "pbkeylen", reason: "must be 16, 24 or 32")
      }
      guard passphrase != nil else {
        throw .invalidValue(option: "pbkeylen", reason: "needs a passphrase")
      }
    }
    if let streamID {
      guard !streamID.isEmpty, streamID.utf8.count <= Self.maxStreamIDBytes else {
        throw .invalidValue(option: "streamid", reason: "must be 1 to 512 bytes long")
      }
    }
    if let connectTimeoutMilliseconds,
      !Self.connectTimeoutRange.contains(connectTimeoutMilliseconds)
    {
      throw .invalidValue(option: "conntimeo", reason: "must be 100...120000 milliseconds")
    }
    if localPort != nil, mode != .rendezvous {
      throw .invalidValue(option: "port", reason: "is the local port of mode=rendezvous only")
    }
    if let stallTimeoutMilliseconds, !Self.stallTimeoutRange.contains(stallTimeoutMilliseconds) {
      throw .invalidValue(option: "stall_timeout", reason: "must be a number of seconds, 1 to 3600")
    }
    if let maxBandwidth, maxBandwidth < -1 {
      throw .invalidValue(
        option: "maxbw", reason: "must be -1 (unlimited), 0 (relative to input) or bytes per second"
      )
    }
  }

  private static let knownKeys: Set<String> = [
    "latency", "passphrase", "passphrase_file", "pbkeylen", "streamid", "streamid_file", "maxbw",
    "conntimeo", "stall_timeout", "mode", "port",
  ]

  /// The secret `option` of the URL: its value, else the content of its `_file` (both given is
  /// an error), else environment variable `variable`, else none.
  private static func secret(
    _ value: String?, option: String, file: String?, variable: String,
    environment: [String: String]?, allowed: ClosedRange<Int>
  ) throws(SRTOptionsError) -> String? {
    if let file {
      guard value == nil else { throw .conflictingOptions(option, option + "_file") }
      return try SRTSecret.read(file: file, option: option + "_file", allowed: allowed)
    }
    if let value { return value }
    return try SRTSecret.environment(variable, in: environment, allowed: allowed)
  }

  private static func integer(_ text: String, option: String) throws(SRTOptionsError) -> Int {
    guard let number = Int(text) else {
      throw .invalidValue(option: option, reason: "must be an integer")
    }
    return number
  }

  private static func percentDecode(_ value: ArraySlice<UInt8>, option: String)
    throws(SRTOptionsError) -> String
  {
    let decoded: [UInt8]
    switch PercentEncoding.decode(value) {
    case .success(let bytes): decoded = bytes
    case .failure(let malformed):
      throw .invalidPercentEncoding(option: option, offset: malformed.offset)
    }
    guard let text = String(validating: decoded, as: UTF8.self) else {
      throw .invalidUTF8(option: option)
    }
    return text
  }

  /// A C0 control character or DEL, which no passphrase or stream id is meant to hold.
  static func isControl(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x7F }

  private static func isSchemeByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "-"),
      UInt8(ascii: "."):
      true
    default: false
    }
  }

  private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
    guard haystack.count >= needle.count else { return nil }
    for start in 0...(haystack.count - needle.count)
    where haystack[start..<(start + needle.count)].elementsEqual(needle) {
      return start
    }
    return nil
  }
}
