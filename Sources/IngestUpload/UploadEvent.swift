/// What the uploader reports while it works (the CLI turns these into progress lines).
///
/// No event carries a header value or anything else from the header source.
public enum UploadEvent: Equatable, Sendable {
  /// The server confirmed a file; `resent` when an earlier run had uploaded it and the server
  /// no longer had it.
  case uploaded(name: String, bytes: Int64, status: Int, resent: Bool)
  /// An earlier run's upload (confirmed, or interrupted after the server had it all) is on the
  /// server with the right size; not sent again.
  case alreadyOnServer(name: String)
  /// An attempt failed and will be repeated after `delay` seconds.
  case retry(name: String, reason: String, attempt: Int, delay: Double)
  /// The recording lists a segment whose file is gone or short (lost by the recorder); it is
  /// not in the playlist either, so it is skipped.
  case missing(name: String)
  /// A confirmed file was removed from the directory (`deleteAfterUpload`).
  case deleted(name: String)
  /// `follow`: the directory holds no recording yet (no HLS journal); the uploader waits for
  /// one to be started in it.
  case waiting(directory: String)
}
