import IngestCore
import IngestPOSIX
import Synchronization

/// Turns the pipeline's counters, the control loop's events and the output's figures into
/// status events (JSON lines): the extension's status channel to its host app. Each event is
/// documented in `docs/status-events.md`. It only reports: what the encoder is asked for is
/// decided by the output's `ControlLoop`, whose events come in through `report(_:now:)`.
///
/// Runs on the replay/reporter thread and the sender thread, never on the capture path.
///
/// `@unchecked`: `tick` and the counters it keeps run on one thread at a time (the output's
/// sender thread, or the ticker under `ConnectingSinkGate.tickLock` while it connects); the
/// events other threads `emit` read only what is set before the threads start, and the line
/// writer is behind its lock.
public final class StatusReporter: @unchecked Sendable {
  private let pipeline: Pipeline
  private let clock: any PipelineClock
  /// Where lines go; behind the lock so lines from several threads never interleave.
  private let writeLine: HandOverLock<(@Sendable (String) -> Void)?>
  private let start: MonotonicInstant
  private var nextSample: MonotonicInstant
  private var lastSentBytes: Int64 = 0
  private var lastSampleTime: MonotonicInstant
  private var lastDrops = DropCounts()
  private var lastBitrate: Int64 = 0
  /// Called with each new warning of the output (a latency too short for the path), on the
  /// sender's thread, as soon as the output has it.
  public var onWarning: (@Sendable (String) -> Void)?
  /// Called with the output's figures on each periodic report, on the sender's thread: the
  /// progress line reads them as values (set before the threads start).
  public var onFigures: (@Sendable (OutputFigures) -> Void)?
  /// Whether the current run of retries was warned about.
  private var warnedOfRetry = false
  private var warningsPassedOn = 0
  /// Tier changes seen so far.
  public private(set) var tierChanges = 0
  /// The output whose own figures become a `sink` event once a second; set with `attach(_:)`.
  private var sink: (any OutputSink)?
  /// In a run with several outputs, this reporter's output number (from 1): the events about
  /// the output (`stats`, `drops`, `tier`, `sink`, connection and encoder events) carry it as
  /// `output`. Events of the run itself, written with `emit`, do not.
  public var output: Int?

  /// - Parameters:
  ///   - writeLine: receives each JSON line (without newline); nil to only keep counters.
  public init(
    pipeline: Pipeline, clock: any PipelineClock, writeLine: (@Sendable (String) -> Void)?
  ) {
    self.pipeline = pipeline
    self.clock = clock
    self.writeLine = HandOverLock(writeLine)
    start = clock.now()
    nextSample = start
    lastSampleTime = start
  }

  /// Seconds since the reporter started, on the pipeline clock.
  public func elapsed(_ now: MonotonicInstant) -> Double { (now - start).inSeconds }

  /// Emits an event of the run, built by the caller, stamped with the time.
  public func emit(
    _ name: String, now: MonotonicInstant? = nil, _ fill: (inout JSONObject) -> Void = { _ in }
  ) {
    write(name, now: now, output: nil, fill)
  }

  /// Emits an event about this reporter's output: labelled with `output` when it is set.
  public func emitForOutput(
    _ name: String, now: MonotonicInstant? = nil, _ fill: (inout JSONObject) -> Void = { _ in }
  ) {
    write(name, now: now, output: output, fill)
  }

  private func write(
    _ name: String, now: MonotonicInstant?, output: Int?, _ fill: (inout JSONObject) -> Void
  ) {
    var object = JSONObject()
    object.add("event", name)
    object.add("t", elapsed(now ?? clock.now()))
    if let output { object.add("output", output) }
    fill(&object)
    let line = object.rendered
    writeLine.withLock { $0?(line) }
  }

  /// Reads `sink`'s figures and warnings on each tick and forwards its own events (HLS
  /// segments) as status events. Call before the sender opens the sink.
  public func attach(_ sink: any OutputSink) {
    self.sink = sink
    sink.setStatusHandler { [weak self] name, fields in
      self?.emitForOutput(name) { $0.merge(fields) }
    }
  }

