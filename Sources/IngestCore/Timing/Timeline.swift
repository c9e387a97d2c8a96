/// Places every track's samples on one 90 kHz timeline with a shared base, so A/V sync survives.
///
/// - The base is the earliest timestamp of the first sample seen (its DTS when it has one).
///   Every track is measured from that one base; no track is rebased on its own.
/// - Decode times are strictly increasing per track. A clock that jumps (an audio clock backwards
///   by more than `maximumAudioFrameStep`, a video clock backwards by at least `jumpThreshold`,
///   any clock forwards by more than `jumpThreshold`) is re-anchored onto the shared timeline and the
///   sample is marked as a discontinuity, never emitted with a backwards DTS. That is what an
///   audio clock does after an interruption such as a phone call.
/// - A stall of the whole capture (nothing for seconds, then every track later) is told from such
///   an interruption by the video: when an audio track that came first after the stall was
///   pulled back to the shared "now" and the video then jumps forward by about as much, the video
///   is pulled back by the same amount, so A/V sync survives whichever track resumes first.
/// - A gap is not a reset: an audio track silent for longer than `jumpThreshold` (the app
///   stopped playing, the mic was off) that comes back within `jumpThreshold` of the shared "now"
///   keeps its timestamps, as the host clock went on; only a clock that comes back elsewhere is
///   re-anchored.
/// - A burst is not a pause: frames delivered with one time after a stall are laid out one frame
///   apart from it, past the clock; once the clock ticks on again, what comes behind them is
///   dropped (`TimelineError.behindPlacedFrames`) until the clock is back where they end, so the
///   track returns to its own clock rather than trailing it for the rest of the run.
/// - A glitch is not a reset: an audio timestamp that repeats or steps back by at most
///   `maximumAudioFrameStep` is placed one frame on from the previous one, and the track's later samples keep
///   their own times (no lasting shift). A video DTS that does so is nudged one tick on.
/// - A track only ever re-anchors on evidence from its own clock, so an unusable clock (every
///   frame on the same tick, or each frame a second apart) is corrected on its own and never
///   moves another track: repeated ticks are spread one frame apart, and an audio clock whose
///   steps are gaps twice in a row (or from its first step) is taken as wrong and advanced one
///   frame per sample.
/// - A coarse audio clock (one unit of its timescale longer than a frame: a mic stamped in whole
///   seconds, about 43 frames on each value) says where a frame is only to within that unit, and
///   not in which direction it was rounded. Its frames are placed one frame duration apart, from
///   the sample count and rate, starting no later than the host time: the newest decode time of
///   the tracks with a fine clock. They follow the coarse clock only where it is behind that (a
///   clock rounded down, a mic delivering each second in one burst), and move on, leaving a gap,
///   once both are more than a frame ahead of them (the clock ticked, the mic resumed). So a
///   clock rounded up runs neither ahead of the video nor the TS writer's PCR ahead of the other
///   tracks. Such a track does not set the shared base, nor does it move the shared "now": its samples
///   before any fine clock started are refused (`TimelineError.awaitingSharedClock`), for at most
///   `jumpThreshold` of its frames, after which it starts on its own clock (a stream with no
///   other track).
/// - Results are unwrapped 64-bit tick counts; writers reduce them modulo 2^33.
///
/// All arithmetic is integer: each timestamp is converted from its own rational value (never by
/// accumulating rounded durations), so there is no drift.
public struct Timeline: Sendable {
  /// A sample's place on the timeline.
  public struct Stamp: Equatable, Sendable {
    /// Presentation time in 90 kHz ticks.
    public var pts: Int64
    /// Decode time in 90 kHz ticks; strictly increasing per track.
    public var dts: Int64
    /// The track's clock was re-anchored before this sample.
    public var isDiscontinuity: Bool
    /// A video decode time that stepped back a little (the sample came after one it precedes)
    /// and was nudged one tick on: the sample is out of decode order.
    public var isOutOfOrder = false
  }

