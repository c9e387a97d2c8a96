/// Mixes two PCM inputs (app audio and the mic, already decoded and at the mix's rate and
/// channels) into one track of fixed-size frames, on the timeline the inputs' timestamps share.
///
/// ```
/// buffer (one allocation, 32-bit float, planar)
/// ┌──────────── app ring ────────────┬──────────── mic ring ────────────┬─ output frame ─┐
/// │ ch0: ringSamples │ ch1: ... │ ...│ ch0: ringSamples │ ch1: ... │ ...│ ch0 │ ch1 │ ...│
/// └──────────────────────────────────┴──────────────────────────────────┴────────────────┘
/// a sample at timeline position p of channel c sits at ring[c * ringSamples + p mod ringSamples]
/// ```
///
/// Timing, on one timeline of samples at the mix rate (the inputs' timestamps converted with
/// `position(of:sampleRate:)`):
/// - The mix starts at the first sample pushed, on the app input's grid of frames (the mic's
///   until the app's first sample, if the mic came first and nothing was mixed yet); frames
///   follow back to back, so the mixed track never has a gap, and each frame's position is a
///   time of that timeline (the video's, when the capture stamps all tracks from one clock).
/// - A frame is mixed once both inputs have delivered it, or once the newest sample is
///   `holdbackSamples` past its end: an input that paused or starts late is silence there.
/// - Each input keeps its own clock: a step of at most `glitchSamples` is jitter (the samples go
///   on where the last ones ended); a step back, or a step forward that lands further than
///   `jumpThresholdSamples` from the timeline's present (or more than `longestGapSamples` on),
///   is that input's clock reset, and the input is re-anchored to go on where it ended. Another
///   input's clock never moves: a reset of the mic leaves the app's samples, and so the mixed
///   track's timestamps, where they were.
/// - Samples for a time already mixed are dropped (counted in `trimmedSamples`).
///
/// Gains ramp across a frame when they change (`gains`, `isMicMuted`), then `PeakLimiter`
/// keeps the sum under its ceiling. Nothing is allocated after `init`. Not thread-safe: one
/// thread pushes.
public final class AudioMixer {
  /// Per input: where its samples go on the timeline.
  private struct InputClock {
    var started = false
    /// Added to the input's positions: non-zero after a reset of its clock.
    var offset: Int64 = 0
    /// Where its next samples are expected, on the timeline.
    var end: Int64 = 0
    var resets = 0
    /// The input's own position of its last push, before `offset`.
    var lastPosition: Int64 = .min
    /// What repeats of one position (a burst delivered with one time) added to `offset`: taken
    /// back once the clock ticks on, so the input returns to its own clock.
    var burst: Int64 = 0
  }

  public let configuration: AudioMixConfiguration
  /// The gains mixed from the next frame on.
  public var gains: AudioMixGains
  /// Whether the mic is left out of the mix (the ladder's mic tier): ramped to silence over a
  /// frame, and back.
  public var isMicMuted = false
  private let buffer: UnsafeMutableBufferPointer<Float>
  private let ringSamples: Int
  private var clocks = [InputClock(), InputClock()]
  /// The gains the last frame ended on, app then mic.
  private var appliedGains: (app: Float, mic: Float)
  private var limiter: PeakLimiter
  /// The next frame's first position; nil until the first push.
  private var cursor: Int64?
  /// Whether a frame was mixed: until then the frames' grid may still move to the app's.
  private var hasMixed = false
  /// The furthest position any input reached.
  private var head: Int64 = .min
  /// The latest time of another track on the same clock (the video), as a position.
  private var reference: Int64?
  /// Input samples dropped because their time was already mixed.
  public private(set) var trimmedSamples = 0

  /// Allocates the rings and the output frame (`configuration.bufferBytes`).
  public init(configuration: AudioMixConfiguration, limiter: PeakLimiter = PeakLimiter()) {
    self.configuration = configuration
    gains = configuration.gains
    appliedGains = (configuration.gains.app, configuration.gains.mic)
    self.limiter = limiter
    ringSamples = configuration.ringSamples
    buffer = .allocate(capacity: configuration.bufferBytes / MemoryLayout<Float>.size)
    buffer.initialize(repeating: 0)
  }

  deinit { buffer.deallocate() }

  /// Times the clock of `input` was found reset and re-anchored.
  public func resets(of input: AudioMixInput) -> Int { clocks[input.rawValue].resets }

  /// Frames the limiter turned down.
  public var limitedFrames: Int { limiter.limitedFrames }

