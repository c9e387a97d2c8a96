import IngestCore

/// Where `--to` sends the stream, parsed from the user's text.
///
/// ```
/// out.ts, file:PATH          a .ts file          (?rate=500k&stall=10s@5s simulate a link)
/// -, file:-                  standard output     (the stream, for `| ffplay -`)
/// null:                      nothing             (?rate=, ?stall= as above)
/// srt://HOST:PORT?...        SRT caller          (latency, passphrase, pbkeylen, streamid, maxbw)
/// rtmp://HOST/APP/KEY        RTMP publish        (rtmps:// for TLS)
/// whip+http://HOST/PATH      WHIP (WebRTC) publish (whip+https:// for TLS; ?token-file=PATH)
/// hls:DIR, DIR/NAME.m3u8     HLS segments and a live playlist in a directory
///                            (?container=ts|fmp4; fMP4 by default for HEVC, TS otherwise;
///                            &audio=both|mix|app|mic: this output's audio, over --audio)
/// rec.mp4, rec.mov           a fragmented MP4 (QuickTime brand for .mov), one fragment per GOP
/// ```
public enum OutputTarget: Equatable, Sendable {
  case file(path: String, shaper: LinkShaper)
  case null(shaper: LinkShaper)
  case srt(url: String)
  case rtmp(url: String)
  /// A WHIP endpoint (`whip+http://` or `whip+https://`), parsed by `IngestWHIP`'s `WHIPTarget`.
  case whip(url: String)
  /// An HLS recording; `container` nil picks by codec (`HLSContainer.preferred(for:)`), and
  /// `audio` nil carries what `--audio` asked for.
  case hls(
    directory: String, playlist: String, container: HLSContainer? = nil,
    audio: AudioSelection? = nil)
  /// A fragmented MP4 file; `quickTime` for a `.mov`.
  case mp4(path: String, quickTime: Bool)

  /// The path a stream to standard output (`--to -`) is written to: a file output whose
  /// descriptor is the process's own standard output, whatever that is (a pipe, a file).
  public static let standardOutputPath = "/dev/stdout"

  /// Whether a file output's `path` is standard output.
  public static func isStandardOutput(_ path: String) -> Bool { path == standardOutputPath }

  /// Whether the output is a live receiver over the network (SRT, RTMP, WHIP).
  public var isNetwork: Bool {
    switch self {
    case .srt, .rtmp, .whip: true
    case .file, .null, .hls, .mp4: false
    }
  }

  /// Parses `--to`.
  /// - Throws: `OutputURLError` naming the part that is wrong (never echoing URL secrets).
  public init(parsing text: String) throws(OutputURLError) {
    let lower = text.lowercased()
    if lower.hasPrefix("srt://") {
      self = .srt(url: text)
      return
    }
    if lower.hasPrefix("rtmp://") || lower.hasPrefix("rtmps://") {
      self = .rtmp(url: text)
      return
    }
    if lower.hasPrefix("whip+http://") || lower.hasPrefix("whip+https://") {
      self = .whip(url: text)
      return
    }
    if lower.hasPrefix("hls:") || Self.hlsPath(text).lowercased().hasSuffix(".m3u8") {
      let (path, container, audio) = try Self.hlsOptions(text)
      if lower.hasPrefix("hls:") {
        let directory = String(path.dropFirst(4))
        guard !directory.isEmpty else { throw .missingPath("hls:") }
        self = .hls(
          directory: directory, playlist: "index.m3u8", container: container, audio: audio)
        return
      }
      let slash = path.lastIndex(of: "/")
      let directory = slash.map { String(path[..<$0]) } ?? "."
      let name = slash.map { String(path[path.index(after: $0)...]) } ?? String(path)
      self = .hls(
        directory: directory.isEmpty ? "/" : directory, playlist: name, container: container,
        audio: audio)
      return
    }
    if lower.hasSuffix(".mp4") || lower.hasSuffix(".mov") {
      let path = lower.hasPrefix("file:") ? String(text.dropFirst(5)) : text
      // A name before the extension: `.mp4` alone is no file name.
      guard path.split(separator: "/").last.map({ $0.count > 4 }) ?? false else {
        throw .missingPath(Self.quotable(text[...]))
      }
      self = .mp4(path: path, quickTime: lower.hasSuffix(".mov"))
      return
    }
    if lower.hasPrefix("null:") {
      let rest = text.dropFirst(5)
      guard rest.isEmpty || rest.hasPrefix("?") else { throw .unexpected(Self.quotable(rest)) }
      self = .null(shaper: try Self.shaper(query: rest.dropFirst()))
      return
    }
    var path = Substring(text)
    if lower.hasPrefix("file:") { path = path.dropFirst(5) }
    var query: Substring = ""
    if let mark = path.lastIndex(of: "?") {
      query = path[path.index(after: mark)...]
      path = path[..<mark]
    }
    guard !path.isEmpty else { throw .missingPath(Self.quotable(text[...])) }
    // `-` is standard output, as for ffmpeg and `--status -`; a file named `-` is `file:./-`.
    if path == "-" {
      self = .file(path: Self.standardOutputPath, shaper: try Self.shaper(query: query))
      return
    }
    guard lower.hasPrefix("file:") || path.lowercased().hasSuffix(".ts") else {
      throw .unknownScheme(Self.quotable(text[...]))
    }
    self = .file(path: String(path), shaper: try Self.shaper(query: query))
  }

