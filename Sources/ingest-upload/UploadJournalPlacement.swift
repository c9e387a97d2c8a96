import IngestCLI
import IngestPOSIX
import IngestUpload

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Where `--journal PATH` may put the upload journal: anywhere but over a file of the recording,
/// which appending journal lines would corrupt.
enum UploadJournalPlacement {
  /// Names a recording directory holds or will hold (HLS journal, playlists, TS and fMP4
  /// segments, initialization sections, and the `.part` and `.tmp` files recovery cuts or
  /// removes).
  private static let recordingSuffixes = [".ts", ".m4s", ".mp4", ".m3u8", ".part", ".tmp"]

  /// - Throws: `UsageError` (exit 2) saying what to type instead.
  static func check(_ path: String, directory: String) throws(UsageError) {
    let hint = "give a file outside the recording, e.g. --journal /var/tmp/rec.upload.journal"
    guard !path.isEmpty, !path.hasSuffix("/") else {
      throw UsageError("--journal needs a file path; \(hint)")
    }
    var stats = stat()
    if SystemPath.withCString(path, { stat($0, &stats) }) == 0,
      stats.st_mode & S_IFMT == S_IFDIR
    {
      throw UsageError("--journal \(SystemPath.display(path)) is a directory; \(hint)")
    }
    let ownJournal = directory + "/" + UploadJournal.fileName
    let slash = path.lastIndex(of: "/")
    let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
    let parent = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
    let inRecording =
      (SameFileCheck.isSameFile(parent, directory)
        && (name == "journal" || recordingSuffixes.contains { name.hasSuffix($0) }))
      || (SameFileCheck.isInDirectory(path, directory)
        && !SameFileCheck.isSameFile(path, ownJournal))
    guard !inRecording else {
      throw UsageError(
        "--journal \(SystemPath.display(path)) is a file of the recording in "
          + "\(SystemPath.display(directory)); \(hint)")
    }
  }
}
