/// The append-only journal of an HLS recording directory: the source of truth for recovery.
///
/// One text line per event, each written with a single `write` and synced:
///
/// ```
/// run index.m3u8 2 6                                      a run starts: playlist, target s, window
/// open seg00042.ts 0 2026-03-01T12:34:56.789Z             a segment is being written (.part)
/// segment seg00042.ts 2.002000 123456 0 2026-03-01T12:34:56.789Z
///                                                         complete: seconds, bytes, discontinuity, PDT
/// end                                                     the recording was finished or recovered
/// ```
///
/// An fMP4 recording adds its initialization sections, each recorded once its file is synced
/// and in place, and names the one each segment needs after the date:
///
/// ```
/// map init00042.mp4 1187                                  an initialization section: bytes
/// open seg00042.m4s 1 2026-03-01T12:34:56.789Z init00042.mp4
/// segment seg00042.m4s 2.002000 123456 1 2026-03-01T12:34:56.789Z init00042.mp4
/// ```
///
/// A recording is unfinished when lines follow the last `end` (or there is none). A torn or
/// malformed line is skipped and reported, never fatal. A segment recorded again (recovery keeps
/// a `.part` whose complete record the disk lost) takes its latest record, in its first place.
public struct HLSJournal: Equatable, Sendable {
  /// The journal's file name inside the recording directory.
  public static let fileName = "journal"
  /// Longest line accepted; longer ones are malformed (bounds the parser's memory).
  public static let maximumLineLength = 1024

  /// A segment that was opened but not recorded as complete.
  public struct OpenSegment: Equatable, Sendable {
    public var name: String
    public var discontinuity: Bool
    public var programDateTime: Int64
    /// The initialization section it needs (fMP4), nil for a TS segment.
    public var map: String?
  }

  /// A line that was skipped.
  public struct Issue: Equatable, Sendable, CustomStringConvertible {
    /// 1-based line number.
    public var line: Int
    public var reason: String
    public var description: String { "line \(line): \(reason)" }
  }

  /// Complete segments in the order they were recorded.
  public internal(set) var segments: [HLSSegment] = []
  /// Initialization sections in the order they were recorded (fMP4 recordings).
  public internal(set) var maps: [HLSMap] = []
  /// The segment being written when the journal ends, if any.
  public internal(set) var openSegment: OpenSegment?
  /// Whether the last event is `end`.
  public internal(set) var isFinished = false
  /// Playlist name, target duration and window of the last `run` line.
  public internal(set) var playlistName: String?
  public internal(set) var targetDuration: Int?
  public internal(set) var window: Int?
  /// Skipped lines.
  public internal(set) var issues: [Issue] = []
  /// Whether the text ends inside a line (a write cut by a kill): whoever appends next must end
  /// that line first, or its first line would be glued to the torn one and lost.
  public internal(set) var endsWithTornLine = false
  /// Whether a byte outside printable ASCII appeared: no journal line holds one, so a file with
  /// one and no journal line is some other program's (`isForeign`).
  public internal(set) var hasForeignBytes = false

  /// Whether this is not a journal at all: not one line of ours, only lines that are not (a
  /// single torn line is what a run killed before its first line leaves, unless it holds bytes
  /// no journal line has).
  public var isForeign: Bool {
    let recognized =
      playlistName != nil || !segments.isEmpty || openSegment != nil || isFinished
    guard !recognized, !issues.isEmpty else { return false }
    return hasForeignBytes || !endsWithTornLine || issues.count > 1
  }

  /// Whether `byte` may be part of a journal line (its newline aside).
  static func isJournalByte(_ byte: UInt8) -> Bool { byte >= 0x20 && byte < 0x7F }

  /// `text` for a message: bytes outside printable ASCII as `\xNN`, so that a foreign file never
  /// reaches the terminal raw.
  static func printable(_ text: Substring) -> String {
    var out = ""
    for byte in text.utf8 {
      if isJournalByte(byte) {
        out.unicodeScalars.append(Unicode.Scalar(byte))
      } else {
        out += "\\x" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
      }
    }
    return out
  }

  public init() {}

  /// The initialization section recorded as `name`, the latest if it was recorded twice.
  public func map(named name: String) -> HLSMap? { maps.last { $0.name == name } }

  /// Parses a whole journal text (tests and small journals; `HLSJournalReader` streams a file).
  public static func parse(_ text: String) -> HLSJournal {
    var journal = HLSJournal()
    var number = 0
    var rest = Substring(text)
    while !rest.isEmpty {
      number += 1
      guard let newline = rest.firstIndex(of: "\n") else {
        journal.issues.append(Issue(line: number, reason: "torn line (no newline)"))
        journal.endsWithTornLine = true
        if !rest.utf8.allSatisfy(Self.isJournalByte) { journal.hasForeignBytes = true }
        break
      }
      if !journal.hasForeignBytes && !rest[..<newline].utf8.allSatisfy(Self.isJournalByte) {
        journal.hasForeignBytes = true
      }
      journal.apply(line: rest[..<newline], number: number)
      rest = rest[rest.index(after: newline)...]
    }
    return journal
  }

