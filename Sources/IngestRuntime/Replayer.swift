import IngestAudioMix
import IngestCore
import IngestPOSIX

/// Replays a dump into the outputs' pipelines as a capture would: samples handed to each
/// output's `append` at their times (or as fast as possible), the senders pumped inline or on
/// their own threads, status reported.
///
/// With several outputs, each has its own pipeline: an output that falls behind drops from its
/// own ring, and one that fails stops alone while the others go on.
public final class Replayer<Source: ByteSource> {
  /// The reader until `run` takes it: a local is borrowed in place, while a class property is
  /// copied (its buffer and formats retained) for every call that lends out a payload.
  private var reader: DumpReader<Source>?
  private let lanes: [OutputLane]
  /// The run's audio mix, when an output carries one, on a thread of its own: fed here, and
  /// its mixed frames appended here, at every iteration, so that each pipeline keeps one
  /// producer.
  private let mix: AudioMixWorker?
  private let clock: any PacingClock
  private let speed: ReplaySpeed
  /// Called about every `progressInterval` with the first output's counters (for a terminal
  /// progress line).
  public var onProgress: ((PipelineSnapshot, TimeSpan) -> Void)?
  /// Tracks refused before the run (left out of every program): their samples still reach each
  /// output's pipeline, which refuses and counts every one, so the summary's drops say what of
  /// the input was not sent.
  var refusedKinds: Set<SampleKind> = []
  public var progressInterval: TimeSpan = .milliseconds(250)
  /// How long the end of the run may wait for the sinks to take what the rings hold: twice the
  /// longest ring (what a link at half the stream's rate needs to carry it) and 5 s for one
  /// reconnection. An output that is still down then has lost that much of a live stream
  /// anyway: it is counted as undelivered rather than waited for (it once was for 30 s).
  public var drainTimeout: TimeSpan
  /// Told, as one line, of each output that fails while the run goes on.
  var onOutputFailed: ((String) -> Void)?
  /// When `run` started, on `clock`.
  private var startedAt: MonotonicInstant = .origin
  /// Set when the drain starts: a write waiting on a reader gives up after it.
  let drainDeadline: DrainDeadline

  /// A replay into one output.
  /// - Parameters:
  ///   - driver: the output's sender with its tickers (`control`, then `reporter`).
  ///   - senderThread: when given, it steps `driver` (network sinks); otherwise the replay loop
  ///     steps it between samples, which is deterministic with a `VirtualClock`.
  public convenience init(
    reader: DumpReader<Source>, pipeline: Pipeline, driver: OutputDriver,
    senderThread: SenderThread?, clock: any PacingClock, speed: ReplaySpeed,
    control: ControlLoop, reporter: StatusReporter
  ) {
    let lane = OutputLane(
      index: 1, sink: driver.sender.sink, pipeline: pipeline, driver: driver,
      thread: senderThread, control: control, reporter: reporter)
    self.init(reader: reader, lanes: [lane], clock: clock, speed: speed)
  }

  /// A replay into every output of `lanes` (at least one).
  init(
    reader: DumpReader<Source>, lanes: [OutputLane], clock: any PacingClock, speed: ReplaySpeed,
    drainDeadline: DrainDeadline = DrainDeadline()
  ) {
    precondition(!lanes.isEmpty)
    self.drainDeadline = drainDeadline
    self.reader = reader
    self.lanes = lanes
    // A replay faster than its clock (`--speed max`, a virtual clock) models no capture: it
    // waits for the mix rather than drop what it falls behind by.
    let waits = speed == .max || !clock.passesInRealTime
    mix = lanes.lazy.compactMap(\.mix).first.map {
      AudioMixWorker(stage: $0, handOff: $0.handOff, whenFull: waits ? .wait : .drop)
    }
    self.clock = clock
    self.speed = speed
    drainTimeout = Self.drainTimeout(
      longestRingMilliseconds: lanes.map(\.pipeline.configuration.bufferMilliseconds).max() ?? 0)
  }

  /// The default `drainTimeout` for rings of at most `longestRingMilliseconds`.
  static func drainTimeout(longestRingMilliseconds: Int) -> TimeSpan {
    .milliseconds(2 * Int64(longestRingMilliseconds) + 5_000)
  }

  /// The reporter of the run's own events (start, stopping, refused formats, summary).
  var runReporter: StatusReporter { lanes[0].reporter }

