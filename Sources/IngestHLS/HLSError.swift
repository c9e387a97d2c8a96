import IngestCore
import IngestPlatform

/// Why an HLS recording could not be written or recovered.
public enum HLSError: Error, Equatable, Sendable, CustomStringConvertible {
  /// A file operation failed (unwritable directory, full disk, ...), naming the path.
  case file(FileError)
  /// `directory` holds no journal, so there is no recording to recover.
  case noJournal(directory: String)
  /// `directory` has a `journal` file without a single journal line: it is not an HLS recording
  /// (nothing was changed).
  case notARecording(directory: String)
  /// Another process (a live run or a recovery) is writing `directory`.
  case locked(directory: String)
  /// `directory` holds a recording whose segments are `found`, and the run asked for
  /// `requested`: one playlist cannot list both.
  case containerMismatch(directory: String, found: HLSContainer, requested: HLSContainer)

  public var description: String {
    switch self {
    case .file(let error):
      error.isDiskFull ? "\(error.description) (disk full)" : error.description
    case .noJournal(let directory):
      "\(directory): no '\(HLSJournal.fileName)' file, so no HLS recording to recover"
    case .notARecording(let directory):
      "\(directory): '\(HLSJournal.fileName)' holds no journal line, so this is not an HLS"
        + " recording; nothing was changed"
    case .locked(let directory):
      "\(directory): another ingest process is writing this HLS directory (it holds the lock);"
        + " wait for it to end or choose another directory"
    case .containerMismatch(let directory, let found, let requested):
      "\(directory): the recording there has \(found.segmentExtension) segments, and this run"
        + " asked for \(requested.segmentExtension) ones (container=\(requested.rawValue)); one"
        + " playlist cannot list both: add container=\(found.rawValue) or choose another directory"
    }
  }
}
