import IngestCLI
import IngestCore
import IngestPOSIX
import IngestUpload

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `ingest upload`: the host app's side, sending a recording to an HTTP server.
enum UploadCommand: Command {
  static let name = "upload"
  static let summary = "upload an HLS recording with HTTP PUT, retrying and resuming"
  static let help = """
    usage: ingest upload DIR --to URL [options]

    Uploads the HLS recording in DIR (made with --to hls:DIR) with HTTP PUT to URL/NAME: every
    segment its journal records as complete, in order, then the playlist. Failed attempts
    (connection errors, timeouts, 5xx, 408, 429) are repeated with capped exponential backoff and
    jitter until they succeed; another 4xx stops with exit status 1. Progress is kept in
    DIR/upload.journal (or --journal PATH), so a rerun after a kill sends only what the server
    does not have (checked with HEAD). One uploader at a time holds the journal; files that are
    symbolic links are refused. SIGINT, SIGTERM and SIGHUP stop the upload with its summary and
    exit 0; a second signal exits at once. A set of renditions (--audio both) goes up rendition
    by rendition side by side, each to URL/video/, URL/app/, URL/mic/ with its own journal
    (--journal PATH: PATH.video, ...), then its multivariant playlist. See docs/upload.md.

    options:
      --to URL                  http:// or https:// base URL (no credentials in it)
      --follow                  keep uploading while the recording is written, until it ends
                                (an empty DIR: wait for a recording to start in it)
      --delete-after-upload     remove each segment (and at the end the playlist) once confirmed
      --journal PATH            keep the upload journal at PATH, outside DIR (a read-only
                                recording); the same PATH on every run of that upload
      --header-file PATH        extra request headers, one 'Name: value' per line (auth)
      --header-env NAME         the same, read from environment variable NAME
      --ca-file PATH            trust the CA certificates in PATH (PEM) instead of the system's
      --connect-timeout S       seconds to connect (default 10)
      --stall-timeout S         seconds without progress before an attempt fails (default 20)
      --retry-max S             longest wait between attempts (default 5)
      --give-up-after S         stop when one file has failed for S seconds (default: never)
      --limit-rate N            send at most N bytes per second (suffix k or m for 1000s)
      --json                    print a summary as JSON on standard output
      --quiet                   no progress lines on standard error
      -h, --help                show this help

    Header values never appear in any output.

    exit status: 0 everything complete is on the server, or stopped by a signal, 1 refused,
    gave up or a file error, 2 usage error, 3 another ingest upload is uploading DIR
    """

  /// The exit status when another uploader holds the journal: nothing was done, try later.
  static let lockedStatus: Int32 = 3

  static func run(_ argv: [String]) throws -> Int32 {
    let args = try Arguments(
      argv,
      valued: [
        "--to", "--header-file", "--header-env", "--ca-file", "--connect-timeout",
        "--stall-timeout", "--retry-max", "--give-up-after", "--limit-rate", "--journal",
      ],
      flags: ["--follow", "--delete-after-upload", "--json", "--quiet"])
    guard args.positionals.count == 1 else {
      throw UsageError(
        "expected one DIR, got \(args.positionals.count); type: ingest upload DIR --to URL")
    }
    guard let to = args["--to"] else {
      throw UsageError("--to URL is required; type e.g. --to https://example.com/rec/")
    }
    var options: UploadOptions
    do {
      options = UploadOptions(
        directory: args.positionals[0], destination: try UploadDestination(to))
      options.http.headers = try headers(args).lines
    } catch { throw UsageError(error.description) }
    if let journal = args["--journal"] {
      try UploadJournalPlacement.check(journal, directory: options.directory)
      options.journalPath = journal
    }
    options.follow = args.has("--follow")
    options.deleteAfterUpload = args.has("--delete-after-upload")
    if let path = args["--ca-file"] {
      // libcurl would find an unreadable file only at the first request, after the journal.
      do { try FileDescriptor.open(path, O_RDONLY).close() } catch {
        throw UsageError(
          "--ca-file: cannot read \(path): \(error); "
            + "type --ca-file PEM with a readable file of CA certificates")
      }
      options.http.caFile = path
    }
    if let seconds = try seconds(args, "--connect-timeout") {
      options.http.connectTimeout = seconds
    }
    if let seconds = try seconds(args, "--stall-timeout") { options.http.stallTimeout = seconds }
    if let seconds = try seconds(args, "--retry-max") {
      options.retry = RetryPolicy(maximumDelay: seconds)
    }
    options.giveUpAfter = try seconds(args, "--give-up-after")
    if let text = args["--limit-rate"] { options.http.maximumSendRate = try rate(text) }

    let quiet = args.has("--quiet")
    UploadStopSignal.install()
    let summary: UploadSummary
    if let renditions = UploadSet.renditions(in: options.directory) {
      summary = UploadSet(
        options: options, renditions: renditions,
        onEvent: { rendition, event in
          let place = rendition.map { $0.directoryName + "/" } ?? ""
          if !quiet { Console.error("ingest upload: " + place + describe(event)) }
        },
        stopRequested: { UploadStopSignal.requested }
      ).run()
    } else {
      summary = Uploader(
        options: options,
        onEvent: { event in if !quiet { Console.error("ingest upload: " + describe(event)) } },
        stopRequested: { UploadStopSignal.requested }
      ).run()
    }
    if args.has("--json") { Console.out(json(summary).rendered + "\n") }
    if let failure = summary.failure {
      Console.error("ingest upload: \(failure)")
      if case .locked = failure { return lockedStatus }
      return 1
    }
    if !quiet {
      let state =
        if let signal = summary.stopSignal {
          "; stopped by \(signal): a rerun goes on from here"
        } else if !summary.recordingFinished {
          "; the recording is unfinished (--follow waits)"
        } else { "" }
      Console.error(
        "ingest upload: \(summary.segmentsUploaded) segment(s) and \(summary.playlistUploads) "
          + "playlist version(s), \(summary.bytes) bytes, \(summary.retries) retries, "
          + JSONObject.fixed(summary.seconds, decimals: 1) + " s" + state)
    }
    return 0
  }

