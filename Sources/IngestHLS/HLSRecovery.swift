import IngestCore
import IngestPlatform

/// What recovering a recording directory found and did.
public struct HLSRecoveryReport: Equatable, Sendable, CustomStringConvertible {
  /// What happened to a segment that was being written (a `.part` file).
  public enum Partial: Equatable, Sendable {
    /// Cut back to its whole access units and kept as the last segment.
    case kept(name: String, fileBytes: Int64, keptBytes: Int64, duration: Int64)
    /// Removed: nothing playable in it (no whole keyframe, or no PAT at its start).
    case removed(name: String, fileBytes: Int64)
  }

  /// The recording directory.
  public var directory: String
  /// The playlist written (or found up to date).
  public var playlistPath: String
  /// The journal already ended with `end` and nothing needed repair.
  public var wasFinished = false
  /// Segments listed in the playlist.
  public var segments = 0
  /// Complete segments whose rename from `.part` had not happened yet.
  public var renamed: [String] = []
  /// Segments the journal records but whose file is missing or short (listed nowhere).
  public var lost: [String] = []
  /// Segments that were being written.
  public var partials: [Partial] = []
  /// Journal lines that were skipped (a torn last line, for instance).
  public var journalIssues: [HLSJournal.Issue] = []

  public var description: String {
    if wasFinished {
      return "\(directory): finished recording, \(segments) segments, nothing to do"
    }
    var parts = ["\(segments) segments listed in \(playlistPath)"]
    for partial in partials {
      switch partial {
      case .kept(let name, let fileBytes, let keptBytes, let duration):
        parts.append(
          "partial \(name) cut from \(fileBytes) to \(keptBytes) bytes and kept (\(HLSSegment.seconds(duration, decimals: 3)) s)"
        )
      case .removed(let name, let fileBytes):
        parts.append("partial \(name) (\(fileBytes) bytes) removed: no whole keyframe")
      }
    }
    if partials.isEmpty { parts.append("no partial segment") }
    if !renamed.isEmpty { parts.append("completed rename of " + renamed.joined(separator: ", ")) }
    if !lost.isEmpty { parts.append("missing segment files: " + lost.joined(separator: ", ")) }
    if !journalIssues.isEmpty {
      parts.append("skipped journal " + journalIssues.map(\.description).joined(separator: "; "))
    }
    return parts.joined(separator: "; ")
  }
}

/// Turns the directory of an interrupted recording into a finished one, from its journal.
///
/// Rules (see docs/hls.md):
/// - A segment the journal records is kept if its file has the recorded size; if only its
///   `.part` exists with at least that size (killed between journal and rename) it is cut to the
///   recorded size and renamed. Otherwise it is reported lost and not listed.
/// - A `.part` the journal does not record as complete is cut to its whole access units and kept
///   as a final segment if that still starts with PAT and holds a whole keyframe (audio frame
///   without video); otherwise it is removed. An fMP4 `.part` (`.m4s.part`) is cut to its whole
///   fragments and kept under the initialization section its `open` line names, if that file is
///   whole and the first fragment starts with a keyframe.
/// - Leftover `*.tmp` files (the space reserve, a half-written playlist copy) are removed first.
/// - A `journal` or `.part` that is a symbolic link is refused before anything is changed, so
///   that nothing outside the directory is cut or appended to.
/// - A playlist listing every segment, with `EXT-X-ENDLIST`, replaces the old one atomically, and
///   `end` is appended to the journal. Recovering a finished recording changes nothing.
public enum HLSRecovery {
  /// Whether `directory` holds a recording that was not finished.
  public static func needsRecovery(directory: String) throws(HLSError) -> Bool {
    let names: [String]
    do { names = try HLSFileSystem.entries(of: directory) } catch { throw .file(error) }
    if names.contains(where: { $0.hasSuffix(".part") }) { return true }
    guard names.contains(HLSJournal.fileName) else { return false }
    let journal: HLSJournal?
    do {
      journal = try HLSFileSystem.readJournal(HLSFileSystem.join(directory, HLSJournal.fileName))
    } catch { throw .file(error) }
    return journal.map { !$0.isFinished } ?? false
  }