  /// Reports a connection event of the sender.
  /// The first retry after each connect (or from the start) is also a warning: an output
  /// that cannot reach its receiver says so when the reason is known, not at the end.
  public func report(_ event: SenderEvent) {
    switch event {
    case .connected(let attempt):
      warnedOfRetry = false
      emitForOutput("connected") { $0.add("attempt", attempt) }
    case .disconnected(let reason): emitForOutput("disconnected") { $0.add("reason", reason) }
    case .retrying(let reason, let delay):
      if !warnedOfRetry {
        warnedOfRetry = true
        onWarning?("not connected: \(reason); retrying while the run goes on")
      }
      emitForOutput("retry") {
        $0.add("reason", reason)
        $0.add("delay_s", delay.inSeconds)
      }
    case .failed(let reason): emitForOutput("failed") { $0.add("reason", reason) }
    }
  }

  /// When the next periodic report (`sink`, `stats`, `drops`) is due.
  public var nextTickDue: MonotonicInstant { nextSample }

  /// Passes new warnings of the output on and, once a second, emits `sink`, `stats` and
  /// `drops`. Cheap when nothing is due. Called after the output's `ControlLoop.tick`, which
  /// reads memory into the pipeline's counters.
  /// - Parameter force: report now even if a second has not passed (end of run).
  public func tick(now: MonotonicInstant, force: Bool = false) {
    if let sink, sink.warnings.count > warningsPassedOn {
      for warning in sink.warnings[warningsPassedOn...] { onWarning?(warning) }
      warningsPassedOn = sink.warnings.count
    }
    guard now >= nextSample || force else { return }
    nextSample = now + .seconds(1)
    if let sink {
      if let statistics = sink.statusFields() {
        emitForOutput("sink", now: now) { $0.add("stats", statistics) }
      }
    }
    let snapshot = pipeline.snapshot()
    let interval = now - lastSampleTime
    // A rate over less than half a second says little (the first tick comes at the start).
    if interval >= .milliseconds(500) {
      lastBitrate = BitRate.bitsPerSecond(
        bytes: snapshot.sentBytes - lastSentBytes, over: interval)
      lastSentBytes = snapshot.sentBytes
      lastSampleTime = now
    }
    emitForOutput("stats", now: now) { object in
      object.add("tier", snapshot.tier.rawValue)
      object.add("ring_s", MediaTicks(snapshot.ringDuration).inSeconds)
      object.add("ring_bytes", snapshot.ringBytes)
      object.add("ring_units", snapshot.ringUnits)
      object.add("ledger", snapshot.ledger)
      object.add("peak_ledger", snapshot.peakLedger)
      object.add("budget", snapshot.budget)
      if let resident = snapshot.resident { object.add("resident", resident) }
      object.add("pressure", snapshot.pressure)
      object.add("sent_bytes", snapshot.sentBytes)
      object.add("sent_bps", lastBitrate)
      object.add("dropped", snapshot.drops.total)
    }
    onFigures?(
      OutputFigures(
        output: output ?? 1, tier: snapshot.tier.rawValue, dropped: snapshot.drops.total,
        link: sink?.linkReading()))
    if snapshot.drops != lastDrops {
      let delta = Self.difference(snapshot.drops, lastDrops)
      lastDrops = snapshot.drops
      emitForOutput("drops", now: now) { object in
        object.add("new", delta)
        object.add("total", Self.dropObject(snapshot.drops))
      }
    }
  }

  /// Drop counts as `{"video":{"gopTail":3},...}`, leaving out zeros.
  public static func dropObject(_ drops: DropCounts) -> JSONObject {
    var object = JSONObject()
    for kind in SampleKind.allCases where drops.total(kind) > 0 {
      var reasons = JSONObject()
      for reason in DropReason.allCases where drops[kind, reason] > 0 {
        reasons.add(reason.description, drops[kind, reason])
      }
      object.add(kind.description, reasons)
    }
    return object
  }

  private static func difference(_ a: DropCounts, _ b: DropCounts) -> JSONObject {
    var delta = DropCounts()
    for kind in SampleKind.allCases {
      for reason in DropReason.allCases { delta[kind, reason] = a[kind, reason] - b[kind, reason] }
    }
    return dropObject(delta)
  }