  /// `time` as a sample position at `sampleRate`, rounded down; exact for any timescale, with no
  /// overflow for a nanosecond clock.
  public static func position(of time: MediaTime, sampleRate: Int) -> Int64 {
    precondition(time.isValid)
    let scale = Int64(time.timescale)
    let seconds = time.value / scale
    var remainder = time.value % scale
    var whole = seconds
    if remainder < 0 {
      remainder += scale
      whole -= 1
    }
    return whole * Int64(sampleRate) + remainder * Int64(sampleRate) / scale
  }

  /// Notes the time of another track on the same clock (a video frame's), so that an input
  /// coming back from a pause is told from a reset by where the capture is now, not only by
  /// where the other audio input is.
  public func observeReference(_ position: Int64) {
    reference = max(reference ?? position, position)
  }

  /// Takes `count` samples of `input` whose first sample is at timeline `position`, and mixes
  /// (calling `emit` with each) every frame that is ready after them.
  /// - Parameter samples: the samples of one channel (0..<configuration.channels), at the mix
  ///   rate; read during the call only.
  /// - Parameter coarse: the input's timestamps are on a clock coarser than a frame (a mic
  ///   stamped in whole seconds): see `place`.
  public func push(
    _ input: AudioMixInput, position: Int64, count: Int, coarse: Bool = false,
    samples: (Int) -> UnsafePointer<Float>, emit: (AudioMixFrame) -> Void
  ) {
    guard count > 0 else { return }
    // A coarse clock before anything else has a time: where its frame lies within its unit is
    // not known yet (the `Timeline` refuses such samples too, `awaitingSharedClock`).
    if coarse && cursor == nil && reference == nil {
      trimmedSamples += count
      return
    }
    guard var position = place(input, position: position, count: count, coarse: coarse) else {
      // Behind what a burst laid out ahead of its clock: dropped while the clock catches up.
      trimmedSamples += count
      return
    }
    var done = 0
    while done < count {
      let piece = min(count - done, configuration.largestChunkSamples)
      write(input, position: position, from: done, count: piece, samples: samples, emit: emit)
      position += Int64(piece)
      done += piece
    }
    clocks[input.rawValue].end = position
    head = max(head, position)
    while let cursor, isReady(cursor) { mixFrame(at: cursor, emit: emit) }
  }

  /// Mixes what is left, up to the furthest sample pushed (the last frame padded with silence).
  public func finish(emit: (AudioMixFrame) -> Void) {
    while let cursor, cursor < head { mixFrame(at: cursor, emit: emit) }
  }

  /// Where `input`'s samples at `position` go on the timeline, its clock re-anchored when they
  /// land elsewhere than a clock that kept going could put them.
  ///
  /// A coarse clock says where a frame is only to within its unit (a second), and not in which
  /// direction it was rounded, so its samples follow each other by count, as the `Timeline`
  /// places such a track: starting no later than the present (the video's time), following the
  /// clock only where it is behind that, and moving on, leaving a gap, once both the clock and
  /// the present are more than a frame ahead (the clock ticked after a pause). Taken as it is,
  /// each second's first frame would read as a step forward of up to a second, and the mic
  /// (and the mix with it) would run ahead of the video by that much every second.
  ///
  /// A burst is not a reset: frames that repeat one position (delivered at once after a stall,
  /// stamped on delivery) are laid out one after another, and once the clock ticks on again
  /// what it places behind them is dropped (nil) until it has caught up; then the input is back
  /// on its own clock instead of trailing it by the burst's length for the rest of the run.
  private func place(_ input: AudioMixInput, position: Int64, count: Int, coarse: Bool) -> Int64? {
    if cursor == nil {
      cursor = position
      head = position
    }
    let now = max(head, reference ?? head)
    var clock = clocks[input.rawValue]
    defer { clocks[input.rawValue] = clock }
    let jump = Int64(configuration.jumpThresholdSamples)
    guard clock.started else {
      clock.started = true
      clock.lastPosition = position
      // An input that starts late starts where it says, unless its clock is elsewhere.
      if abs(position - now) > jump {
        clock.offset = now - position
        clock.resets += 1
      }
      var placed = position + clock.offset
      if coarse { placed = min(placed, now) }
      // The mixed frames follow the app's frames (the same A/V offset as the app track): when
      // the mic came first and nothing was mixed yet, the first frame moves onto the app's grid,
      // at or before where the mic began. The rings hold samples by position, so nothing moves.
      if input == .app, !hasMixed, let start = cursor {
        let frame = Int64(configuration.frameSamples)
        let frames =
          (start - placed) >= 0 ? (start - placed) / frame : -((placed - start + frame - 1) / frame)
        cursor = placed + frames * frame
      }
      return placed
    }
    let repeated = position == clock.lastPosition
    clock.lastPosition = position
    if !coarse && clock.burst > 0 && !repeated {
      let own = position + clock.offset - clock.burst
      if own + Int64(count) <= clock.end - Int64(configuration.glitchSamples) { return nil }
      clock.offset -= clock.burst
      clock.burst = 0
    }
    let placed = position + clock.offset
    if coarse {
      let frame = Int64(configuration.frameSamples)
      guard placed - clock.end > frame && now - clock.end > frame else { return clock.end }
      return min(placed, now)
    }
    let step = placed - clock.end
    if abs(step) <= Int64(configuration.glitchSamples) { return clock.end }
    let isPause =
      step > 0 && step <= Int64(configuration.longestGapSamples) && placed <= now + jump
    if isPause { return placed }
    if repeated && step < 0 {
      // Laid out after the frame it repeats the time of; a burst, undone when it ends.
      clock.burst += clock.end - placed
      clock.offset += clock.end - placed
      return clock.end
    }
    clock.offset += clock.end - placed
    clock.resets += 1
    return clock.end
  }

