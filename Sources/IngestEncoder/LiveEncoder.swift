import CFFmpegEncoder
import Foundation
import IngestCore
import IngestPOSIX

/// The encoder process: reads a source in real time, encodes H.264 or HEVC and AAC, writes the dump
/// stream to standard output, obeys the requests on standard input and reports on standard error.
///
/// ```
///            main thread                                     mic thread (--mic only)
/// source ─► decode ─► filter ─► pace ─► x264|x265 / AAC ┐  mic source ─► … ─► AAC ─┐
///                      requests (control thread) ──┘                             │
///                                               DumpOutput (one record at a time) ◄┘ ─► stdout
/// ```
///
/// Every timestamp is on CLOCK_MONOTONIC (`SystemClock`), in nanoseconds: the run's start plus
/// the source's own time, so a file plays at its pace and tracks stay in step however long
/// encoding takes.
public final class LiveEncoder {
  private let options: EncoderOptions
  private let log = EncoderLog()
  private let state = RunState()
  private let clock = SystemClock()
  private let main: MediaInput
  private let micInput: MediaInput?
  private let video: VideoEncoder
  private var audio: [AudioTrack] = []
  private var micTrack: AudioTrack?
  /// `--mix-audio` with app and mic audio: both go through it into the app track.
  private var audioMix: EncoderAudioMix?
  private var output: DumpOutput!
  private var control: ControlChannel!
  private var epoch: MonotonicInstant = .origin
  private var thinner = FrameRateThinner()
  private var idrPending = false
  /// A bitrate request libx265 takes only at the next keyframe: echoed when it takes effect.
  private var deferredBitrate: (request: EncoderRequest, received: MonotonicInstant)?
  private var deferralNoted = false
  /// A profile request, echoed when the encoder reopens in it at the next keyframe.
  private var deferredProfile: (request: EncoderRequest, received: MonotonicInstant)?
  private var keyframesOnly = false
  private var encodedFrames = 0
  private var droppedFrames = 0
  private var second = (start: Int64(0), bytes: 0, frames: 0)

  /// Opens the sources and the encoders; nothing is written yet.
  /// - Throws: `EncoderError` for a missing file, a source without video, an unknown display.
  public init(options: EncoderOptions) throws(EncoderError) {
    // libav's banners and notices would crowd the JSON lines on standard error; errors stay.
    av_log_set_level(AV_LOG_ERROR)
    self.options = options
    let separateMic = options.mic != nil && !options.noMic
    main = try MediaInput(
      options.source, options: options, wantsVideo: true,
      wantsMic: !options.noMic && !separateMic, micOnly: false)
    micInput =
      separateMic
      ? try MediaInput(
        options.mic!, options: options, wantsVideo: false, wantsMic: true, micOnly: true)
      : nil
    video = try VideoEncoder(options: options)
    let roles = main.roles + (micInput?.roles ?? [])
    if roles.contains(.appAudio) {
      audio.append(try AudioTrack(role: .appAudio, channels: 2, bitrate: options.audioBitrate))
    }
    if roles.contains(.micAudio) {
      let track = try AudioTrack(role: .micAudio, channels: 1, bitrate: options.audioBitrate)
      micTrack = track
      // A separate mic source is encoded on its own thread; a second stream on the main one.
      if micInput == nil { audio.append(track) }
    }
    if let gains = options.mixGains, let app = audio.first(where: { $0.role == .appAudio }),
      micTrack != nil
    {
      audioMix = try EncoderAudioMix(track: app, gains: gains)
    }
  }

  /// Runs until the source ends, `--duration` passes, a stop signal arrives or the reader of
  /// standard output goes away (all of which end normally).
  /// - Throws: `EncoderError` when encoding or writing fails.
  public func run() throws(EncoderError) {
    StopSignal.install()
    output = try DumpOutput()
    var formats: [(FormatDescription, SampleKind)] = [(video.format, .video)]
    for track in audio + (micInput != nil ? [micTrack!] : [])
    where audioMix == nil || track.role == .appAudio {
      formats.append((.aac(track.encoder.format), track.role.kind))
    }
    for (format, kind) in formats {
      guard try output.writeFormat(format, for: kind) else { return finish("reader") }
    }
    control = ControlChannel(input: .standardInput, log: log)
    epoch = clock.now()
    second.start = 0
    log.emit("started") {
      $0.add("source", options.source.description)
      $0.add("codec", options.codec.rawValue)
      if let profile = options.profile { $0.add("profile", profile.rawValue) }
      $0.add("clock", "CLOCK_MONOTONIC")
      $0.add("epoch_ns", epoch.nanoseconds)
      $0.add("width", options.width)
      $0.add("height", options.height)
      $0.add("fps", options.fps)
      $0.add("bitrate", options.bitrate)
      $0.add("gop", options.keyframeInterval)
      $0.add("tracks", formats.map(\.1.description).joined(separator: ","))
    }
    let micDone = startMicThread()
    do {
      try main.run { (role, frame, time) throws(EncoderError) -> Bool in
        if role == .video { return try encodeVideo(frame, at: time) }
        if audioMix != nil { return try mixAudio(role, frame, at: time) }
        guard let track = audio.first(where: { $0.role == role }) else { return true }
        return try encodeAudio(track, frame, at: time)
      }
      state.stop("source")
    } catch {
      state.fail(error)
    }
    micDone?.wait()
    if let error = state.error { throw error }
    drain()
    finish(state.reason)
  }