  /// The query items an HLS output takes.
  static let hlsOptionNames = ["container", "audio"]

  /// An HLS output's text without its `?container=...&audio=...` query, for the `.m3u8` check.
  /// A `?` followed by anything else is part of the path.
  static func hlsPath(_ text: String) -> Substring {
    guard let mark = text.lastIndex(of: "?") else { return text[...] }
    let items = text[text.index(after: mark)...].split(separator: "&")
    let isQuery =
      !items.isEmpty
      && items.allSatisfy { item in hlsOptionNames.contains { item.hasPrefix($0 + "=") } }
    return isQuery ? text[..<mark] : text[...]
  }

  /// Splits `hls:DIR?container=fmp4&audio=both` into the path, the container and the audio
  /// asked for (nil: not asked).
  static func hlsOptions(_ text: String) throws(OutputURLError) -> (
    Substring, HLSContainer?, AudioSelection?
  ) {
    let path = hlsPath(text)
    guard path.endIndex < text.endIndex else { return (path, nil, nil) }
    var container: HLSContainer?
    var audio: AudioSelection?
    for item in text[text.index(after: path.endIndex)...].split(separator: "&") {
      let value = item.drop { $0 != "=" }.dropFirst()
      if item.hasPrefix("container=") {
        guard let parsed = HLSContainer(rawValue: String(value)) else {
          throw .badContainer(quotable(value))
        }
        container = parsed
      } else {
        guard let parsed = AudioSelection(rawValue: String(value)) else {
          throw .badAudio(quotable(value))
        }
        audio = parsed
      }
    }
    return (path, container, audio)
  }

  /// Parses `rate=800k&stall=10s@5s`.
  static func shaper(query: Substring) throws(OutputURLError) -> LinkShaper {
    var shaper = LinkShaper()
    for pair in query.split(separator: "&") where !pair.isEmpty {
      let parts = pair.split(separator: "=", maxSplits: 1)
      guard parts.count == 2 else { throw .badOption("query item without '='") }
      switch parts[0] {
      case "rate":
        guard let rate = parseRate(parts[1]), rate > 0 else { throw .badOption(quotableItem(pair)) }
        shaper.bitsPerSecond = rate
      case "stall":
        let times = parts[1].split(separator: "@")
        guard times.count == 2, let duration = parseDuration(times[0]),
          let start = parseDuration(times[1])
        else { throw .badOption(quotableItem(pair)) }
        shaper.stallDuration = duration
        shaper.stallStart = start
      default:
        let key = parts[0]
        let plausible =
          key.utf8.count <= 32
          && key.utf8.allSatisfy {
            $0 < 0x80 && (Character(Unicode.Scalar($0)).isLetter || $0 == 0x5F)
          }
        throw .unknownOption(plausible ? String(key) : "query item")
      }
    }
    return shaper
  }

