import IngestCore
import Synchronization

/// Turns the pipeline's counters and events into status events (JSON lines): the extension's
/// status channel to its host app. Each event is documented in `docs/status-events.md`.
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
  private let probe: any ResidentMemoryProbe
  /// Where lines go; behind the lock so lines from several threads never interleave.
  private let writeLine: HandOverLock<(@Sendable (String) -> Void)?>
  private let start: Int64
  private var nextSample: Int64
  private var lastSentBytes: Int64 = 0
  private var lastSampleTime: Int64
  private var lastDrops = DropCounts()
  private var lastBitrate: Int64 = 0
  /// Called with each encoder request (bitrate, frame rate, keyframe, mic), for library users;
  /// answers whether the request reached the encoder (false: its input was full or gone).
  public var onEncoderRequest: (@Sendable (JSONObject) -> Bool)?
  /// Called with each new warning of the output (a latency too short for the path), on the
  /// sender's thread, as soon as the output has it.
  public var onWarning: (@Sendable (String) -> Void)?
  private var warningsPassedOn = 0
  /// Tier changes seen so far.
  public private(set) var tierChanges = 0
  /// The encoder's nominal frame rate, restored when the ladder steps back down.
  public var nominalFrameRate = 30
  /// The output whose congestion signal (0...1) feeds the ladder once a second and whose own
  /// figures become a `sink` event; set with `attach(_:)`.
  private var sink: (any OutputSink)?
  /// Steers the encoder from the sink's link estimates when set (a live encoder to steer); the
  /// ladder then owns only the memory side and leaves bitrate and frame rate to it.
  public var rateControl: RateControlLoop?
  /// In a run with several outputs, this reporter's output number (from 1): the events about
  /// the output (`stats`, `drops`, `tier`, `sink`, connection and encoder events) carry it as
  /// `output`. Events of the run itself, written with `emit`, do not.
  public var output: Int?

  /// - Parameters:
  ///   - writeLine: receives each JSON line (without newline); nil to only keep counters.
  public init(
    pipeline: Pipeline, clock: any PipelineClock, probe: any ResidentMemoryProbe,
    writeLine: (@Sendable (String) -> Void)?
  ) {
    self.pipeline = pipeline
    self.clock = clock
    self.probe = probe
    self.writeLine = HandOverLock(writeLine)
    start = clock.now()
    nextSample = start
    lastSampleTime = start
  }

  /// Seconds since the reporter started, on the pipeline clock.
  public func elapsed(_ now: Int64) -> Double { Double(now - start) / 1e9 }

  /// Emits an event of the run, built by the caller, stamped with the time.
  public func emit(_ name: String, now: Int64? = nil, _ fill: (inout JSONObject) -> Void = { _ in })
  {
    write(name, now: now, output: nil, fill)
  }

  /// Emits an event about this reporter's output: labelled with `output` when it is set.
  public func emitForOutput(
    _ name: String, now: Int64? = nil, _ fill: (inout JSONObject) -> Void = { _ in }
  ) {
    write(name, now: now, output: output, fill)
  }

  private func write(
    _ name: String, now: Int64?, output: Int?, _ fill: (inout JSONObject) -> Void
  ) {
    var object = JSONObject()
    object.add("event", name)
    object.add("t", elapsed(now ?? clock.now()))
    if let output { object.add("output", output) }
    fill(&object)
    let line = object.rendered
    writeLine.withLock { $0?(line) }
  }

  /// Reads `sink`'s congestion and figures on each tick and forwards its own events (HLS
  /// segments) as status events. Call before the sender opens the sink.
  public func attach(_ sink: any OutputSink) {
    self.sink = sink
    sink.setStatusHandler { [weak self] name, fields in
      self?.emitForOutput(name) { $0.merge(fields) }
    }
  }

  /// Reports a connection event of the sender.
  public func report(_ event: SenderEvent) {
    switch event {
    case .connected(let attempt): emitForOutput("connected") { $0.add("attempt", attempt) }
    case .disconnected(let reason): emitForOutput("disconnected") { $0.add("reason", reason) }
    case .retrying(let reason, let delay):
      emitForOutput("retry") {
        $0.add("reason", reason)
        $0.add("delay_s", Double(delay) / 1e9)
      }
    case .failed(let reason): emitForOutput("failed") { $0.add("reason", reason) }
    }
  }

  /// Drains pipeline events and, once a second, samples resident memory and emits `stats` and
  /// `drops`. Cheap when nothing is due.
  /// - Parameter force: sample and report now even if a second has not passed (end of run).
  public func tick(now: Int64, force: Bool = false) {
    while let event = pipeline.nextEvent() { report(event, now: now) }
    if let sink, sink.warnings.count > warningsPassedOn {
      for warning in sink.warnings[warningsPassedOn...] { onWarning?(warning) }
      warningsPassedOn = sink.warnings.count
    }
    if let sink, let rateControl {
      rateControl.tick(now: now, sink: sink, pipeline: pipeline, reporter: self)
    }
    guard now >= nextSample || force else { return }
    nextSample = now + 1_000_000_000
    pipeline.updateResident(probe.residentBytes())
    if let sink {
      pipeline.updateSinkCongestion(rateControl?.ladderCongestion ?? sink.congestion)
      if let statistics = sink.statusFields() {
        emitForOutput("sink", now: now) { $0.add("stats", statistics) }
      }
    }
    let snapshot = pipeline.snapshot()
    let interval = now - lastSampleTime
    // A rate over less than half a second says little (the first tick comes at the start).
    if interval >= 500_000_000 {
      lastBitrate = (snapshot.sentBytes - lastSentBytes) * 8 * 1_000_000_000 / interval
      lastSentBytes = snapshot.sentBytes
      lastSampleTime = now
    }
    emitForOutput("stats", now: now) { object in
      object.add("tier", snapshot.tier.rawValue)
      object.add("ring_s", Double(snapshot.ringDuration) / 90_000)
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

  private func report(_ event: PipelineEvent, now: Int64) {
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
      encoderRequests(from: from, to: to, now: now)
    case .keyframeRequested:
      requestEncoder("keyframe", now: now) { _ in }
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

  /// What the upstream encoder is asked for when the tier crosses each step.
  private func encoderRequests(from: Tier, to: Tier, now: Int64) {
    let up = to > from
    for tier in Tier.allCases where tier != .normal {
      let crossed = up ? (from < tier && tier <= to) : (to < tier && tier <= from)
      guard crossed else { continue }
      switch tier {
      case .reducedBitrate where rateControl == nil:
        requestEncoder("bitrate", now: now) {
          if up {
            $0.add("target_bps", max(200_000, self.reducedBitrate(now: now)))
          } else {
            $0.add("restore", true)
          }
        }
      case .reducedFrameRate where rateControl == nil:
        requestEncoder("frameRate", now: now) {
          $0.add("target_fps", up ? max(1, self.nominalFrameRate / 2) : self.nominalFrameRate)
        }
      case .noMic:
        requestEncoder("mic", now: now) { $0.add("enabled", !up) }
      case .keyframesOnly:
        requestEncoder("keyframesOnly", now: now) { $0.add("enabled", up) }
      case .normal, .reducedBitrate, .reducedFrameRate:
        break
      }
    }
  }

  /// 80 % of what the output sent in the last second, but never above the stream's own rate:
  /// the last second may be a backlog going out at once after a blackout. What the run sent on
  /// average is at most what the stream carries.
  private func reducedBitrate(now: Int64) -> Int64 {
    let elapsed = max(now - start, 1)
    let average = pipeline.snapshot().sentBytes * 8 * 1_000_000_000 / elapsed
    return min(lastBitrate, average) * 8 / 10
  }

  /// Asks the encoder for something: to `onEncoderRequest` and as an `encoder` status event.
  func requestEncoder(_ kind: String, now: Int64, _ fill: (inout JSONObject) -> Void) {
    var details = JSONObject()
    details.add("request", kind)
    fill(&details)
    let delivered = onEncoderRequest?(details) ?? true
    emitForOutput("encoder", now: now) {
      $0.add("request", kind)
      fill(&$0)
      // A request the encoder never got must not read as sent.
      if !delivered { $0.add("delivered", false) }
    }
  }
}
