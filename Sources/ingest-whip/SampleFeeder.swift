import CGStreamer
import IngestCore
import IngestPOSIX

/// Reads the dump stream on standard input and pushes its samples into the appsrcs, on a
/// thread of its own (an appsrc blocks when full).
///
/// Samples are stamped on the pipeline's running time: the first decode time after the
/// connection came up (before it, the first units that give webrtcbin its caps) maps to the
/// running time when it is pushed, every later one keeps its distance from it, so presentation
/// order and the gap between the tracks are the input's.
///
/// Before the connection is up, media would be lost on the way (or reach the receiver
/// mid-GOP), so after the first units (which give webrtcbin its caps) samples are dropped until
/// the connection is up, and video resumes at its next keyframe.
///
/// A new video format record (a live encoder reopened in another profile, a new size) becomes
/// the video source's caps, in order with the samples. Once the answer chose an H.264 profile,
/// video in a profile that does not fit it is dropped, and resumes at the first keyframe of a
/// format that does (the encoder was asked for it).
///
/// The reader and what the feed keeps of the stream belong to the feeding thread (`Feed`, handed
/// to `run`); what the main thread reads of its progress is behind `progress`.
final class SampleFeeder: Sendable {
  /// What the feeding thread reports, read by the main thread.
  struct Progress {
    var dropped = 0
    var droppedForProfile = 0
    var pushed = (video: 0, audio: 0)
    var ended: String??
  }

  /// What the feeding thread alone keeps: the reader and where the stream is.
  private struct Feed {
    var reader: DumpReader<FileByteSource>
    var base: (inputNanoseconds: Int64, runningTime: UInt)?
    /// Whether `base` was taken once the connection was up.
    var baseWhileConnected = false
    var waitingForKeyframe = true
    /// The video format the samples are in now, and its H.264 profile.
    var video: VideoFormat
    var streamProfile: H264Profile?
  }

  private let session: WebRTCSession
  private let audioKind: SampleKind?
  private let video: VideoFormat
  private let progress = ConditionLock(Progress())

  init(session: WebRTCSession, video: VideoFormat, audioKind: SampleKind?) {
    self.session = session
    self.video = video
    self.audioKind = audioKind
  }

  /// Samples dropped while the connection was not up.
  var droppedCount: Int { progress.withLock { $0.dropped } }

  /// Video samples dropped because their profile does not fit the one negotiated.
  var droppedForProfileCount: Int { progress.withLock { $0.droppedForProfile } }

  /// Samples pushed into the pipeline (after the connection, and the few that gave
  /// webrtcbin its caps), by kind.
  var pushedCounts: (video: Int, audio: Int) { progress.withLock { $0.pushed } }

  /// Nil while reading; then nil inside when the input ended cleanly, else why it failed.
  var end: String?? { progress.withLock { $0.ended } }

  /// Pushes the sample `reader` last returned, then every later one, until the input ends; on
  /// the feeding thread, which the reader is handed to.
  func run(reader: DumpReader<FileByteSource>, first: DumpSampleHeader) {
    var feed = Feed(
      reader: reader, video: video,
      streamProfile: video.h264.flatMap { H264ProfileLevelID($0).profile })
    var failure: String?
    push(first, &feed)
    reading: while true {
      do {
        guard let record = try feed.reader.next() else { break reading }
        switch record {
        case .sample(let sample): push(sample, &feed)
        case .format(.video, let format):
          if let next = format.video, next != feed.video { change(to: next, &feed) }
        case .format, .event: break
        }
      } catch {
        // A record the reader refused (bad timestamp, codec) is skipped, as `ingest` does.
        if error.isRecoverable { continue }
        failure = "\(error)"
        break reading
      }
    }
    progress.withLock { $0.ended = .some(failure) }
    // The main thread waits on the session's condition.
    session.lock.broadcast()
  }

  /// New caps on the video source (queued in order with the samples), and video from the
  /// next keyframe: it is the first to carry the new parameter sets.
  private func change(to format: VideoFormat, _ feed: inout Feed) {
    feed.video = format
    feed.streamProfile = format.h264.flatMap { H264ProfileLevelID($0).profile }
    feed.waitingForKeyframe = true
    let caps = MediaGraph(video: format, audio: nil).videoCaps
    if let parsed = gst_caps_from_string(caps) {
      ingest_g_set_caps(session.videoSource, "caps", parsed)
      gst_caps_unref(parsed)
    }
  }

  private func push(_ sample: DumpSampleHeader, _ feed: inout Feed) {
    let source: UnsafeMutablePointer<GstElement>
    if sample.kind == .video {
      source = session.videoSource
    } else if sample.kind == audioKind, let audio = session.audioSource {
      source = audio
    } else {
      return
    }
    let phase = session.lock.withLock { session.phase }
    let isConnected: Bool
    switch phase {
    case .negotiating: isConnected = false
    case .connecting:
      feed.waitingForKeyframe = true
      progress.withLock { $0.dropped += 1 }
      return
    case .connected:
      isConnected = true
      if sample.kind == .video,
        let negotiated = session.lock.withLock({ session.negotiatedProfile }),
        !(feed.streamProfile?.fits(within: negotiated) ?? false)
      {
        feed.waitingForKeyframe = true
        progress.withLock { $0.droppedForProfile += 1 }
        return
      }
      if feed.waitingForKeyframe {
        guard sample.kind == .video && sample.isKeyframe else {
          progress.withLock { $0.dropped += 1 }
          return
        }
        feed.waitingForKeyframe = false
      }
    }
    guard let pts = Self.nanoseconds(sample.pts) else { return }
    let dts = sample.dts.flatMap(Self.nanoseconds) ?? pts
    // Taken again with the first sample after the connection: the pipeline's running time
    // does not advance with the samples while webrtcbin brings up its transport, so a base
    // from before stamps every later sample ahead of it, and the pipeline passes each on only
    // at its running time. Measured: both appsrcs held 1.2 s of media for the whole run, at
    // every bit rate, which the output read as a standing queue (and the receiver got that
    // much later).
    if feed.base == nil || (!feed.baseWhileConnected && isConnected) {
      feed.baseWhileConnected = isConnected
      var now = ingest_gst_running_time(session.pipeline)
      if now == UInt.max { now = 0 }
      feed.base = (dts, now)
    }
    guard let base = feed.base else { return }
    let offset = Int64(base.runningTime) - base.inputNanoseconds
    let buffer = feed.reader.withPayload { payload in
      ingest_gst_buffer(
        payload.baseAddress, UInt(payload.count), UInt(max(0, pts + offset)),
        UInt(max(0, dts + offset)), sample.isKeyframe ? 1 : 0)
    }
    _ = source.withMemoryRebound(to: GstAppSrc.self, capacity: 1) {
      gst_app_src_push_buffer($0, buffer)
    }
    progress.withLock {
      if sample.kind == .video { $0.pushed.video += 1 } else { $0.pushed.audio += 1 }
    }
  }

  static func nanoseconds(_ time: MediaTime) -> Int64? {
    guard time.isValid else { return nil }
    return Int64(
      (Int128(time.value) * Int128(TimeSpan.nanosecondsPerSecond)) / Int128(time.timescale))
  }
}