  /// Tuning of the timeline.
  public struct Configuration: Sendable {
    /// Added to every timestamp so that samples slightly earlier than the base stay positive;
    /// later for a run that continues a recording (`OutputSink.timelineStart`).
    public var startOffset: Int64 = 10 * MediaTicks.perSecond
    /// A clock more than this far from the shared "now" counts as reset (default 1 s). Video may
    /// legitimately pause for longer (a still screen), so only backwards video jumps reset it.
    public var jumpThreshold: Int64 = MediaTicks.perSecond
    /// The longest step between two audio frames that is a frame duration rather than a gap
    /// (250 ms: an AAC frame lasts at most 2048 samples at 8 kHz); also the longest step back of
    /// an audio clock that is a glitch rather than a reset.
    public var maximumAudioFrameStep: Int64 = 22_500
    /// The frame step assumed for an audio track before it showed one (1024 samples at 48 kHz).
    public var defaultAudioFrameStep: Int64 = 1_920
    /// How far frames placed one after another may have run ahead of an audio clock that ticks
    /// on normally and still be caught up with by dropping what comes behind them (10 s);
    /// further ahead, the clock is re-anchored as a reset.
    public var maximumAudioCatchUp: Int64 = 10 * MediaTicks.perSecond

    public init() {}
  }

  private struct Track: Sendable {
    var lastDTS: Int64 = .min
    var lastDelta: Int64 = 0
    /// The last step of an audio track that was a frame duration, not a gap.
    var frameStep: Int64 = 0
    /// Audio steps in a row that were gaps or resets.
    var irregularSteps = 0
    /// The last sample's time was corrected, so the step from it says nothing about the clock.
    var lastCorrected = false
    /// The audio frame duration from the track's format, as samples per frame and sample rate.
    var nominalFrame: (samples: Int64, rate: Int64)?
    /// Where a run of clock corrections started and how many frames it placed, so each is an
    /// exact multiple of the frame duration from there (no rounding accumulates).
    var correctionAnchor: Int64 = .min
    var correctedFrames: Int64 = 0
    /// The last sample's time on the track's own clock (adjustment included), before a glitch
    /// correction placed it elsewhere.
    var lastClock: Int64 = .min
    var adjustment: Int64 = 0
    /// A coarse clock's last change of value and the frames since, so that its own idea of a
    /// frame's time is that value plus an exact number of frame durations.
    var tickClock: Int64 = 0
    var framesSinceTick: Int64 = 0
    /// Samples of a coarse clock refused while no track with a fine clock had started.
    var waitedFrames: Int64 = 0
    /// The last sample was on a coarse clock.
    var coarse = false
    var started: Bool { lastDTS != .min }
  }

  /// The largest tick magnitude kept (about 800,000 years): far beyond any real clock.
  static let limit: Int64 = 1 << 61

  public let configuration: Configuration
  private var base: Int128?
  private var tracks = [Track](repeating: Track(), count: SampleKind.allCases.count)
  /// The latest decode time of any track with a fine clock: the shared "now" a reset clock is
  /// re-anchored to, and the host time a coarse clock's frames start from.
  private var now: Int64 = .min
  /// The last audio clock that jumped forward by more than the threshold and was pulled back to
  /// the shared "now": by how much, and where it was placed. When the video then jumps forward
  /// by about as much, the whole capture stalled (nothing arrived for seconds, then every track
  /// went on later) and audio merely came first: the video is pulled back by the same amount,
  /// so the tracks stay as far apart as their clocks say.
  private var audioPulledBack: (by: Int64, at: Int64)?
  /// Number of re-anchored clocks so far.
  public private(set) var discontinuities = 0
  /// Number of samples whose time was corrected without a reset: repeated or slightly backwards
  /// timestamps, and samples of a clock whose steps are unusable.
  public private(set) var corrections = 0