  /// Recovers `directory`, holding its writer lock meanwhile.
  /// - Parameter now: the wall clock in milliseconds, for a partial segment without an `open` line.
  /// - Throws: `HLSError.locked` while a run writes the directory, `.noJournal` without a
  ///   journal, `.notARecording` when the journal holds only whole lines that are not journal
  ///   lines, `.file` when a file operation fails.
  public static func recover(directory: String, now: Int64 = HLSDateTime.now()) throws(HLSError)
    -> HLSRecoveryReport
  {
    let lock = try HLSDirectoryLock(directory: directory)
    defer { lock.release() }
    return try recover(lockedDirectory: directory, now: now)
  }

  /// Recovers `directory` for a caller that already holds its `HLSDirectoryLock`.
  static func recover(lockedDirectory directory: String, now: Int64) throws(HLSError)
    -> HLSRecoveryReport
  {
    do { return try run(directory: directory, now: now) } catch let error as HLSError {
      throw error
    } catch let error as FileError {
      throw .file(error)
    } catch {
      throw .noJournal(directory: directory)
    }
  }

  private static func run(directory: String, now: Int64) throws -> HLSRecoveryReport {
    let journalPath = HLSFileSystem.join(directory, HLSJournal.fileName)
    // Before anything is read or written: a journal or `.part` that is a symbolic link would
    // have recovery append to, or cut, a file outside the directory.
    try HLSFileSystem.refuseSymbolicLink(journalPath)
    for name in try HLSFileSystem.entries(of: directory) where name.hasSuffix(".part") {
      try HLSFileSystem.refuseSymbolicLink(HLSFileSystem.join(directory, name))
    }
    guard let journal = try HLSFileSystem.readJournal(journalPath) else {
      throw HLSError.noJournal(directory: directory)
    }
    // Not one line of ours: some other program's file (`HLSJournal.isForeign`). An empty
    // journal is what a run killed before its first line leaves.
    guard !journal.isForeign else { throw HLSError.notARecording(directory: directory) }
    let playlistName = journal.playlistName ?? "index.m3u8"
    let playlistPath = HLSFileSystem.join(directory, playlistName)
    var report = HLSRecoveryReport(directory: directory, playlistPath: playlistPath)
    report.journalIssues = journal.issues
    let names = try HLSFileSystem.entries(of: directory)
    // A finished recording with every segment in place needs nothing written, so it is
    // reported without opening anything for writing (it may be on a read-only mount).
    if journal.isFinished,
      !names.contains(where: { $0.hasSuffix(".part") || $0.hasSuffix(".tmp") }),
      HLSFileSystem.size(of: playlistPath) != nil,
      journal.segments.allSatisfy({
        HLSFileSystem.size(of: HLSFileSystem.join(directory, $0.name)) == $0.bytes
      })
    {
      report.wasFinished = true
      report.segments = journal.segments.count
      return report
    }
    // First, so that the space reserve and any half-written copy give their room to the journal
    // lines and the playlist written below, even on a disk that filled up.
    for name in names where name.hasSuffix(".tmp") {
      try HLSFileSystem.remove(HLSFileSystem.join(directory, name))
    }
    let partNames = names.filter { $0.hasSuffix(".part") }.sorted {
      (HLSSegment.index(ofFileName: $0) ?? .max, $0) < (
        HLSSegment.index(ofFileName: $1) ?? .max, $1
      )
    }
    var handledParts = Set<String>()
    var segments: [HLSSegment] = []
    /// Whether a segment line was appended: after an `end`, the journal must be ended again.
    var appendedSegmentLines = false
    for segment in journal.segments {
      let path = HLSFileSystem.join(directory, segment.name)
      if HLSFileSystem.size(of: path) == segment.bytes {
        segments.append(segment)
        continue
      }
      let part = path + ".part"
      if let size = HLSFileSystem.size(of: part), size >= segment.bytes {
        try HLSFileSystem.truncate(part, to: segment.bytes)
        try HLSFileSystem.rename(part, to: path)
        handledParts.insert(segment.name + ".part")
        report.renamed.append(segment.name)
        segments.append(segment)
      } else {
        report.lost.append(segment.name)
      }
    }

    let journalFile = try HLSAppendFile(path: journalPath, refusingSymbolicLinks: true)
    defer { journalFile.close() }
    // A kill mid-write left half a line: end it, so the lines appended below stay whole.
    if journal.endsWithTornLine { try journalFile.append(HLSJournal.tornLineEnd) }
    for partName in partNames where !handledParts.contains(partName) {
      let partPath = HLSFileSystem.join(directory, partName)
      let name = String(partName.dropLast(5))
      let opened = journal.openSegment?.name == name ? journal.openSegment : nil
      let map =
        HLSContainer.of(segmentName: name) == .fragmentedMP4
        ? Self.map(for: opened, journal: journal, directory: directory) : nil
      let scan = try Self.scanPart(partPath, map: map, directory: directory)
      guard scan.isPlayable, HLSSegment.index(ofFileName: partName) != nil,
        !segments.contains(where: { $0.name == name })
      else {
        try HLSFileSystem.remove(partPath)
        report.partials.append(.removed(name: name, fileBytes: scan.fileBytes))
        continue
      }
      try HLSFileSystem.truncate(partPath, to: scan.completeBytes)
      let date =
        opened?.programDateTime
        ?? segments.last.map { $0.programDateTime + $0.duration / 90 } ?? now
      let segment = HLSSegment(
        name: name, duration: scan.duration, bytes: scan.completeBytes,
        discontinuity: opened?.discontinuity ?? false, programDateTime: date, map: map)
      // Recorded again when the journal had it complete but the disk lost it: the newer line
      // wins when the journal is read (`HLSJournal`), so a second recovery finds it whole.
      try journalFile.append(HLSJournal.segmentLine(segment))
      appendedSegmentLines = true
      try HLSFileSystem.rename(partPath, to: HLSFileSystem.join(directory, name))
      report.lost.removeAll { $0 == name }
      segments.append(segment)
      report.partials.append(
        .kept(
          name: name, fileBytes: scan.fileBytes, keptBytes: scan.completeBytes,
          duration: scan.duration))
    }
    report.segments = segments.count

    let upToDate =
      journal.isFinished && partNames.isEmpty && report.lost.isEmpty
      && HLSFileSystem.size(of: playlistPath) != nil
    if upToDate {
      report.wasFinished = true
      return report
    }
    var playlist = HLSPlaylist(kind: .vod, targetDuration: journal.targetDuration ?? 1)
    for segment in segments { playlist.append(segment) }
    try HLSFileSystem.replace(playlistPath, with: playlist.rendered)
    // A partial kept after the journal's `end` (its line now follows that `end`) ends the
    // journal again, or the next recovery takes the recording for unfinished and writes again.
    if !journal.isFinished || appendedSegmentLines {
      try journalFile.append(HLSJournal.endLine)
    }
    try HLSFileSystem.syncDirectory(directory)
    return report
  }