  /// Starts encoding the `--mic` source on its own thread; the semaphore signals its end.
  private func startMicThread() -> DispatchSemaphore? {
    guard let micInput, let micTrack else { return nil }
    let done = DispatchSemaphore(value: 0)
    // The input and the track move to the new thread and are not touched here until `done`
    // (a thread of our own: it takes them as they are, where Foundation's wants Sendable).
    let thread = SystemThread.start { [self] in
      do throws(EncoderError) {
        try micInput.run { (_, frame, time) throws(EncoderError) -> Bool in
          audioMix != nil
            ? try mixAudio(.micAudio, frame, at: time)
            : try encodeAudio(micTrack, frame, at: time)
        }
      } catch {
        state.fail(error)
      }
      done.signal()
    }
    guard thread != nil else {
      state.fail(.codec("the mic", reason: "its thread could not be started"))
      return nil
    }
    return done
  }

  private func shouldContinue(at time: Int64) -> Bool {
    if state.isStopping { return false }
    if let duration = options.duration, time >= TimeSpan(seconds: duration).nanoseconds {
      state.stop("duration")
      return false
    }
    return true
  }

  private func encodeVideo(_ frame: UnsafeMutablePointer<AVFrame>, at time: Int64)
    throws(EncoderError) -> Bool
  {
    guard shouldContinue(at: time) else { return false }
    clock.sleep(until: epoch + .nanoseconds(time))
    let applied = applyRequests()
    guard thinner.keep(at: time) else {
      droppedFrames += 1
      for (request, received) in applied { echo(request, received: received, at: time) }
      return true
    }
    let idr = idrPending || keyframesOnly
    idrPending = false
    for (request, received) in applied { echo(request, received: received, at: time) }
    let more = try video.encode(frame, microseconds: time / 1000, idr: idr, writeVideo)
    if video.reopenedOnLastFrame, let (request, received) = deferredBitrate {
      deferredBitrate = nil
      echo(request, received: received, at: time)
    }
    if video.reopenedOnLastFrame, let (request, received) = deferredProfile {
      deferredProfile = nil
      echo(request, received: received, at: time)
    }
    encodedFrames += 1
    second.frames += 1
    if time - second.start >= TimeSpan.nanosecondsPerSecond { reportSecond(at: time) }
    return more
  }

  private func writeVideo(_ encoded: VideoEncoder.Output) throws(EncoderError) -> Bool {
    let written: Bool
    switch encoded {
    case .format(let format): written = try output.writeFormat(format, for: .video)
    case .packet(let payload, let pts, let dts, let keyframe):
      second.bytes += payload.count
      // The decode time always, also when it equals the presentation time (no B-frames):
      // the pipeline reads a stream's first 32 video samples before it starts when they
      // carry none, to see that they are in display order, which held every live run's
      // first second in its ring.
      written = try output.writeSample(
        kind: .video, ptsNanoseconds: epoch.nanoseconds + pts * 1000,
        dtsNanoseconds: epoch.nanoseconds + dts * 1000,
        isKeyframe: keyframe, payload: payload)
    }
    if !written { state.stop("reader") }
    return written
  }

  fileprivate func encodeAudio(
    _ track: AudioTrack, _ frame: UnsafeMutablePointer<AVFrame>, at sourceTime: Int64
  ) throws(EncoderError) -> Bool {
    let time = track.nextTime(sourceTime: sourceTime)
    guard shouldContinue(at: time) else { return false }
    clock.sleep(until: epoch + .nanoseconds(time))
    var silent = false
    if track.role == .micAudio {
      let enabled = state.micEnabled
      silent = !enabled
      if enabled != track.lastEnabled {
        track.lastEnabled = enabled
        log.emit("applied") {
          $0.add("request", "mic")
          $0.add("enabled", enabled)
          $0.add("track", "audioMic")
          $0.add("frame", track.frames)
          $0.add("pts_ns", epoch.nanoseconds + time)
        }
      }
    }
    let more = try track.encoder.encode(frame, silent: silent) {
      (payload, samples) throws(EncoderError) -> Bool in
      let written = try output.writeSample(
        kind: track.role.kind, ptsNanoseconds: epoch.nanoseconds + track.time(ofSamples: samples),
        dtsNanoseconds: nil, isKeyframe: true, payload: payload)
      if !written { state.stop("reader") }
      return written
    }
    track.countFrame()
    return more
  }