  /// Reports what the output's control loop saw or did: pipeline events, `rate` decisions and
  /// `encoder` requests (one event per request, `delivered: false` when the encoder's input
  /// refused it).
  public func report(_ event: ControlEvent, now: MonotonicInstant) {
    switch event {
    case .pipeline(let event): report(event, now: now)
    case .rate(let decision):
      emitForOutput("rate", now: now) { object in
        object.add("reason", decision.reason.rawValue)
        object.add("algorithm", RateController.algorithm)
        object.add("rule", decision.rule.rawValue)
        object.add("state", decision.state.rawValue)
        object.add("queue_delay_ms", decision.queueDelayMilliseconds, decimals: 0)
        if let base = decision.baseRoundTripMilliseconds {
          object.add("base_rtt_ms", base, decimals: 1)
        }
        if let ceiling = decision.ceilingBitsPerSecond { object.add("ceiling_bps", ceiling) }
        object.add("target_bps", decision.targetBitsPerSecond)
        object.add("frame_rate", decision.frameRate)
        object.add("keyframes_only", decision.keyframesOnly)
        if let link = decision.link { object.add("link", link.statusObject) }
      }
    case .encoderRequest(let request, let delivered):
      emitForOutput("encoder", now: now) {
        $0.merge(request.json)
        // A request the encoder never got must not read as sent.
        if !delivered { $0.add("delivered", false) }
      }
    case .runDecision(let decision):
      emitForOutput("encoder", now: now) {
        $0.merge(decision.request.json)
        // Whose wish the request carries out: the lowest bitrate or frame rate wished, the
        // first output that wants the mic off or keyframes only, the keyframe's asker.
        $0.add("wish_of", decision.output)
        if !decision.delivered { $0.add("delivered", false) }
      }
    }
  }

  private func report(_ event: PipelineEvent, now: MonotonicInstant) {
    switch event {
    case .tierChanged(let from, let to, let pressure, let source):
      tierChanges += 1
      emitForOutput("tier", now: now) {
        $0.add("from", from.name)
        $0.add("to", to.name)
        $0.add("tier", to.rawValue)
        $0.add("pressure", pressure)
        $0.add("reason", to > from ? source.rawValue : "recovered")
      }
    case .keyframeRequested:
      // The request itself follows as an `encoder` event.
      break
    case .formatChanged(let kind, let format):
      emitForOutput("formatChanged", now: now) {
        $0.add("kind", kind.description)
        switch format {
        case .h264(let h264):
          $0.add("codec", "h264")
          $0.add("profile", Int(h264.profile))
          $0.add("level", Int(h264.level))
        case .hevc(let hevc):
          $0.add("codec", "hevc")
          $0.add("profile", Int(hevc.sequence.profileIDC))
          $0.add("level", Int(hevc.sequence.levelIDC))
          $0.add("width", hevc.sequence.width)
          $0.add("height", hevc.sequence.height)
        case .aac(let aac):
          $0.add("codec", "aac")
          $0.add("sample_rate", aac.sampleRate)
          $0.add("channels", aac.channels)
        }
      }
    case .clockReset(let kind, let dts):
      emitForOutput("clockReset", now: now) {
        $0.add("kind", kind.description)
        $0.add("dts", dts)
      }
    case .adtsHeadersRemoved(let kind):
      emitForOutput("adtsRemoved", now: now) {
        $0.add("kind", kind.description)
        $0.add("note", "samples carry ADTS headers, removed")
      }
    case .sampleRefused(let kind, let error):
      emitForOutput("sampleRefused", now: now) {
        $0.add("kind", kind.description)
        $0.add("reason", DropReason.invalid.description)
        $0.add("error", error.description)
      }
    case .sampleTooLarge(let kind, let bytes, let limit):
      emitForOutput("sampleRefused", now: now) {
        $0.add("kind", kind.description)
        $0.add("reason", DropReason.tooLarge.description)
        $0.add("bytes", bytes)
        $0.add("limit", limit)
      }
    }
  }
}

extension StatusReporter: OutputTicker {}
