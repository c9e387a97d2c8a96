/// What only the capture thread touches: the timeline, the packetizer, the formats in force and
/// the keyframe and discontinuity bookkeeping between samples.
///
/// `Pipeline` keeps it in a lock of its own that only the capture thread takes (in `append` and
/// `changeFormat`), so it is never contended; the lock is what lets the compiler check that
/// `Pipeline` is `Sendable`.
struct PipelineCapture: Sendable {
  var timeline: Timeline
  /// Nil when the ring holds raw access units.
  var packetizer: TSPacketizer?
  /// The formats in force: the tracks as announced, updated by `adopt`.
  var formats: TrackFormats
  /// A clock reset whose sample did not enter the ring: the next unit of the track carries it.
  var pendingDiscontinuity = [Bool](repeating: false, count: SampleKind.allCases.count)
  /// No video keyframe arrived yet: a frame before it references nothing the output has.
  var awaitingFirstKeyframe: Bool
  /// The presentation time of the newest video keyframe when it opens a GOP whose leading
  /// pictures may reference the GOP before: an HEVC CRA or BLA picture, or the H.264 recovery
  /// point (a keyframe that is no IDR) a stream starts at. Nil after an IDR, which has no such
  /// pictures (and a RASL NAL type after one is not treated as leading).
  var openKeyframePTS: Int64?
  /// The track's samples were found with ADTS headers (removed) or with one that contradicts
  /// the format, under the format in force: each is reported once, not per sample.
  var reportedADTS = [Bool](repeating: false, count: SampleKind.allCases.count)
  var reportedADTSRefusal = [Bool](repeating: false, count: SampleKind.allCases.count)

  init(configuration: PipelineConfiguration, tracks: TrackFormats, payloadFormat: PayloadFormat) {
    timeline = Timeline(configuration: configuration.timeline)
    for kind in SampleKind.allCases {
      if case .aac(let aac) = tracks.format(for: kind) {
        timeline.setAudioFrameDuration(samples: 1024, sampleRate: aac.sampleRate, for: kind)
      }
    }
    formats = tracks
    awaitingFirstKeyframe = tracks.format(for: .video) != nil
    packetizer = payloadFormat == .transportStream ? TSPacketizer(program: tracks) : nil
  }

  /// Whether a video sample the producer flagged as a keyframe is one for the ring: where
  /// video resumes after a loss and where a GOP (and an HLS segment) starts. Notes whether the
  /// pictures after it may be leading ones.
  ///
  /// An H.264 keyframe that is no IDR (a recovery point: x264's `--open-gop`, some hardware
  /// encoders) is one only where the stream starts. A decoder that has been decoding keeps the
  /// pictures from before a loss, whose frame numbers and memory-management commands the
  /// pictures after a recovery point do not expect (ffmpeg: "mmco: unref short failure", then
  /// wrong pictures); even a decoder that starts at one meets commands for the GOP before. So
  /// video resumes, and HLS segments start, at IDR pictures; the keyframe request after a loss
  /// asks the encoder for one. HEVC's CRA pictures carry their reference sets: keyframes
  /// everywhere, with their RASL pictures dropped where their references are missing.
  mutating func admitKeyframe(pts: Int64, summary: AVCCSummary?, video: VideoFormat) -> Bool {
    switch video {
    case .h264:
      let idr = summary?.containsIDR ?? false
      guard idr || awaitingFirstKeyframe else {
        openKeyframePTS = nil
        return false
      }
      openKeyframePTS = idr ? nil : pts
    case .hevc:
      openKeyframePTS = summary?.admitsRASL == true ? pts : nil
    }
    return true
  }

  /// Whether a video picture that is no keyframe is a leading picture of the newest keyframe's
  /// open GOP. HEVC says so in the NAL type (RASL); H.264 does not, and a picture decoded after
  /// the keyframe but shown before it is one.
  func isLeading(pts: Int64, summary: AVCCSummary?, video: VideoFormat) -> Bool {
    guard let keyframePTS = openKeyframePTS else { return false }
    switch video {
    case .h264: return pts < keyframePTS
    case .hevc: return summary?.isRASL == true
    }
  }

  /// Puts `format` in force for `kind`: the next unit of the track is a discontinuity, and video
  /// waits for its next keyframe.
  mutating func adopt(_ format: FormatDescription, for kind: SampleKind) {
    formats.set(format, for: kind)
    packetizer?.update(format, for: kind)
    if case .aac(let aac) = format {
      timeline.setAudioFrameDuration(samples: 1024, sampleRate: aac.sampleRate, for: kind)
    }
    pendingDiscontinuity[Int(kind.rawValue)] = true
    reportedADTS[Int(kind.rawValue)] = false
    reportedADTSRefusal[Int(kind.rawValue)] = false
    if kind == .video { awaitingFirstKeyframe = true }
  }
}
