import IngestCore
import IngestHLS
import IngestPOSIX

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Uploads an HLS recording directory with HTTP PUT: every complete segment in journal order,
/// then the playlist once every segment it names is on the server.
///
/// What is complete comes from the recording's journal only (`HLSJournal`), never from file
/// sizes or directory listings, so a `.part` file or a segment still being renamed is never sent.
/// Progress survives kills through the upload journal (`UploadJournal`): a segment is sent again
/// only when a HEAD shows that the server no longer has it with its size (see docs/upload.md).
public final class Uploader {
  private let options: UploadOptions
  private let clock: any PacingClock
  private var seed: UInt64
  private let onEvent: (UploadEvent) -> Void
  private let stopRequested: () -> String?
  private var summary = UploadSummary()
  /// Segments dealt with by this process: uploaded, found on the server, or skipped as missing.
  private var settled: Set<String> = []
  /// The playlist bytes last confirmed by the server in this process.
  private var lastPlaylist: [UInt8]?
  /// Segments an earlier run confirmed that neither the server nor the directory still has.
  private var lost: [String] = []

  /// - Parameters:
  ///   - clock: waits between attempts and polls (injected so tests need not wait).
  ///   - seed: seeds the retry jitter (differs between processes by default, so that uploaders
  ///     that lost the same server do not return in step).
  ///   - onEvent: called on the calling thread for each file and each retry.
  ///   - stopRequested: asked between steps, during every wait and inside every request: a name
  ///     (`SIGINT`) ends the run at once, its summary's `stopSignal` set. A request cut short
  ///     leaves its `send` line without `done`, which the next run settles with a HEAD.
  public init(
    options: UploadOptions, clock: any PacingClock = SystemClock(),
    seed: UInt64 = UInt64.random(in: 1...UInt64.max),
    onEvent: @escaping (UploadEvent) -> Void = { _ in },
    stopRequested: @escaping () -> String? = { nil }
  ) {
    self.options = options
    self.clock = clock
    self.seed = seed
    self.onEvent = onEvent
    self.stopRequested = stopRequested
  }

  /// Uploads until everything is on the server (or, without `follow`, everything complete so
  /// far), or until a failure that waiting cannot fix.
  /// - Returns: the figures; `failure` says why the run stopped early.
  public func run() -> UploadSummary {
    let start = clock.now()
    do { try upload() } catch .stopped(let signal) {
      summary.stopSignal = signal
    } catch { summary.failure = error }
    summary.seconds = (clock.now() - start).inSeconds
    return summary
  }

  /// The figures so far (what `run` returns at its end).
  public var figures: UploadSummary { summary }

  /// Sends the file `name` of the directory as it is now, unless this uploader last sent the
  /// same bytes: a rendition set's multivariant playlist, which no journal lists. Retried as
  /// every request is; counted as a playlist upload.
  /// - Returns: whether the server has the file as it is now (false: there is no such file).
  public func put(_ name: String) throws(UploadError) -> Bool {
    guard let data = try UploadFiles.read(UploadFiles.join(options.directory, name)) else {
      return false
    }
    if data == lastPlaylist { return true }
    let client = try HTTPClient(options.http, stopRequested: stopRequested)
    let response = try send(name) { () throws(UploadError) in
      try client.put(data, to: options.destination.url(for: name))
    }
    lastPlaylist = data
    summary.playlistUploads += 1
    summary.bytes += Int64(data.count)
    onEvent(.uploaded(name: name, bytes: Int64(data.count), status: response.status, resent: false))
    return true
  }

  /// Removes the file `name` of the directory (`deleteAfterUpload`, once the server has it).
  public func remove(_ name: String) throws(UploadError) { try delete(name) }

  private var journalPath: String { UploadFiles.join(options.directory, HLSJournal.fileName) }

