/// The figures of one upload run.
public struct UploadSummary: Equatable, Sendable {
  /// Segments PUT and confirmed by this run.
  public var segmentsUploaded = 0
  /// Of those, segments an earlier run had confirmed that the server had lost.
  public var segmentsResent = 0
  /// Segments found on the server from an earlier run, not sent again.
  public var segmentsAlreadyOnServer = 0
  /// Segments the recording lists but lost (skipped).
  public var segmentsMissing = 0
  /// Playlist PUTs (one per change with `follow`, one otherwise).
  public var playlistUploads = 0
  /// Attempts that failed and were repeated.
  public var retries = 0
  /// Bytes confirmed by the server in this run (segments and playlists).
  public var bytes: Int64 = 0
  /// Files removed after the server confirmed them.
  public var deleted = 0
  /// Wall time of the run in seconds.
  public var seconds = 0.0
  /// Whether the recording had ended (its journal's last event is `end`) when the run stopped.
  public var recordingFinished = false
  /// The signal that stopped the run (`SIGINT`, `SIGTERM`, `SIGHUP`), if one did; not a failure.
  public var stopSignal: String?
  /// Why the run stopped early, if it did.
  public var failure: UploadError?

  public init() {}
}