  /// The initialization section an fMP4 partial segment was written for: the one its `open`
  /// line names, else the newest the journal records; nil when that file is missing or not
  /// whole (the partial cannot be read without it).
  private static func map(
    for opened: HLSJournal.OpenSegment?, journal: HLSJournal,
    directory: String
  ) -> String? {
    guard let name = opened?.map ?? journal.maps.last?.name,
      let recorded = journal.map(named: name),
      HLSFileSystem.size(of: HLSFileSystem.join(directory, name)) == recorded.bytes
    else { return nil }
    return name
  }

  /// What a partial segment holds that is whole: its access units (TS), or its fragments
  /// (fMP4, read with its initialization section `map`; none without one).
  private static func scanPart(_ path: String, map: String?, directory: String) throws(FileError)
    -> (isPlayable: Bool, fileBytes: Int64, completeBytes: Int64, duration: Int64)
  {
    guard HLSContainer.of(segmentName: String(path.dropLast(5))) == .fragmentedMP4 else {
      let scan = try HLSSegmentScanner.scan(path: path)
      return (scan.isPlayable, scan.fileBytes, scan.completeBytes, scan.duration)
    }
    guard let map else { return (false, HLSFileSystem.size(of: path) ?? 0, 0, 0) }
    let scan = try HLSFragmentedSegmentScanner.scan(
      path: path, mapPath: HLSFileSystem.join(directory, map))
    return (scan.isPlayable, scan.fileBytes, scan.completeBytes, scan.duration)
  }
}
