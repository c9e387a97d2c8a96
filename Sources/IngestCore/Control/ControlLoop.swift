/// The control loop of one output: reads the memory probe and the output's link, runs the rate
/// controller and moves the degradation ladder, and hands what the encoder must do as
/// `EncoderRequest`s to the run's `RunControl` (which merges every output's wishes), or to
/// `deliver` where it is the only one. Everything it sees and does goes to `onEvent`, in order,
/// for the status channel; it writes nothing itself.
///
/// ```
///  ResidentMemoryProbe ──(1 s)──► Pipeline (ledger, ring) ─► DegradationLadder ─► tier events ─┐
///  LinkEstimateSource ──(200 ms)─► RateController ─► Decision ───────────────────────────────┤
///                                                                     EncoderRequest ◄───────┘
///                                                         deliver(request) ─► encoder (pipe)
/// ```
///
/// Driven by `tick(now:)` on the thread that owns the output's sink (its sender thread, or the
/// replay loop for local outputs), so it needs no lock of its own; `deliver` and `onEvent` are
/// called on that thread.
public final class ControlLoop {
  /// What the loop steers with.
  public struct Configuration: Sendable {
    /// Steer the encoder from the link (`RateController`); nil leaves the memory ladder alone
    /// in charge, as for a fixed dump or an output without a link.
    public var rateControl: RateController.Configuration?
    /// The encoder's frame rate: halved by the ladder under pressure, restored after.
    public var nominalFrameRate = 30
    /// How often the link is read.
    public var linkInterval: TimeSpan = .milliseconds(200)
    /// How often memory is read (the probe reads `/proc` on Linux: not on every tick).
    public var memoryInterval: TimeSpan = .seconds(1)
    /// The lowest bitrate the ladder asks for on entering `reducedBitrate`. A run under rate
    /// control gives every output the controller's floor, so that no output's ladder asks the
    /// encoder for less than the user allowed.
    public var bitrateFloorBitsPerSecond = 200_000

    public init(rateControl: RateController.Configuration? = nil) {
      self.rateControl = rateControl
    }
  }

  public let configuration: Configuration
  private let pipeline: Pipeline
  private let probe: any ResidentMemoryProbe
  private let start: MonotonicInstant
  private var link: (any LinkEstimateSource)?
  /// The rate controller, when the loop steers from the link.
  public private(set) var controller: RateController?
  private var nextLinkRead: MonotonicInstant = .distantPast
  private var nextMemoryRead: MonotonicInstant = .distantPast
  /// What the output sent, at the last memory reading, and its rate over the second before.
  private var lastSent: (time: MonotonicInstant, bytes: Int64)
  private var sentBitsPerSecond: Int64 = 0
  /// The ladder entered `reducedBitrate` before the output's send rate was measured: its
  /// bitrate request waits for the first measurement (a rate read from nothing sent would ask
  /// for the floor and hold the encoder there).
  private var reductionPending = false
  /// Whether the first tick asked for the controller's start share.
  private var begun = false

  /// Hands a request to the encoder; answers whether it got there (false: its input was full
  /// or gone). Nil when there is no encoder to ask (a dump replayed): requests are then
  /// reported as sent, since nothing refused them.
  public var deliver: ((EncoderRequest) -> Bool)?
  /// The run's one voice towards the encoder: when set, requests are this output's wishes,
  /// merged with the other outputs' there (`deliver` is then not used).
  public var runControl: RunControl?
  /// This output's number (from 1) for `runControl`.
  public var output = 1
  /// Receives each event with the time of the tick that produced it.
  public var onEvent: ((ControlEvent, MonotonicInstant) -> Void)?

  /// - Parameters:
  ///   - pipeline: the output's pipeline: its ring backlog counts as queue for the controller,
  ///     and it moves the ladder on the readings.
  ///   - probe: the process's memory (the footprint an extension is charged).
  ///   - clock: the pipeline clock; the loop's own time starts at its `now()`.
  public init(
    pipeline: Pipeline, probe: any ResidentMemoryProbe, clock: any PipelineClock,
    configuration: Configuration = Configuration()
  ) {
    self.pipeline = pipeline
    self.probe = probe
    self.configuration = configuration
    controller = configuration.rateControl.map(RateController.init(configuration:))
    start = clock.now()
    lastSent = (start, 0)
  }

  /// Reads `link` from now on (the output's sink, or a gate in front of it). Until then the loop
  /// reads memory alone.
  public func attach(_ link: any LinkEstimateSource) {
    self.link = link
  }

  /// When the next reading is due (the link's, when the loop steers from it, or memory's): a
  /// thread that drives the loop need not wake before then unless the pipeline has news.
  public var nextTickDue: MonotonicInstant {
    guard link != nil, controller != nil else { return nextMemoryRead }
    return min(nextLinkRead, nextMemoryRead)
  }