  private func upload() throws(UploadError) {
    let client = try HTTPClient(options.http, stopRequested: stopRequested)
    // Before the upload journal is created: a directory that holds no recording gets nothing
    // written into it, unless `follow` is to wait for one.
    if !options.follow, try UploadFiles.ownStamp(of: journalPath) == nil { throw noRecording }
    let journal = try openJournal()
    var playlistPath: String?
    var announcedWait = false
    while true {
      try checkStop()
      // Taken before reading, so that a change made while this round runs is never missed.
      let stamps = Stamps(journal: journalPath, playlist: playlistPath)
      guard let text = try UploadFiles.read(journalPath) else {
        guard options.follow else { throw noRecording }
        if !announcedWait { onEvent(.waiting(directory: options.directory)) }
        announcedWait = true
        try waitForChange(since: stamps, playlist: nil, pollOnce: false)
        continue
      }
      let recording = HLSJournal.parse(String(decoding: text, as: UTF8.self))
      playlistPath = recording.playlistName.map { UploadFiles.join(options.directory, $0) }
      let settledBefore = settled.count
      let blocked = try uploadSegments(of: recording, client: client, journal: journal)
      var playlistCurrent = false
      if !blocked, let playlist = recording.playlistName {
        playlistCurrent = try uploadPlaylist(
          playlist, finished: recording.isFinished, client: client, journal: journal)
      }
      summary.recordingFinished = recording.isFinished
      if recording.isFinished && !blocked && playlistCurrent {
        if options.deleteAfterUpload, let playlist = recording.playlistName,
          UploadFiles.stamp(of: UploadFiles.join(options.directory, playlist)) != nil
        {
          try delete(playlist)
        }
        break
      }
      // Without follow, one more round only when this one moved and the playlist named a
      // segment that was recorded after the journal was read.
      if !options.follow && (playlistCurrent || blocked || settled.count == settledBefore) {
        break
      }
      if options.follow {
        try waitForChange(since: stamps, playlist: playlistPath, pollOnce: blocked)
      }
    }
    if !lost.isEmpty { throw .lostOnServer(lost) }
  }

  /// Opens and locks the upload journal; where it is the recording's own and cannot be created,
  /// says what to do instead.
  private func openJournal() throws(UploadError) -> UploadJournalFile {
    let path = options.resolvedJournalPath
    do {
      return try UploadJournalFile(
        path: path, directory: options.directory, destination: options.destination.base)
    } catch .file(let error)
      where options.journalPath == nil && [EROFS, EACCES, EPERM].contains(error.errno)
    {
      throw .recording(
        "\(error.description); for a recording that cannot be written, keep the upload journal "
          + "elsewhere with --journal PATH")
    }
  }

  private var noRecording: UploadError {
    .recording("no HLS journal in \(options.directory) (record with --to hls:DIR)")
  }

  private func checkStop() throws(UploadError) {
    if let signal = stopRequested() { throw .stopped(signal: signal) }
  }

  /// Sends the segments not settled yet, in order; an fMP4 segment's initialization section
  /// (`EXT-X-MAP`) goes before the first segment that needs it, so that a player reading the
  /// server never meets a segment it cannot decode.
  /// - Returns: true when a segment the journal lists is not in place yet (its rename follows
  ///   the journal line), so that later ones wait and the order holds.
  private func uploadSegments(
    of recording: HLSJournal, client: HTTPClient, journal: UploadJournalFile
  ) throws(UploadError) -> Bool {
    for segment in recording.segments where !settled.contains(segment.name) {
      if let name = segment.map, !settled.contains(name) {
        // The journal records a map before any segment that names it (`HLSJournal.parse`).
        guard let map = recording.map(named: name) else { return true }
        if try upload(name, bytes: map.bytes, of: recording, client: client, journal: journal) {
          return true
        }
      }
      if try upload(
        segment.name, bytes: segment.bytes, of: recording, client: client, journal: journal)
      {
        return true
      }
    }
    return false
  }