  public init(configuration: Configuration = Configuration()) {
    self.configuration = configuration
  }

  /// Whether an audio track that went quiet for longer than the threshold came back where the
  /// other tracks are: the app stopped playing or the mic was turned off, and the host clock
  /// went on. Such a step is a gap, kept as it is; a reset clock comes back elsewhere.
  private func resumesOnTheSharedClock(_ stampDTS: Int64, _ track: Track) -> Bool {
    guard now != .min, now > track.lastDTS, track.frameStep > 0 else { return false }
    return (stampDTS &- now).magnitude <= UInt64(max(configuration.jumpThreshold, 0))
  }

  /// Ticks of `count` frames of an audio track: exact from its format's samples per frame and
  /// sample rate (no rounding accumulates), else its learned or assumed frame step.
  private func frames(_ count: Int64, of track: Track) -> Int64 {
    if let nominal = track.nominalFrame {
      return count &* nominal.samples &* MediaTicks.perSecond / nominal.rate
    }
    let step = track.frameStep > 0 ? track.frameStep : configuration.defaultAudioFrameStep
    return count &* max(step, 1)
  }

  /// Whether one unit of `time`'s timescale is longer than an audio frame of the track, so that
  /// several frames share one value (a mic stamped in whole seconds).
  private func isCoarse(_ time: MediaTime, _ track: Track) -> Bool {
    let timescale = Int64(time.timescale)
    if let nominal = track.nominalFrame {
      return nominal.samples * timescale < nominal.rate
    }
    return frames(1, of: track) * timescale < MediaTicks.perSecond
  }

  /// Places a sample of a coarse audio clock whose value on the shared timeline is `clock`: one
  /// frame after the track's previous sample, or further on where both its own clock and the
  /// host time are more than a frame ahead of that. Returns the decode time and whether the
  /// track joined at the shared "now" from a clock of its own.
  private func placeCoarse(_ clock: Int64, _ track: inout Track) -> (dts: Int64, joined: Bool) {
    guard track.started else {
      var start = clock
      var joined = false
      if now != .min && (clock &- now).magnitude > UInt64(max(configuration.jumpThreshold, 0)) {
        // Its clock is another than the other tracks': it joins at the shared "now".
        track.adjustment = track.adjustment &+ (now &- clock)
        start = now
        joined = true
      }
      track.tickClock = start
      track.framesSinceTick = 0
      let placed = now == .min ? start : min(start, now)
      track.correctionAnchor = placed
      track.correctedFrames = 0
      return (placed, joined)
    }
    if !track.coarse {
      // The clock turned coarse: count on from the track's last frame.
      track.correctionAnchor = track.lastDTS
      track.correctedFrames = 0
      track.lastClock = .min
    }
    if clock != track.lastClock {
      track.tickClock = clock
      track.framesSinceTick = 0
    } else {
      track.framesSinceTick += 1
    }
    let own = track.tickClock &+ frames(track.framesSinceTick, of: track)
    // Where the frame may be at the latest: no later than its own clock says (it may have been
    // rounded down) and than the host time (it may have been rounded up).
    let latest = now == .min ? own : min(own, now)
    let next = track.correctionAnchor &+ frames(track.correctedFrames + 1, of: track)
    if latest &- next > frames(1, of: track) {
      track.correctionAnchor = latest
      track.correctedFrames = 0
      return (latest, false)
    }
    track.correctedFrames += 1
    return (next, false)
  }

  /// Tells the timeline an audio track's frame duration (1024 samples for AAC), so a glitch or an
  /// unusable clock is corrected by exactly one frame rather than by a learned or assumed step.
  public mutating func setAudioFrameDuration(samples: Int, sampleRate: Int, for kind: SampleKind) {
    guard kind.isAudio, samples > 0, sampleRate > 0 else { return }
    tracks[Int(kind.rawValue)].nominalFrame = (Int64(samples), Int64(sampleRate))
  }