  /// Does what is due at `now`: passes the pipeline's queued events on (tier changes with the
  /// ladder's requests), reads the link when due, and memory once a second.
  /// - Parameter force: read memory now even if a second has not passed (end of run).
  public func tick(now: MonotonicInstant, force: Bool = false) {
    if !begun {
      begun = true
      // The start share goes to the encoder at once, not when the output first has a link to
      // read: what the ring gathers while the output connects is made at it.
      if let decision = controller?.begin(at: now) { carryOut(decision, now: now) }
    }
    while let event = pipeline.nextEvent() { handle(event, now: now) }
    // The profile before the keyframe: the encoder reopens in it on that keyframe.
    if let link, let profile = link.takeProfileRequest() { ask(.profile(profile), now: now) }
    if let link, link.takeKeyframeRequest(now: now) { ask(.keyframe, now: now) }
    if let link, now >= nextLinkRead, controller != nil {
      nextLinkRead = now + configuration.linkInterval
      readLink(link, now: now)
    }
    guard now >= nextMemoryRead || force else { return }
    nextMemoryRead = now + configuration.memoryInterval
    measureSendRate(now: now)
    pipeline.updateResident(probe.residentBytes())
    if let link {
      // While the controller can still steer the encoder the network is its business: the
      // ladder sees link congestion only once even keyframes only are all the link allows.
      let congestion = controller.map { $0.keyframesOnly ? 1 : 0 } ?? link.congestion
      pipeline.updateSinkCongestion(congestion)
    }
  }

  private func handle(_ event: PipelineEvent, now: MonotonicInstant) {
    onEvent?(.pipeline(event), now)
    switch event {
    case .tierChanged(let from, let to, _, _):
      let requests = DegradationLadder.encoderRequests(
        from: from, to: to, reducedBitsPerSecond: reducedBitsPerSecond(now: now) ?? 0,
        nominalFrameRate: configuration.nominalFrameRate, rateControlled: controller != nil)
      for request in requests {
        // Up before the first measurement: asked once the rate is known (within a second,
        // long before the ladder can come down again).
        if case .bitrate(_?) = request, reducedBitsPerSecond(now: now) == nil {
          reductionPending = true
          continue
        }
        ask(request, now: now)
      }
    case .keyframeRequested:
      ask(.keyframe, now: now)
    case .clockReset, .formatChanged, .adtsHeadersRemoved, .sampleRefused, .sampleTooLarge:
      break
    }
  }

  private func readLink(_ link: any LinkEstimateSource, now: MonotonicInstant) {
    guard var estimate = link.linkEstimate(now: now) else { return }
    // An SRT sink holds data back rather than let libsrt's queue outgrow what the link drains
    // within the latency (an RTMP sink blocks in its socket), so a link that does not keep up
    // shows as a backlog in the ring: it is queue all the same.
    estimate.backlogMilliseconds = Double(pipeline.waitingTicks) / 90
    guard let decision = controller?.update(estimate) else { return }
    carryOut(decision, now: now)
  }

  private func carryOut(_ decision: RateController.Decision, now: MonotonicInstant) {
    onEvent?(.rate(decision), now)
    for request in decision.requests { ask(request, now: now) }
  }

  /// Hands `request` to the encoder and reports it, once, as delivered or not; with a
  /// `runControl`, wishes it there and reports what the encoder was asked for because of it.
  private func ask(_ request: EncoderRequest, now: MonotonicInstant) {
    if let runControl {
      if let decision = runControl.wish(request, from: output, now: now) {
        onEvent?(.runDecision(decision), now)
      }
      return
    }
    let delivered = deliver?(request) ?? true
    onEvent?(.encoderRequest(request, delivered: delivered), now)
  }

  private func measureSendRate(now: MonotonicInstant) {
    let interval = now - lastSent.time
    // A rate over less than half a second says little (the first reading comes at the start).
    guard interval >= .milliseconds(500) else { return }
    let sent = pipeline.snapshot().sentBytes
    sentBitsPerSecond = BitRate.bitsPerSecond(bytes: sent - lastSent.bytes, over: interval)
    lastSent = (now, sent)
    if reductionPending, let reduced = reducedBitsPerSecond(now: now) {
      reductionPending = false
      ask(.bitrate(reduced), now: now)
    }
  }

  /// What the ladder asks for on entering `reducedBitrate`: 80 % of what the output sent in the
  /// last second, but never above the stream's own rate (the last second may be a backlog going
  /// out at once after a blackout: what the run sent on average is at most what the stream
  /// carries), and never below the floor; nil until the send rate was first measured.
  private func reducedBitsPerSecond(now: MonotonicInstant) -> Int? {
    guard lastSent.time > start else { return nil }
    let average = BitRate.bitsPerSecond(
      bytes: pipeline.snapshot().sentBytes, over: now - start)
    return Int(
      max(
        Int64(configuration.bitrateFloorBitsPerSecond),
        min(sentBitsPerSecond, average) * 8 / 10))
  }
}