  /// Runs to the end of the dump (or until every output failed), drains the rings and finishes
  /// the sinks.
  public func run() -> ReplaySummary {
    guard var reader = reader.take() else { preconditionFailure("a replay runs once") }
    let start = clock.now()
    startedAt = start
    var pacer = ReplayPacer(speed: { if case .factor(let f) = speed { f } else { 1 } }())
    var nextProgress = start
    var readError: DumpError?
    var invalidRecords = 0
    var refusedFormats: [RefusedFormat] = []
    var stopSignal: String?
    for lane in lanes { lane.thread?.start() }
    mix?.start()
    reading: while true {
      if let signal = StopSignal.requested {
        stopSignal = signal
        runReporter.emit("stopping") { $0.add("signal", signal) }
        break
      }
      let record: DumpRecord?
      do { record = try reader.next() } catch {
        if error.isRecoverable {
          invalidRecords += 1
          if let kind = reader.refusedSampleKind {
            for lane in lanes where lane.isLive { lane.pipeline.sampleLost(kind) }
          }
          if let kind = reader.refusedFormatKind {
            let refused = RefusedFormat(kind: kind, error: error)
            refusedFormats.append(refused)
            runReporter.emit("formatRefused") { $0.merge(refused.json) }
          }
          continue
        }
        if let signal = StopSignal.requested {
          // The stop ended a wait for input in the middle of a record: a stop, not a bad dump.
          stopSignal = signal
          runReporter.emit("stopping") { $0.add("signal", signal) }
        } else {
          readError = error
        }
        break
      }
      guard let record else {
        // A stop that ended a wait for input reads as its end.
        if let signal = StopSignal.requested {
          stopSignal = signal
          runReporter.emit("stopping") { $0.add("signal", signal) }
        }
        break
      }
      if case .format(let kind, let format) = record {
        for lane in lanes where lane.isLive && lane.carries(kind) {
          lane.pipeline.changeFormat(format, for: kind)
        }
        if let mix, case .aac(let aac) = format {
          mix.submitFormat(aac, for: kind, emit: appendMixed, refused: mixRefused)
        }
        continue
      }
      guard case .sample(let header) = record else { continue }
      var now = clock.now()
      if case .factor = speed {
        let due = pacer.due(kind: header.kind, time: header.dts ?? header.pts, now: now)
        while now < due && StopSignal.requested == nil {
          wait(now: now, until: due)
          guard lanes.contains(where: \.isLive) else { break reading }
          now = clock.now()
        }
      }
      reader.withPayload { payload in
        // Packaged once for the outputs that carry the same transport stream.
        Pipeline.append(
          to: LivePipelines(
            lanes: lanes, kind: header.kind, everyLane: refusedKinds.contains(header.kind)),
          kind: header.kind, pts: header.pts, dts: header.dts, isKeyframe: header.isKeyframe,
          payload: payload, nalUnits: header.nalUnits)
        if let mix { feed(mix, header, payload) }
      }
      mix?.drain(emit: appendMixed, refused: mixRefused)
      for lane in lanes where lane.isLive { send(lane, now: now) }
      guard lanes.contains(where: \.isLive) else { break }
      if now >= nextProgress {
        nextProgress = now + progressInterval
        onProgress?(lanes[0].pipeline.snapshot(), now - start)
      }
    }
    // SIGQUIT stops at once: what the rings hold is left undelivered, and said so.
    let immediate = stopSignal == StopSignal.immediateName
    if let mix {
      if immediate {
        mix.abandon()
      } else {
        mix.finish(emit: appendMixed, refused: mixRefused)
        let now = clock.now()
        for lane in lanes where lane.isLive && lane.mix != nil { send(lane, now: now) }
      }
    }
    drain(for: stopSignal == nil ? drainTimeout : immediate ? .zero : StopSignal.drainTimeout)
    for lane in lanes where lane.isLive {
      do { try lane.sender.finish() } catch { lane.fail(error) }
    }
    let end = clock.now()
    for lane in lanes { lane.tick(now: end, force: true) }
    let dropped = mix?.droppedSamples ?? 0
    return ReplaySummary(
      outputs: lanes.map {
        var summary = $0.summary(
          minimumDeliveredFraction: ReplayOptions.defaultMinimumDeliveredFraction)
        if dropped > 0 && $0.mix != nil {
          summary.warnings.append(
            "\(dropped) input samples left out of the mix: its queue was full (it fell behind)")
        }
        return summary
      },
      skippedRecords: reader.skippedRecords, invalidRecords: invalidRecords,
      refusedFormats: refusedFormats, readError: readError, elapsed: end - start,
      peakResidentBytes: ProcResidentProbe().peakResidentBytes(), stopSignal: stopSignal)
  }