  private static func headers(_ args: Arguments) throws(UploadError) -> UploadHeaders {
    var text = ""
    var sources: [String] = []
    if let path = args["--header-file"] {
      guard let contents = readFile(path) else {
        throw .invalidOption(
          "--header-file: cannot read \(path): \(String(cString: strerror(errno)))")
      }
      text += contents + "\n"
      sources.append("--header-file")
    }
    if let name = args["--header-env"] {
      guard let value = getenv(name) else {
        throw .invalidOption("--header-env: \(name) is not set")
      }
      text += String(cString: value)
      sources.append("--header-env")
    }
    return sources.isEmpty
      ? UploadHeaders() : try UploadHeaders(parsing: text, source: sources.joined(separator: "/"))
  }

  private static func readFile(_ path: String) -> String? {
    guard let fd = try? FileDescriptor.open(path, O_RDONLY) else { return nil }
    defer { fd.close() }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    // A header file is a few lines; the bound keeps a wrong path (a device, a big file) harmless.
    while bytes.count < 1 << 20 {
      guard let n = try? chunk.withUnsafeMutableBytes({ try fd.read(into: $0) }) else {
        return nil
      }
      if n == 0 { break }
      bytes += chunk[..<n]
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  private static func seconds(_ args: Arguments, _ name: String) throws(UsageError) -> Double? {
    guard let text = args[name] else { return nil }
    guard let value = Double(text), value > 0, value <= 86_400 else {
      throw UsageError(
        "\(name) must be a number of seconds above 0 and at most 86400, got '\(text)'; "
          + "type e.g. \(name) 10")
    }
    return value
  }

  private static func rate(_ text: String) throws(UsageError) -> Int64 {
    var digits = Substring(text.lowercased())
    var scale: Int64 = 1
    if digits.hasSuffix("k") {
      scale = 1000
      digits = digits.dropLast()
    } else if digits.hasSuffix("m") {
      scale = 1_000_000
      digits = digits.dropLast()
    }
    guard let value = Int64(digits), value > 0, value <= 10_000_000_000 / scale else {
      throw UsageError(
        "--limit-rate must be a positive number of bytes per second, got '\(text)'; "
          + "type e.g. --limit-rate 500k")
    }
    return value * scale
  }

  private static func describe(_ event: UploadEvent) -> String {
    switch event {
    case .uploaded(let name, let bytes, let status, let resent):
      "\(name) \(bytes) bytes (\(status))" + (resent ? ", sent again: the server had lost it" : "")
    case .alreadyOnServer(let name):
      "\(name) is already on the server"
    case .retry(let name, let reason, let attempt, let delay):
      "\(name): \(reason); retry \(attempt) in \(JSONObject.fixed(delay, decimals: 1)) s"
    case .missing(let name):
      "\(name) is listed by the recording but lost locally; skipped"
    case .deleted(let name):
      "\(name) removed"
    case .waiting(let directory):
      "waiting for a recording in \(directory) (no journal yet)"
    }
  }

  private static func json(_ summary: UploadSummary) -> JSONObject {
    var object = JSONObject()
    object.add("ok", summary.failure == nil)
    object.add("uploaded", summary.segmentsUploaded)
    object.add("resent", summary.segmentsResent)
    object.add("already_on_server", summary.segmentsAlreadyOnServer)
    object.add("missing", summary.segmentsMissing)
    object.add("playlist_uploads", summary.playlistUploads)
    object.add("retries", summary.retries)
    object.add("bytes", summary.bytes)
    object.add("deleted", summary.deleted)
    object.add("seconds", summary.seconds)
    object.add("recording_finished", summary.recordingFinished)
    if let signal = summary.stopSignal { object.add("stopped", signal) }
    if let failure = summary.failure { object.add("error", failure.description) }
    return object
  }
}