  /// Applies one complete line (without its newline).
  mutating func apply(line: Substring, number: Int) {
    let fields = line.split(separator: " ")
    guard let word = fields.first else { return }
    func bad(_ reason: String) { issues.append(Issue(line: number, reason: reason)) }
    switch word {
    case "run":
      // Only a playlist name: anything else (say "x.tmp") would be removed by recovery.
      guard fields.count == 4, Self.isSafeName(fields[1]), fields[1].hasSuffix(".m3u8"),
        let target = Int(fields[2]),
        (1...60).contains(target), let window = Int(fields[3]), window >= 0
      else { return bad("malformed run line") }
      playlistName = String(fields[1])
      targetDuration = target
      self.window = window
      isFinished = false
    case "map":
      guard fields.count == 3, HLSSegment.index(ofMapName: String(fields[1])) != nil,
        let bytes = Int64(fields[2]), bytes > 0
      else { return bad("malformed map line") }
      maps.append(HLSMap(name: String(fields[1]), bytes: bytes))
      isFinished = false
    case "open":
      guard fields.count == 4 || fields.count == 5,
        HLSSegment.index(ofFileName: String(fields[1])) != nil,
        let discontinuity = Self.flag(fields[2]), let date = HLSDateTime.parse(fields[3]),
        let map = Self.mapField(fields, at: 4)
      else { return bad("malformed open line") }
      openSegment = OpenSegment(
        name: String(fields[1]), discontinuity: discontinuity, programDateTime: date, map: map)
      isFinished = false
    case "segment":
      guard fields.count == 6 || fields.count == 7,
        HLSSegment.index(ofFileName: String(fields[1])) != nil,
        let duration = HLSSegment.ticks(seconds: fields[2]), let bytes = Int64(fields[3]),
        bytes > 0,
        let discontinuity = Self.flag(fields[4]), let date = HLSDateTime.parse(fields[5]),
        let map = Self.mapField(fields, at: 6)
      else { return bad("malformed segment line") }
      let name = String(fields[1])
      // A segment that names a map needs its file: one recorded before it.
      if let map, self.map(named: map) == nil {
        return bad("segment \(name) needs \(map), which no map line records")
      }
      let segment = HLSSegment(
        name: name, duration: duration, bytes: bytes, discontinuity: discontinuity,
        programDateTime: date, map: map)
      // The newest record of a file describes it: recovery records again, under the same name,
      // a `.part` it kept in place of a segment the journal had but the disk lost. The playlist
      // keeps the first record's place.
      if let earlier = segments.firstIndex(where: { $0.name == name }) {
        segments[earlier] = segment
      } else {
        segments.append(segment)
      }
      if openSegment?.name == name { openSegment = nil }
      isFinished = false
    case "end":
      guard fields.count == 1 else { return bad("malformed end line") }
      isFinished = true
      openSegment = nil
    default:
      bad("unknown line '\(Self.printable(word.prefix(16)))'")
    }
  }

  /// The optional map name at `index`: `.some(nil)` when the line has no such field,
  /// nil when the field is no map name.
  private static func mapField(_ fields: [Substring], at index: Int) -> String?? {
    guard index < fields.count else { return .some(nil) }
    guard HLSSegment.index(ofMapName: String(fields[index])) != nil else { return nil }
    return .some(String(fields[index]))
  }

  private static func flag(_ text: Substring) -> Bool? {
    switch text {
    case "0": false
    case "1": true
    default: nil
    }
  }

  /// A plain file name: no path separator, not hidden, printable ASCII.
  static func isSafeName(_ name: Substring) -> Bool {
    !name.isEmpty && name.count <= 255 && !name.hasPrefix(".")
      && name.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != 0x2F }
  }

  // MARK: Lines

  static func runLine(playlist: String, targetDuration: Int, window: Int) -> String {
    "run \(playlist) \(targetDuration) \(window)\n"
  }

  static func mapLine(_ map: HLSMap) -> String { "map \(map.name) \(map.bytes)\n" }

  static func openLine(
    name: String, discontinuity: Bool, programDateTime: Int64, map: String? = nil
  )
    -> String
  {
    "open \(name) \(discontinuity ? 1 : 0) \(HLSDateTime.format(programDateTime))"
      + (map.map { " " + $0 } ?? "") + "\n"
  }

  static func segmentLine(_ segment: HLSSegment) -> String {
    "segment \(segment.name) \(HLSSegment.seconds(segment.duration, decimals: 6)) \(segment.bytes) "
      + "\(segment.discontinuity ? 1 : 0) \(HLSDateTime.format(segment.programDateTime))"
      + (segment.map.map { " " + $0 } ?? "") + "\n"
  }

  static let endLine = "end\n"

  /// Ends a torn line so that it stays malformed: no field of any line can be "torn", so the
  /// fragment can never complete into a valid line it was not.
  static let tornLineEnd = " torn\n"
}

extension String {
  /// The string with leading zeros up to `width` characters.
  fileprivate func leftPadded(to width: Int) -> String {
    count >= width ? self : String(repeating: "0", count: width - count) + self
  }
}