  /// Sends one file of the recording (a segment or an initialization section) unless the
  /// server has it already.
  /// - Returns: true when the file is not in place yet, so that the files after it wait.
  private func upload(
    _ name: String, bytes: Int64, of recording: HLSJournal, client: HTTPClient,
    journal: UploadJournalFile
  ) throws(UploadError) -> Bool {
    try checkStop()
    // An initialization section stays with --delete: a recovery of the recording reads it
    // to cut the segment being written, and it is a few kilobytes.
    let isSegment = HLSSegment.index(ofMapName: name) == nil
    let path = UploadFiles.join(options.directory, name)
    // Checked before any journal line or request: a link would send a file from elsewhere.
    let localSize = try UploadFiles.ownStamp(of: path)?.size
    let confirmedBefore = journal.journal.confirmed[name] == bytes
    if confirmedBefore || journal.journal.started.contains(name) {
      var onServer = try serverHas(name, bytes: bytes, client: client)
      if onServer == false && journal.journal.bodySent.contains(name) {
        onServer = try awaitStoring(name, bytes: bytes, client: client)
      }
      // A server that cannot answer HEAD is trusted for what it confirmed.
      if onServer == true || (onServer == nil && confirmedBefore) {
        if !confirmedBefore { try journal.confirmed(name, bytes: bytes) }
        settled.insert(name)
        summary.segmentsAlreadyOnServer += 1
        onEvent(.alreadyOnServer(name: name))
        if options.deleteAfterUpload && isSegment && localSize != nil { try delete(name) }
        return false
      }
      if confirmedBefore && localSize != bytes {
        lost.append(name)
        settled.insert(name)
        return false
      }
    }
    guard localSize == bytes else {
      // Listed but not in place: still being renamed while recording, lost once it ended.
      guard recording.isFinished else { return true }
      settled.insert(name)
      summary.segmentsMissing += 1
      onEvent(.missing(name: name))
      return false
    }
    try journal.started(name, bytes: bytes)
    let url = options.destination.url(for: name)
    // A write error in the callback cannot leave libcurl's call: it is thrown after it.
    var journalFailure: UploadError?
    let response = try send(name) { () throws(UploadError) in
      try client.put(file: path, bytes: bytes, to: url) {
        do throws(UploadError) { try journal.bodySent(name, bytes: bytes) } catch {
          journalFailure = error
        }
      }
    }
    if let journalFailure { throw journalFailure }
    try journal.confirmed(name, bytes: bytes)
    settled.insert(name)
    summary.segmentsUploaded += 1
    if confirmedBefore { summary.segmentsResent += 1 }
    summary.bytes += bytes
    onEvent(
      .uploaded(
        name: name, bytes: bytes, status: response.status, resent: confirmedBefore))
    if options.deleteAfterUpload && isSegment { try delete(name) }
    return false
  }

  /// Sends the playlist if it changed and names only segments already on the server.
  /// - Returns: whether the server holds the playlist as it is now.
  private func uploadPlaylist(
    _ name: String, finished: Bool, client: HTTPClient, journal: UploadJournalFile
  ) throws(UploadError) -> Bool {
    guard let data = try UploadFiles.read(UploadFiles.join(options.directory, name)) else {
      // Removed by an earlier run with deleteAfterUpload, after the server confirmed it.
      if finished && journal.journal.confirmed[name] != nil { return true }
      if finished { throw .recording("the recording ended but its playlist \(name) is missing") }
      return false
    }
    if data == lastPlaylist { return true }
    let references = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
      .filter { !$0.hasPrefix("#") }
    guard references.allSatisfy({ settled.contains(String($0)) }) else { return false }
    let url = options.destination.url(for: name)
    let response = try send(name) { () throws(UploadError) in try client.put(data, to: url) }
    try journal.confirmed(name, bytes: Int64(data.count))
    lastPlaylist = data
    summary.playlistUploads += 1
    summary.bytes += Int64(data.count)
    onEvent(.uploaded(name: name, bytes: Int64(data.count), status: response.status, resent: false))
    return true
  }

  /// A PUT whose whole body went out before its uploader was gone (killed, or a request given up
  /// on) may still be stored by a server that is slow to answer: HEAD again, every half
  /// second, for up to the stall timeout (as long as a request waits for an answer), before it
  /// is sent a second time.
  /// - Returns: what the last HEAD said.
  private func awaitStoring(_ name: String, bytes: Int64, client: HTTPClient)
    throws(UploadError) -> Bool?
  {
    let deadline = clock.now() + TimeSpan(seconds: options.http.stallTimeout)
    while clock.now() < deadline {
      try sleep(until: min(deadline, clock.now() + .milliseconds(500)))
      let onServer = try serverHas(name, bytes: bytes, client: client)
      if onServer != false { return onServer }
    }
    return false
  }

