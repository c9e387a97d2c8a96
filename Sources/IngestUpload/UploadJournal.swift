/// What earlier uploads of a recording directory achieved, read from its upload journal.
///
/// Append-only text, one line per event, each written with one `write` and `fsync`:
///
/// ```
/// upload 1 http://127.0.0.1:8080/rec/     a session starts: format version, destination
/// send seg00042.ts 123456                 a PUT of that many bytes is about to start
/// sent seg00042.ts 123456                 its whole body went out; no answer yet
/// done seg00042.ts 123456                 the server confirmed it (2xx)
/// ```
///
/// Only the lines after the last `upload` line count, and only when it names the same
/// destination: uploading the same recording somewhere else starts from nothing. A torn last line (a kill inside `write`),
/// a malformed or unknown line is skipped and counted, never fatal.
public struct UploadJournal: Equatable, Sendable {
  /// The journal's file name inside the recording directory (not `*.tmp` or `*.part`, which HLS
  /// recovery removes).
  public static let fileName = "upload.journal"
  /// The format version in `upload` lines.
  public static let version = 1

  /// Bytes of each file the server confirmed, by name.
  public private(set) var confirmed: [String: Int64] = [:]
  /// Files whose PUT started and was not confirmed: the server may or may not have them.
  public private(set) var started: Set<String> = []
  /// Of `started`, the files whose whole body went out: a server that is slow to answer may
  /// still be storing them after the uploader that sent them is gone.
  public private(set) var bodySent: Set<String> = []
  /// The destination of the last `upload` line.
  public private(set) var destination: String?
  /// Lines that were skipped (torn, malformed, unknown).
  public private(set) var skippedLines = 0
  /// Whether the text ends inside a line, which the next append must terminate first.
  public private(set) var endsWithTornLine = false

  public init() {}

  /// Parses a journal for uploads to `destination`.
  public static func parse(_ text: String, destination: String) -> UploadJournal {
    var journal = UploadJournal()
    var rest = Substring(text)
    while !rest.isEmpty {
      guard let newline = rest.firstIndex(of: "\n") else {
        journal.skippedLines += 1
        journal.endsWithTornLine = true
        break
      }
      journal.apply(rest[..<newline], destination: destination)
      rest = rest[rest.index(after: newline)...]
    }
    return journal
  }

  private mutating func apply(_ line: Substring, destination wanted: String) {
    let fields = line.split(separator: " ", omittingEmptySubsequences: false)
    switch (fields.first, fields.count) {
    case ("upload", 3) where Int(fields[1]) == Self.version:
      destination = String(fields[2])
      confirmed = [:]
      started = []
      bodySent = []
    case ("send", 3) where Int64(fields[2]) != nil && Self.isName(fields[1]):
      if destination == wanted { started.insert(String(fields[1])) }
    case ("sent", 3) where Int64(fields[2]) != nil && Self.isName(fields[1]):
      if destination == wanted && started.contains(String(fields[1])) {
        bodySent.insert(String(fields[1]))
      }
    case ("done", 3) where Int64(fields[2]) != nil && Self.isName(fields[1]):
      guard destination == wanted else { break }
      confirmed[String(fields[1])] = Int64(fields[2])!
      started.remove(String(fields[1]))
      bodySent.remove(String(fields[1]))
    default:
      skippedLines += 1
    }
  }

  /// A plain file name as the HLS journal allows them: printable ASCII, no `/`, not hidden.
  static func isName(_ name: Substring) -> Bool {
    !name.isEmpty && !name.hasPrefix(".")
      && name.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != 0x2F }
  }

  /// Records a confirmed file in memory (after its line was synced).
  mutating func recordConfirmed(_ name: String, bytes: Int64) {
    confirmed[name] = bytes
    started.remove(name)
    bodySent.remove(name)
  }

  /// Records a started PUT in memory (after its line was synced).
  mutating func recordStarted(_ name: String) {
    started.insert(name)
    bodySent.remove(name)
  }

  /// Records a PUT whose whole body went out, in memory (after its line was synced).
  mutating func recordBodySent(_ name: String) { bodySent.insert(name) }

  static func uploadLine(destination: String) -> String { "upload \(version) \(destination)\n" }
  static func sendLine(_ name: String, bytes: Int64) -> String { "send \(name) \(bytes)\n" }
  static func doneLine(_ name: String, bytes: Int64) -> String { "done \(name) \(bytes)\n" }
  static func sentLine(_ name: String, bytes: Int64) -> String { "sent \(name) \(bytes)\n" }
  /// Ends a torn line so that it stays malformed (no valid line ends in "torn").
  static let tornLineEnd = " torn\n"
}
