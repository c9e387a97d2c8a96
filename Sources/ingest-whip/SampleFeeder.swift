import CGStreamer
import IngestCore
import IngestPOSIX

/// Reads the dump stream on standard input and pushes its samples into the appsrcs, on a
/// thread of its own (an appsrc blocks when full).
///
/// Samples are stamped on the pipeline's running time: the first decode time maps to the
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
final class SampleFeeder: @unchecked Sendable {
  private var reader: DumpReader<FileByteSource>
  private let session: WebRTCSession
  private let audioKind: SampleKind?
  private var base: (inputNanoseconds: Int64, runningTime: UInt)?
  private var waitingForKeyframe = true
  /// The video format the samples are in now, and its H.264 profile.
  private var video: VideoFormat
  private var streamProfile: H264Profile?
  // Guarded by `session.lock`.
  private var dropped = 0
  private var droppedForProfile = 0
  private var pushed = (video: 0, audio: 0)
  private var ended: String??

  init(
    reader: DumpReader<FileByteSource>, session: WebRTCSession, video: VideoFormat,
    audioKind: SampleKind?
  ) {
    self.reader = reader
    self.session = session
    self.video = video
    self.audioKind = audioKind
    streamProfile = video.h264.flatMap { H264ProfileLevelID($0).profile }
  }

  /// Samples dropped while the connection was not up.
  var droppedCount: Int { session.lock.withLock { dropped } }

  /// Video samples dropped because their profile does not fit the one negotiated.
  var droppedForProfileCount: Int { session.lock.withLock { droppedForProfile } }

  /// Samples pushed into the pipeline (after the connection, and the few that gave
  /// webrtcbin its caps), by kind.
  var pushedCounts: (video: Int, audio: Int) { session.lock.withLock { pushed } }

  /// Nil while reading; then nil inside when the input ended cleanly, else why it failed.
  var end: String?? { session.lock.withLock { ended } }

  /// Pushes the sample `reader` last returned, then every later one, until the input ends.
  func run(first: DumpSampleHeader) {
    var failure: String?
    push(first)
    reading: while true {
      do {
        guard let record = try reader.next() else { break reading }
        switch record {
        case .sample(let sample): push(sample)
        case .format(.video, let format):
          if let next = format.video, next != video { change(to: next) }
        case .format, .event: break
        }
      } catch {
        // A record the reader refused (bad timestamp, codec) is skipped, as `ingest` does.
        if error.isRecoverable { continue }
        failure = "\(error)"
        break reading
      }
    }
    session.lock.withLock { ended = .some(failure) }
    session.lock.broadcast()
  }

  /// New caps on the video source (queued in order with the samples), and video from the
  /// next keyframe: it is the first to carry the new parameter sets.
  private func change(to format: VideoFormat) {
    video = format
    streamProfile = format.h264.flatMap { H264ProfileLevelID($0).profile }
    waitingForKeyframe = true
    let caps = MediaGraph(video: format, audio: nil).videoCaps
    if let parsed = gst_caps_from_string(caps) {
      ingest_g_set_caps(session.videoSource, "caps", parsed)
      gst_caps_unref(parsed)
    }
  }

  private func push(_ sample: DumpSampleHeader) {
    let source: UnsafeMutablePointer<GstElement>
    if sample.kind == .video {
      source = session.videoSource
    } else if sample.kind == audioKind, let audio = session.audioSource {
      source = audio
    } else {
      return
    }
    switch session.lock.withLock({ session.phase }) {
    case .negotiating: break
    case .connecting:
      waitingForKeyframe = true
      session.lock.withLock { dropped += 1 }
      return
    case .connected:
      if sample.kind == .video,
        let negotiated = session.lock.withLock({ session.negotiatedProfile }),
        !(streamProfile?.fits(within: negotiated) ?? false)
      {
        waitingForKeyframe = true
        session.lock.withLock { droppedForProfile += 1 }
        return
      }
      if waitingForKeyframe {
        guard sample.kind == .video && sample.isKeyframe else {
          session.lock.withLock { dropped += 1 }
          return
        }
        waitingForKeyframe = false
      }
    }
    guard let pts = Self.nanoseconds(sample.pts) else { return }
    let dts = sample.dts.flatMap(Self.nanoseconds) ?? pts
    if base == nil {
      var now = ingest_gst_running_time(session.pipeline)
      if now == UInt.max { now = 0 }
      base = (dts, now)
    }
    guard let base else { return }
    let offset = Int64(base.runningTime) - base.inputNanoseconds
    let buffer = reader.withPayload { payload in
      ingest_gst_buffer(
        payload.baseAddress, UInt(payload.count), UInt(max(0, pts + offset)),
        UInt(max(0, dts + offset)), sample.isKeyframe ? 1 : 0)
    }
    _ = source.withMemoryRebound(to: GstAppSrc.self, capacity: 1) {
      gst_app_src_push_buffer($0, buffer)
    }
    session.lock.withLock {
      if sample.kind == .video { pushed.video += 1 } else { pushed.audio += 1 }
    }
  }

  static func nanoseconds(_ time: MediaTime) -> Int64? {
    guard time.isValid else { return nil }
    return Int64((Int128(time.value) * 1_000_000_000) / Int128(time.timescale))
  }
}