  /// HEAD: true when the server has the file with `bytes` bytes, false when it has not (404,
  /// 410, another size), nil when it cannot say (another 4xx, e.g. a URL signed for PUT only).
  private func serverHas(_ name: String, bytes: Int64, client: HTTPClient) throws(UploadError)
    -> Bool?
  {
    let url = options.destination.url(for: name)
    let response = try send(name, refuse: false) { () throws(UploadError) in
      try client.head(url)
    }
    switch response.status {
    case 200..<300: return response.contentLength.map { $0 == bytes }
    case 404, 410: return false
    default: return nil
    }
  }

  /// Makes one request, repeating it with backoff while it fails in a way that can pass.
  /// - Parameter refuse: throw on a final status (PUT); otherwise return it (HEAD).
  private func send(
    _ name: String, refuse: Bool = true,
    _ attempt: () throws(UploadError) -> HTTPClient.Response
  ) throws(UploadError) -> HTTPClient.Response {
    seed &+= 1
    var backoff = options.retry.backoff(seed: seed)
    var failures = 0
    // Failing "for S seconds" counts from the start of the first failed attempt.
    var failingSince = MonotonicInstant.origin
    while true {
      try checkStop()
      let started = clock.now()
      let reason: String
      do throws(UploadError) {
        let response = try attempt()
        switch RetryPolicy.verdict(status: response.status) {
        case .success:
          return response
        case .refuse:
          guard refuse else { return response }
          throw UploadError.refused(
            name: name, status: response.status, statusLine: response.statusLine)
        case .retry:
          reason = response.statusLine.isEmpty ? "status \(response.status)" : response.statusLine
        }
      } catch {
        guard error.isRetryable else { throw error }
        reason = error.description
      }
      failures += 1
      summary.retries += 1
      let now = clock.now()
      if failures == 1 { failingSince = started }
      let delay = backoff.next()
      if let limit = options.giveUpAfter {
        // No wait past the limit: give up at it rather than after one more backoff (8 s once
        // gave up after 12.6).
        let deadline = failingSince + TimeSpan(seconds: limit)
        if now + delay >= deadline {
          if deadline > now { try sleep(until: deadline) }
          let failingFor = (max(now, deadline) - failingSince).inSeconds
          throw .gaveUp(name: name, seconds: failingFor, lastReason: reason)
        }
      }
      onEvent(
        .retry(
          name: name, reason: reason, attempt: failures,
          delay: delay.inSeconds))
      try sleep(until: now + delay)
    }
  }

  private func delete(_ name: String) throws(UploadError) {
    try UploadFiles.remove(UploadFiles.join(options.directory, name))
    summary.deleted += 1
    onEvent(.deleted(name: name))
  }

  /// The stamps of the recording's journal and playlist at one moment.
  private struct Stamps: Equatable {
    var journal: UploadFiles.Stamp?
    var playlist: UploadFiles.Stamp?

    init(journal: String, playlist: String?) {
      self.journal = UploadFiles.stamp(of: journal)
      self.playlist = playlist.flatMap(UploadFiles.stamp(of:))
    }
  }

  /// Waits until the recording's journal or playlist differs from `stamps` (or one poll, when a
  /// segment is being renamed), looking every `pollInterval`.
  private func waitForChange(since stamps: Stamps, playlist: String?, pollOnce: Bool)
    throws(UploadError)
  {
    let interval = TimeSpan(seconds: options.pollInterval)
    repeat {
      try sleep(until: clock.now() + interval)
    } while !pollOnce && Stamps(journal: journalPath, playlist: playlist) == stamps
  }

  /// Sleeps until `deadline` in steps of at most 100 ms, so that a stop is seen soon.
  private func sleep(until deadline: MonotonicInstant) throws(UploadError) {
    while true {
      try checkStop()
      let now = clock.now()
      guard now < deadline else { return }
      clock.sleep(until: min(deadline, now + .milliseconds(100)))
    }
  }
}
