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
  /// The newest video keyframe is a CRA or BLA picture: RASL pictures after it belong to it (an
  /// IDR has none; a RASL NAL type after one is not treated as leading).
  var gopAdmitsRASL = false
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