  /// A `rate=`/`stall=` item as an error may quote it: whole when it is short and plain, else
  /// only its key, since it may have swallowed the rest of a mistyped URL.
  static func quotableItem(_ pair: Substring) -> String {
    let plain =
      pair.utf8.count <= 32
      && pair.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != 0x3F && $0 != 0x40 }
    return plain ? String(pair) : String(pair.prefix { $0 != "=" }) + "=..."
  }

  /// What of a mistyped `--to` an error may quote: a mistyped URL (`srtt://...`) may carry a
  /// passphrase, a stream key or `user:password@`, so only its scheme is kept; a path keeps what
  /// comes before any `?` query.
  static func quotable(_ text: Substring) -> String {
    if let separator = text.firstRange(of: "://") {
      let scheme = text[..<separator.lowerBound]
      let plain =
        scheme.utf8.count <= 16
        && scheme.utf8.allSatisfy {
          $0 < 0x80
            && (Character(Unicode.Scalar($0)).isLetter || Character(Unicode.Scalar($0)).isNumber
              || $0 == 0x2B || $0 == 0x2D || $0 == 0x2E)
        }
      return (plain ? String(scheme) : "") + "://..."
    }
    guard let mark = text.firstIndex(of: "?") else { return String(text) }
    return String(text[..<mark]) + "?..."
  }

  /// `800k`, `1.5M`, `500000` in bits per second.
  static func parseRate(_ text: Substring) -> Int64? {
    var digits = text
    var scale = 1.0
    switch text.last {
    case "k", "K": scale = 1e3
    case "m", "M": scale = 1e6
    case "g", "G": scale = 1e9
    default: break
    }
    if scale != 1 { digits = digits.dropLast() }
    guard let value = Double(digits), value.isFinite, value > 0, value * scale < 1e12 else {
      return nil
    }
    return Int64(value * scale)
  }

  /// `10s`, `500ms`, `2.5` (seconds) as a span.
  static func parseDuration(_ text: Substring) -> TimeSpan? {
    var number = text
    var milliseconds = false
    if text.hasSuffix("ms") {
      number = text.dropLast(2)
      milliseconds = true
    } else if text.hasSuffix("s") {
      number = text.dropLast()
    }
    guard let value = Double(number), value.isFinite, value >= 0, value < 1e6 else { return nil }
    return milliseconds ? TimeSpan(milliseconds: value) : TimeSpan(seconds: value)
  }
}

/// A `--to` value that cannot be used.
public enum OutputURLError: Error, Equatable, Sendable, CustomStringConvertible {
  case unknownScheme(String)
  case missingPath(String)
  case badOption(String)
  case unknownOption(String)
  case unexpected(String)
  case badContainer(String)
  case badAudio(String)

  public var description: String {
    switch self {
    case .unknownScheme(let text):
      "'\(text)' is not an output: use a .ts, .mp4 or .mov path, file:PATH, - (standard output), null:, srt://, rtmp://, rtmps://, whip+http://, whip+https://, hls:DIR or a .m3u8 path"
    case .missingPath(let text): "'\(text)' names no path"
    case .badOption(let text): "bad option '\(text)' (expected rate=800k or stall=10s@5s)"
    case .unknownOption(let name): "unknown option '\(name)' (known: rate, stall)"
    case .unexpected(let text): "unexpected '\(text)' after null:"
    case .badContainer(let text):
      "unknown HLS container '\(text)' (expected container=ts or container=fmp4)"
    case .badAudio(let text):
      "unknown HLS audio '\(text)' (expected audio=both, mix, app or mic)"
    }
  }
}