  /// Converts one sample's timestamps.
  /// - Throws: `TimelineError` for an invalid timescale or an unrepresentable distance; the sample
  ///   should then be dropped and counted, and the timeline is unchanged (but for the readings
  ///   of a clock it waits for, `awaitingSharedClock` and `behindPlacedFrames`).
  public mutating func stamp(kind: SampleKind, pts: MediaTime, dts: MediaTime?)
    throws(TimelineError)
    -> Stamp
  {
    let decode = dts ?? pts
    guard pts.isValid else { throw .invalidTimescale(kind, pts) }
    guard decode.isValid else { throw .invalidTimescale(kind, decode) }
    let widePTS = TimeConversion.wideTicks(pts)
    let wideDTS = TimeConversion.wideTicks(decode)
    let base = self.base ?? min(widePTS, wideDTS)
    let offset = Int128(configuration.startOffset)
    guard let rawPTS = Int64(exactly: widePTS - base + offset),
      let rawDTS = Int64(exactly: wideDTS - base + offset)
    else { throw .outOfRange(kind, pts) }

    let threshold = max(configuration.jumpThreshold, 0)
    var track = tracks[Int(kind.rawValue)]
    let coarse = kind.isAudio && isCoarse(decode, track)
    if coarse && !track.started && now == .min && frames(track.waitedFrames, of: track) < threshold
    {
      // Nothing says yet where its value lies within its unit: placed now, the frame could be up
      // to a unit ahead of the tracks still to come, and no later frame could go back.
      track.waitedFrames += 1
      tracks[Int(kind.rawValue)] = track
      throw .awaitingSharedClock(kind)
    }
    var stampDTS = rawDTS &+ track.adjustment
    var discontinuity = false
    var outOfOrder = false
    var corrected = false
    var clock: Int64? = nil
    if coarse {
      let placed = placeCoarse(stampDTS, &track)
      discontinuity = placed.joined
      corrected = placed.dts != stampDTS
      clock = placed.joined ? rawDTS &+ track.adjustment : stampDTS
      stampDTS = placed.dts
    } else if track.started && kind.isAudio {
      if track.coarse { track.correctionAnchor = .min }
      let step = stampDTS &- track.lastDTS
      // Glitches are judged against the clock's own last reading, so a run of them (a clock
      // that ticks once a second) is spread one frame apart instead of turning into a reset.
      let clockStep = stampDTS &- track.lastClock
      let frame =
        track.nominalFrame.map { $0.samples * MediaTicks.perSecond / $0.rate }
        ?? (track.frameStep > 0 ? track.frameStep : configuration.defaultAudioFrameStep)
      // Behind by more than half a frame: a glitch (a repeated time, an early one) stays within
      // that once the clock ticks on; a burst does not.
      if step < -(frame / 2) && clockStep > 0 && clockStep <= configuration.maximumAudioFrameStep
        && step >= -configuration.maximumAudioCatchUp
      {
        // The clock ticks on, but earlier frames were laid out past it (a burst delivered with
        // one time): placing this one after them would keep the whole track behind its clock
        // for good. It is dropped instead, until the clock is back where the frames are; the
        // clock's reading is kept, so the next one is judged against it.
        tracks[Int(kind.rawValue)].lastClock = stampDTS
        throw .behindPlacedFrames(kind)
      } else if step <= 0 && clockStep >= -configuration.maximumAudioFrameStep {
        clock = stampDTS
        // A repeated or slightly early timestamp: one frame on, the clock itself is kept.
        stampDTS = track.lastDTS + frame
        corrected = true
      } else if step <= 0 || (step > threshold && !resumesOnTheSharedClock(stampDTS, track)) {
        // One frame on, or at the shared "now" when other tracks went on meanwhile.
        let anchored = max(track.lastDTS + frame, now)
        if step > threshold && stampDTS &- anchored > threshold {
          audioPulledBack = (stampDTS &- anchored, anchored)
        }
        track.adjustment = track.adjustment &+ (anchored &- stampDTS)
        stampDTS = anchored
        discontinuity = true
        track.irregularSteps += 1
        track.correctionAnchor = .min
      } else if step > configuration.maximumAudioFrameStep {
        if track.irregularSteps > 0 || track.frameStep == 0 {
          // A second gap in a row, or a gap before any frame step, is not silence but a clock
          // in the wrong unit: advance it by its frame duration, as the samples keep arriving
          // at the real frame rate.
          if track.correctionAnchor == .min {
            track.correctionAnchor = track.lastDTS
            track.correctedFrames = 0
          }
          track.correctedFrames += 1
          let placed =
            track.nominalFrame.map {
              track.correctionAnchor
                &+ track.correctedFrames &* $0.samples &* MediaTicks.perSecond / $0.rate
            } ?? track.lastDTS + frame
          track.adjustment = track.adjustment &+ (placed &- stampDTS)
          stampDTS = placed
          corrected = true
        }
        track.irregularSteps += 1
      } else {
        if !track.lastCorrected { track.frameStep = step }
        track.irregularSteps = 0
        track.correctionAnchor = .min
      }
      track.lastCorrected = corrected
    } else if track.started {
      if let pulled = audioPulledBack, pulled.at >= track.lastDTS,
        stampDTS &- track.lastDTS > threshold,
        (stampDTS &- track.lastDTS &- pulled.by).magnitude <= UInt64(threshold)
      {
        // The capture stalled and an audio track, first after it, was pulled back: follow it.
        let anchored = max(stampDTS &- pulled.by, track.lastDTS + 1)
        track.adjustment = track.adjustment &+ (anchored &- stampDTS)
        stampDTS = anchored
        discontinuity = true
        audioPulledBack = nil
      } else if stampDTS <= track.lastDTS {
        if track.lastDTS &- stampDTS < threshold {
          // A video DTS that repeats or steps back a little: nudge it forward, no reset. One
          // that steps back came out of decode order (`Stamp.isOutOfOrder`).
          outOfOrder = stampDTS < track.lastDTS
          stampDTS = track.lastDTS + 1
        } else {
          // One usual step on, but never further than the threshold: a video track's last step
          // may be a long still screen, which must not push the re-anchored clock ahead.
          let anchored = max(track.lastDTS + min(max(track.lastDelta, 1), threshold), now)
          track.adjustment = track.adjustment &+ (anchored &- stampDTS)
          stampDTS = anchored
          discontinuity = true
        }
      }
    } else if kind.isAudio && now != .min && (stampDTS &- now).magnitude > UInt64(threshold) {
      // An audio track whose first sample is on a clock of its own joins at the shared "now";
      // otherwise its next sample would be re-anchored and this one left far away.
      track.adjustment = now &- stampDTS
      stampDTS = now
      discontinuity = true
    }
    let stampPTS = max(rawPTS &+ (stampDTS &- rawDTS), stampDTS)
    // Bounding what is kept leaves room for every sum and difference above, so no input can trap.
    guard stampDTS.magnitude <= Self.limit, stampPTS.magnitude <= Self.limit else {
      throw .outOfRange(kind, pts)
    }
    if track.started && !discontinuity { track.lastDelta = stampDTS - track.lastDTS }
    if discontinuity { discontinuities += 1 }
    if corrected { corrections += 1 }
    self.base = base
    track.lastDTS = stampDTS
    track.lastClock = clock ?? stampDTS
    track.coarse = coarse
    tracks[Int(kind.rawValue)] = track
    if !coarse { now = max(now, stampDTS) }
    return Stamp(
      pts: stampPTS, dts: stampDTS, isDiscontinuity: discontinuity, isOutOfOrder: outOfOrder)
  }
}
