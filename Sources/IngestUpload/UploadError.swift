import IngestPOSIX

/// Why an upload stopped or an attempt failed: what, where, and whether a retry helps.
public enum UploadError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The request did not get an answer (connection refused or reset, timeout, TLS handshake cut);
  /// the same request is retried.
  case transport(String)
  /// TLS verification or a local libcurl problem that another attempt cannot fix.
  case fatalTransport(String)
  /// The server answered with a status that says "do not try again" (4xx but 408 and 429, 3xx).
  case refused(name: String, status: Int, statusLine: String)
  /// A file in the recording directory could not be read, written or removed.
  case file(FileError)
  /// The recording directory is unusable (no HLS journal, a bad playlist name).
  case recording(String)
  /// One request kept failing for longer than the `give up after` limit.
  case gaveUp(name: String, seconds: Double, lastReason: String)
  /// Files the server no longer has and that are gone locally (deleted after an earlier upload).
  case lostOnServer([String])
  /// An option that cannot work (a URL with credentials, a bad header line).
  case invalidOption(String)
  /// A file the uploader would read or write is a symbolic link: refused, so that nothing
  /// outside the recording is sent and no journal line lands elsewhere.
  case symbolicLink(path: String)
  /// Another uploader holds the upload journal of `directory` (at `journal`): two would send
  /// every file twice and interleave their journal lines.
  case locked(directory: String, journal: String)
  /// A stop signal (`SIGINT`, `SIGTERM`, `SIGHUP`) ended the run; what was confirmed is in the
  /// journal, and a rerun goes on from there.
  case stopped(signal: String)

  /// Whether waiting and sending the same request again can succeed.
  public var isRetryable: Bool {
    if case .transport = self { return true }
    return false
  }

  public var description: String {
    switch self {
    case .transport(let reason): reason
    case .fatalTransport(let reason): reason
    case .refused(let name, let status, let line):
      "the server refused \(name) with \(line.isEmpty ? "status \(status)" : line); not retried"
    case .file(let error): error.description
    case .recording(let reason): reason
    case .gaveUp(let name, let seconds, let reason):
      "gave up on \(name) after \(Int(seconds)) s of failures (last: \(reason))"
    case .lostOnServer(let names):
      "the server lost \(names.count) file(s) that are no longer here to resend: "
        + names.prefix(5).joined(separator: " ")
    case .invalidOption(let reason): reason
    case .symbolicLink(let path):
      "\(SystemPath.display(path)) is a symbolic link; ingest upload reads and writes only the "
        + "recording's own files, so it was refused (nothing was sent for it)"
    case .locked(let directory, let journal):
      "\(SystemPath.display(directory)) is being uploaded by another ingest upload (it holds "
        + "\(SystemPath.display(journal))); wait for it to end, or stop it first"
    case .stopped(let signal): "stopped by \(signal)"
    }
  }
}
