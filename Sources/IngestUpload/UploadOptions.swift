/// What `Uploader` uploads, where to, and how.
public struct UploadOptions: Sendable {
  /// The HLS recording directory (holds `journal` and, after a first run, `upload.journal`).
  public var directory: String
  /// Where files go: `destination/NAME`.
  public var destination: UploadDestination
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

  public init(directory: String, destination: UploadDestination) {
    self.directory = directory
    self.destination = destination
  }
}
