/// What `Uploader` uploads, where to, and how.
public struct UploadOptions: Sendable {
  /// The HLS recording directory (holds `journal` and, after a first run, `upload.journal`).
  public var directory: String
  /// Where files go: `destination/NAME`.
  public var destination: UploadDestination
  /// The upload journal (nil: `directory/upload.journal`). Elsewhere, the recording is only read,
  /// so a read-only one can be uploaded and resumed.
  public var journalPath: String?
  /// Headers, TLS trust, timeouts and rate of the requests.
  public var http = HTTPClient.Configuration()
  /// Keep going while the recording is written, until its journal says it ended.
  public var follow = false
  /// Remove each segment once the server confirmed it (the playlist once the recording ended
  /// and its last version was confirmed).
  public var deleteAfterUpload = false
  /// Backoff between attempts.
  public var retry = RetryPolicy()
  /// Stop when one request has been failing for this many seconds (nil: keep trying).
  public var giveUpAfter: Double?
  /// How often `follow` looks at the HLS journal, in seconds.
  public var pollInterval = 0.2

  /// The upload journal's path: `journalPath`, or the one inside the recording.
  public var resolvedJournalPath: String {
    journalPath ?? UploadFiles.join(directory, UploadJournal.fileName)
  }

  public init(directory: String, destination: UploadDestination) {
    self.directory = directory
    self.destination = destination
  }
}