  /// `--mix-audio`: one frame of app or mic audio into the mix, at its time; the mix goes out
  /// as app audio. The mic switch mutes the mic in the mix, echoed on the mic's first frame it
  /// affects.
  fileprivate func mixAudio(
    _ role: TrackRole, _ frame: UnsafeMutablePointer<AVFrame>, at time: Int64
  ) throws(EncoderError) -> Bool {
    guard let audioMix, shouldContinue(at: time) else { return false }
    clock.sleep(until: epoch + .nanoseconds(time))
    let enabled = state.micEnabled
    if role == .micAudio, let micTrack, enabled != micTrack.lastEnabled {
      micTrack.lastEnabled = enabled
      log.emit("applied") {
        $0.add("request", "mic")
        $0.add("enabled", enabled)
        $0.add("track", "audioApp (mixed)")
        $0.add("pts_ns", epoch.nanoseconds + time)
      }
    }
    return try audioMix.push(role, frame, time: time, micMuted: !enabled) {
      (payload, time) throws(EncoderError) -> Bool in
      let written = try output.writeSample(
        kind: .audioApp, ptsNanoseconds: epoch.nanoseconds + time, dtsNanoseconds: nil,
        isKeyframe: true,
        payload: payload)
      if !written { state.stop("reader") }
      return written
    }
  }

  /// Takes the queued requests and applies those that act on the encoder; the mic switch is
  /// echoed by the thread that encodes the mic, on the frame it first affects.
  private func applyRequests() -> [(EncoderRequest, MonotonicInstant)] {
    var applied: [(EncoderRequest, MonotonicInstant)] = []
    for received in control.take() {
      switch received.request {
      case .bitrate(let bps):
        guard video.setBitrate(bps ?? options.bitrate) else {
          deferBitrate(received.request, received: received.received)
          continue
        }
        deferredBitrate = nil
      case .frameRate(let fps):
        let share = min(1, fps / Double(options.fps))
        thinner.setTarget(share < 1 ? fps : nil)
        video.setFrameShare(share)
      case .keyframe: idrPending = true
      case .keyframesOnly(let on): keyframesOnly = on
      case .profile(let profile):
        guard options.codec == .h264 else {
          log.emit("rejected") {
            $0.add("line", received.request.line)
            $0.add("reason", "a profile request applies to H.264; this encoder makes HEVC")
          }
          continue
        }
        // In force already: applied now; else at the next keyframe, where libx264 reopens.
        guard video.setProfile(profile) else {
          deferredProfile = (received.request, received.received)
          continue
        }
        deferredProfile = nil
      case .mic(let on):
        state.micEnabled = on
        guard micTrack == nil else { continue }
      }
      applied.append((received.request, received.received))
    }
    return applied
  }

  /// Keeps a bitrate request for the next keyframe, and says once that this is how the encoder
  /// takes them.
  private func deferBitrate(_ request: EncoderRequest, received: MonotonicInstant) {
    deferredBitrate = (request, received)
    guard !deferralNoted else { return }
    deferralNoted = true
    log.emit("notice") {
      $0.add("request", "bitrate")
      $0.add(
        "message",
        "libx265 cannot change its bitrate in place through libavcodec 5.1: a new bitrate takes"
          + " effect at the next keyframe, where the encoder is opened again")
    }
  }

  /// `{"event":"applied",…}`: what took effect, on which encoded frame (its index among the
  /// dump's video samples) and at which timestamp, and when the request had arrived.
  private func echo(_ request: EncoderRequest, received: MonotonicInstant, at time: Int64) {
    log.emit("applied") {
      $0.add("request", request.name)
      switch request {
      case .bitrate: $0.add("target_bps", video.bitrate)
      case .frameRate(let fps): $0.add("target_fps", fps)
      case .mic(let on):
        $0.add("enabled", on)
        $0.add("track", "absent")
      case .keyframesOnly(let on): $0.add("enabled", on)
      case .keyframe: break
      case .profile(let profile): $0.add("profile", profile.rawValue)
      }
      $0.add("frame", encodedFrames)
      $0.add("pts_ns", (epoch + .nanoseconds(time / 1000 * 1000)).nanoseconds)
      $0.add("received_ns", received.nanoseconds)
      $0.add("applied_ns", clock.now().nanoseconds)
    }
  }

  /// `{"event":"stats",…}` once a second of media time: what the encoder produced in it.
  private func reportSecond(at time: Int64) {
    let elapsed = TimeSpan(nanoseconds: time - second.start).inSeconds
    log.emit("stats") {
      $0.add("frame", encodedFrames)
      $0.add("pts_ns", epoch.nanoseconds + time)
      $0.add("video_bps", Int(Double(second.bytes * 8) / elapsed))
      $0.add("fps", Double(second.frames) / elapsed, decimals: 2)
      $0.add("target_bps", video.bitrate)
      $0.add("dropped", droppedFrames)
    }
    second = (time, 0, 0)
  }

  /// Flushes what the encoders still hold (nothing with zerolatency and no B-frames).
  private func drain() {
    guard state.reason != "reader" else { return }
    do {
      _ = try video.encode(nil, microseconds: 0, idr: false, writeVideo)
    } catch {
      log.emit("error") { $0.add("message", error.description) }
    }
  }

  private func finish(_ reason: String) {
    log.emit("end") {
      $0.add("reason", reason)
      $0.add("frames", encodedFrames)
      $0.add("dropped", droppedFrames)
    }
  }
}