  /// Copies one piece into `input`'s ring, first mixing the frames that must leave to make
  /// room (a long pause filled with silence); samples before the next frame are dropped.
  private func write(
    _ input: AudioMixInput, position: Int64, from offset: Int, count: Int,
    samples: (Int) -> UnsafePointer<Float>, emit: (AudioMixFrame) -> Void
  ) {
    guard var cursor else { return }
    while position + Int64(count) > cursor + Int64(ringSamples) {
      mixFrame(at: cursor, emit: emit)
      cursor += Int64(configuration.frameSamples)
    }
    let skip = Int(max(0, min(Int64(count), cursor - position)))
    trimmedSamples += skip
    guard skip < count else { return }
    let ring = input.rawValue * ringSamples * configuration.channels
    var slot = Self.slot(position + Int64(skip), ringSamples)
    var index = skip
    while index < count {
      let run = min(count - index, ringSamples - slot)
      for channel in 0..<configuration.channels {
        let source = samples(channel) + offset + index
        let target = buffer.baseAddress! + ring + channel * ringSamples + slot
        target.update(from: source, count: run)
      }
      index += run
      slot = 0
    }
  }

  /// Whether the frame at `cursor` can be mixed: both inputs delivered it, or the newest
  /// sample is more than the holdback past it.
  private func isReady(_ cursor: Int64) -> Bool {
    let end = cursor + Int64(configuration.frameSamples)
    if clocks.allSatisfy({ $0.started && $0.end >= end }) { return true }
    return head >= end + Int64(configuration.holdbackSamples)
  }

  /// Mixes the frame at `cursor` into the output frame, clears its samples from both rings,
  /// limits it, lends it to `emit` and moves the cursor on.
  private func mixFrame(at cursor: Int64, emit: (AudioMixFrame) -> Void) {
    hasMixed = true
    let frame = configuration.frameSamples
    let channels = configuration.channels
    let output = 2 * ringSamples * channels
    let target = (app: gains.app, mic: isMicMuted ? 0 : gains.mic)
    let start = appliedGains
    let appStep = (target.app - start.app) / Float(frame)
    let micStep = (target.mic - start.mic) / Float(frame)
    let first = Self.slot(cursor, ringSamples)
    for channel in 0..<channels {
      let app = channel * ringSamples
      let mic = (channels + channel) * ringSamples
      for index in 0..<frame {
        let slot = (first + index) % ringSamples
        let ramp = Float(index + 1)
        buffer[output + channel * frame + index] =
          buffer[app + slot] * (start.app + appStep * ramp)
          + buffer[mic + slot] * (start.mic + micStep * ramp)
        buffer[app + slot] = 0
        buffer[mic + slot] = 0
      }
    }
    appliedGains = target
    let samples = UnsafeMutableBufferPointer(rebasing: buffer[output..<output + channels * frame])
    limiter.process(samples, channels: channels, count: frame)
    emit(
      AudioMixFrame(
        position: cursor, channels: channels, count: frame,
        samples: UnsafeBufferPointer(samples)))
    self.cursor = cursor + Int64(frame)
  }

  private static func slot(_ position: Int64, _ ringSamples: Int) -> Int {
    let slot = Int(position % Int64(ringSamples))
    return slot < 0 ? slot + ringSamples : slot
  }
}