  /// Hands one input sample to the mix's thread: video as the clock a paused input is judged
  /// by, audio to be mixed. The mic is muted while one of the outputs that mix is at the
  /// ladder's mic tier, rather than the mixed track dropped.
  private func feed(
    _ mix: AudioMixWorker, _ header: DumpSampleHeader, _ payload: UnsafeRawBufferPointer
  ) {
    guard header.kind.isAudio else {
      mix.submitVideo(pts: header.pts, emit: appendMixed, refused: mixRefused)
      return
    }
    let muted = lanes.contains { $0.isLive && $0.mix != nil && $0.pipeline.tier >= .noMic }
    mix.submitAudio(
      header.kind, pts: header.pts, payload: payload, micMuted: muted, emit: appendMixed,
      refused: mixRefused)
  }

  /// Reports a format record the mix could not take (it keeps the track's old decoder).
  private func mixRefused(_ kind: SampleKind, _ error: AudioMixStageError) {
    runReporter.emit("formatRefused") {
      $0.add("kind", kind.description)
      $0.add("reason", error.description)
    }
  }

  /// Appends one mixed AAC frame, as app audio, to every output that carries the mix.
  private func appendMixed(_ pts: MediaTime, _ payload: UnsafeRawBufferPointer) {
    for lane in lanes where lane.isLive && lane.mix != nil {
      _ = lane.pipeline.append(
        kind: .audioApp, pts: pts, dts: nil, isKeyframe: true, payload: payload)
    }
  }

  /// Records an output's failure while the run goes on, and says so at once (`onOutputFailed`)
  /// rather than only in the summary at the end: the reason is known now.
  private func failing(_ lane: OutputLane, _ error: SinkError) {
    guard lane.isLive else { return }
    lane.fail(error)
    guard let onOutputFailed else { return }
    let seconds = JSONObject.fixed((clock.now() - startedAt).inSeconds, decimals: 1)
    let others = lanes.contains(where: \.isLive) ? "; the other outputs go on" : ""
    onOutputFailed(
      "output \(lane.index) (\(lane.sink.redactedDescription)) failed after \(seconds) s: "
        + "\(error)\(others)")
  }

  /// After an append: wakes the lane's thread, or pumps its sender inline.
  private func send(_ lane: OutputLane, now: MonotonicInstant) {
    if let thread = lane.thread {
      thread.wake()
      if let error = thread.failure { failing(lane, error) }
      return
    }
    // A threaded lane's thread steps its own lane.
    if case .failed(let error) = lane.driver.step(clock: clock).pump { failing(lane, error) }
  }

  /// Pumps the inline senders (threaded ones send by themselves) and sleeps until `deadline`,
  /// or sooner when a sink asks to be called again.
  private func wait(now: MonotonicInstant, until deadline: MonotonicInstant) {
    var wake = deadline
    for lane in lanes where lane.isLive {
      if let thread = lane.thread {
        if let error = thread.failure { failing(lane, error) }
        continue
      }
      let step = lane.driver.step(clock: clock)
      if case .failed(let error) = step.pump { failing(lane, error) }
      wake = min(wake, step.wakeAt)
    }
    clock.sleep(until: min(wake, now + .milliseconds(100)))
  }

  /// Sends what remains in the rings, waiting for each sink up to `timeout`; the threaded
  /// outputs drain at the same time.
  private func drain(for timeout: TimeSpan) {
    drainDeadline.begin(timeout: timeout)
    // A failed output's thread has ended already; joining it stops its status ticker.
    let threaded = lanes.filter { $0.thread != nil }
    for lane in threaded { lane.thread?.beginStopping(drainingFor: timeout) }
    for lane in lanes where lane.isLive && lane.thread == nil {
      if let error = lane.driver.drain(until: clock.now() + timeout, clock: clock) {
        lane.fail(error)
      }
    }
    for lane in threaded {
      if let error = lane.thread?.join() { lane.fail(error) }
    }
  }
}
