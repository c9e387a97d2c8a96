import IngestCore
import IngestHLS
import IngestPOSIX

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Uploads an HLS rendition set (`--audio both`: a multivariant playlist over `video/`, `app/`
/// and `mic/`, each a recording of its own): every rendition with an `Uploader` of its own, side
/// by side so that a live set's audio keeps up with its video, each under `URL/RENDITION/` with
/// its own upload journal; then the multivariant playlist, once every rendition's media playlist
/// is on the server (with `follow`, again whenever it changes).
public final class UploadSet {
  private let options: UploadOptions
  private let renditions: [HLSRendition]
  private let onEvent: @Sendable (HLSRendition?, UploadEvent) -> Void
  private let stopRequested: @Sendable () -> String?
  /// Guards `finished`, `playlistsOnServer` and `results`; signalled when one changes.
  private let state = ConditionLock()
  private var finished = 0
  private var playlistsOnServer: Set<Int> = []
  private var results: [UploadSummary?]

  /// The renditions of the set in `directory`, or nil when it holds a plain recording (its own
  /// journal) or no rendition directory with a journal.
  public static func renditions(in directory: String) -> [HLSRendition]? {
    guard UploadFiles.stamp(of: UploadFiles.join(directory, HLSJournal.fileName)) == nil
    else { return nil }
    let found = HLSRendition.allCases.filter {
      let subdirectory = UploadFiles.join(directory, $0.directoryName)
      return UploadFiles.stamp(of: UploadFiles.join(subdirectory, HLSJournal.fileName)) != nil
    }
    return found.contains(.video) ? found : nil
  }

  /// - Parameters:
  ///   - options: for the set's directory; each rendition gets a copy for its subdirectory
  ///     (`journalPath`, when given, gets `.video`, `.app` or `.mic` appended).
  ///   - onEvent: called for each file, with the rendition it belongs to (nil: the
  ///     multivariant playlist); from the renditions' threads, so it must be thread-safe.
  public init(
    options: UploadOptions, renditions: [HLSRendition],
    onEvent: @escaping @Sendable (HLSRendition?, UploadEvent) -> Void,
    stopRequested: @escaping @Sendable () -> String?
  ) {
    self.options = options
    self.renditions = renditions
    self.onEvent = onEvent
    self.stopRequested = stopRequested
    results = Array(repeating: nil, count: renditions.count)
  }

  /// Uploads every rendition, then the multivariant playlist.
  /// - Returns: the renditions' figures added up; the first failure or stop of any of them.
  public func run() -> UploadSummary {
    let name = multivariantName
    let playlist = Uploader(
      options: options, onEvent: { [onEvent] in onEvent(nil, $0) }, stopRequested: stopRequested)
    var threads: [pthread_t] = []
    for (index, rendition) in renditions.enumerated() {
      let uploader = Uploader(
        options: Self.options(options, for: rendition),
        onEvent: { [weak self] event in self?.noted(event, of: index, rendition) },
        stopRequested: stopRequested)
      guard
        let thread = SystemThread.start({ [self] in
          let summary = uploader.run()
          state.withLock {
            results[index] = summary
            finished += 1
          }
          state.broadcast()
        })
      else {
        var summary = UploadSummary()
        summary.failure = .recording("cannot start a thread for the \(rendition) rendition")
        state.withLock {
          results[index] = summary
          finished += 1
        }
        continue
      }
      threads.append(thread)
    }
    var failure: UploadError?
    var offered = 0
    while state.withLock({ finished < renditions.count }) {
      // With follow, the multivariant playlist goes up as soon as every rendition's playlist
      // is there (a player can start), and again when its bandwidth figures change.
      if options.follow, failure == nil,
        state.withLock({ playlistsOnServer.count }) == renditions.count
      {
        do { _ = try playlist.put(name) } catch { failure = error }
      }
      state.withLock {
        if finished < renditions.count && playlistsOnServer.count == offered {
          _ = state.wait(
            until: SystemClock().now() + TimeSpan(seconds: options.pollInterval))
        }
        offered = playlistsOnServer.count
      }
    }
    for thread in threads { pthread_join(thread, nil) }
    var total = Self.sum(results.compactMap { $0 })
    total.failure = total.failure ?? failure
    if total.failure == nil && total.stopSignal == nil && total.recordingFinished {
      do throws(UploadError) {
        if try !playlist.put(name) {
          throw UploadError.recording(
            "the set's multivariant playlist \(name) is missing")
        }
        if options.deleteAfterUpload { try playlist.remove(name) }
      } catch .stopped(let signal) {
        total.stopSignal = signal
      } catch { total.failure = error }
    }
    total.playlistUploads += playlist.figures.playlistUploads
    total.bytes += playlist.figures.bytes
    total.retries += playlist.figures.retries
    total.deleted += playlist.figures.deleted
    return total
  }

  /// The multivariant playlist's name: the set's media playlists are named as it is.
  private var multivariantName: String {
    let video = UploadFiles.join(options.directory, HLSRendition.video.directoryName)
    let text = (try? UploadFiles.read(UploadFiles.join(video, HLSJournal.fileName))) ?? nil
    return text.flatMap { HLSJournal.parse(String(decoding: $0, as: UTF8.self)).playlistName }
      ?? "index.m3u8"
  }

  private func noted(_ event: UploadEvent, of index: Int, _ rendition: HLSRendition) {
    onEvent(rendition, event)
    if case .uploaded(let name, _, _, _) = event, !name.hasSuffix(".ts"), !name.hasSuffix(".m4s"),
      !name.hasSuffix(".mp4")
    {
      state.withLock { _ = playlistsOnServer.insert(index) }
      state.broadcast()
    }
  }

  /// A rendition's options: its subdirectory, its URL under the set's, its own upload journal.
  static func options(_ set: UploadOptions, for rendition: HLSRendition) -> UploadOptions {
    var options = set
    options.directory = UploadFiles.join(set.directory, rendition.directoryName)
    options.destination = set.destination.appending(directory: rendition.directoryName)
    options.journalPath = set.journalPath.map { "\($0).\(rendition.directoryName)" }
    return options
  }

  /// The renditions' figures added up: a set is finished when every rendition is.
  static func sum(_ summaries: [UploadSummary]) -> UploadSummary {
    var total = UploadSummary()
    total.recordingFinished = !summaries.isEmpty
    for summary in summaries {
      total.segmentsUploaded += summary.segmentsUploaded
      total.segmentsResent += summary.segmentsResent
      total.segmentsAlreadyOnServer += summary.segmentsAlreadyOnServer
      total.segmentsMissing += summary.segmentsMissing
      total.playlistUploads += summary.playlistUploads
      total.retries += summary.retries
      total.bytes += summary.bytes
      total.deleted += summary.deleted
      total.seconds = max(total.seconds, summary.seconds)
      total.recordingFinished = total.recordingFinished && summary.recordingFinished
      total.stopSignal = total.stopSignal ?? summary.stopSignal
      total.failure = total.failure ?? summary.failure
    }
    return total
  }
}
