/// Steers the encoder between what the link delivers and the nominal rate: a continuous target
/// bitrate first, the frame rate only once the bitrate is at its floor (each lower frame rate at
/// the floor's bits per frame, so that it sheds its share of the load), keyframes only when the
/// link carries less than the lowest frame rate needs.
///
/// The algorithm (`algorithm`, named in every `rate` status event with the `State` it is in and
/// the `Rule` that fired; `docs/rate-control.md`) is additive-increase, multiplicative-decrease
/// on the queueing delay, measured against windowed baselines:
///
/// - **Queueing delay** is what waits in front of the path (SRT: libsrt's unsent bytes at the
///   drain rate, never the span of unacknowledged data, which grows by a round trip with every
///   loss on a long path), the round trip above the path's own (`PathRoundTrip`: its minimum,
///   which follows a handover or a step that stays), and the time the oldest unit has waited
///   in the ring. The path's round trip is distance: a 300 ms path is not a congested one.
/// - **Congestion** is a queueing delay over the threshold for `standingWindow` (or
///   over twice the threshold in two readings in a row) that is not already falling; one
///   keyframe's burst fills the queue for a reading or two and drains by itself. Loss counts only when it
///   grows above its own recent minimum while a queue stands (a bottleneck dropping what
///   overflows); random loss on a wide path is not congestion.
/// - **Outage**: while the link delivers almost nothing (a blackout) the target is held; a
///   lower rate would not get through either, and holding it makes the return immediate.
/// - **Decreases** go quickly toward (below) what the link delivered, so the backlog drains,
///   and set the ceiling: the level the link last held. **Increases** are multiplicative
///   while the link stays clear and below the ceiling (`recover`), then gentle probes near
///   it (`probe`, steps that double while the queue does not grow, like BBR's probing up); a
///   probe that grows the queue is taken back. The ceiling is forgotten only when the link
///   carries clearly more than it (`climb` again): never for time alone, which sent a steady
///   narrow link back to the nominal rate and through its queue every few seconds.
///
/// The floor keeps recovery after a dip fast. The memory ladder (`DegradationLadder`) stays the
/// safety net for the budget; this controller only reads the link.
///
/// Deterministic: it reads only the estimates it is given (their `time` is its clock).
public struct RateController: Sendable {
  /// The name of the algorithm, as the `rate` status events carry it.
  public static let algorithm = "queue-delay-aimd"

  /// Limits and thresholds.
  public struct Configuration: Sendable, Equatable {
    /// The encoder's configured bitrate: the target never goes above it.
    public var nominalBitsPerSecond: Int
    /// The target never goes below it at the nominal frame rate (a floor makes recovery after
    /// a dip fast); at a lower frame rate, never below its bits per frame.
    public var floorBitsPerSecond: Int = 300_000
    /// What the link carries besides the video the target is for: audio tracks and their
    /// framing. The link's delivered rate is compared with the video target plus this.
    public var fixedBitsPerSecond: Int = 0
    /// Transport framing (TS packets, PES headers, SRT/UDP/IP headers) as a share of the video.
    public var framingShare: Double = 0.08
    /// The encoder's frame rate, restored before the bitrate rises above the floor.
    public var nominalFrameRate: Int = 30
    /// Lower frame rates, tried in order while the bitrate is at its floor and the link still
    /// does not keep up (30 to 24 fps is hardly seen; a halved bitrate is). Each goes with the
    /// floor's bits per frame: a frame rate that kept the floor's bitrate shed no load, and at
    /// a link that carried the floor and no more the ring's backlog never drained.
    public var reducedFrameRates: [Int] = [24, 20, 15]
    /// The queueing delay is long above this share of the output's latency...
    public var congestedQueueShare: Double = 0.25
    /// ...or above this many milliseconds, whichever is larger.
    public var congestedQueueMilliseconds: Double = 100
    /// The link is clear when the queueing delay is below this share of the threshold.
    public var clearShare: Double = 0.5
    /// Congestion is a queueing delay over the threshold for this long (a standing queue), or
    /// over twice the threshold in two readings in a row.
    public var standingWindow: TimeSpan = .seconds(1)
    /// How far back the baselines (least queue time, least round trip, least loss) look.
    public var baselineWindow: TimeSpan = .seconds(10)
    /// How the path's round trip follows a path change (`PathRoundTrip`); its window is
    /// `baselineWindow`.
    public var pathRoundTrip = PathRoundTrip.Configuration()
    /// Loss above its baseline by this much (and by the baseline itself) while a queue stands
    /// counts as a long reading.
    public var lossGrowth: Double = 0.02
    /// The link delivering less than this share of what is asked for is an outage: hold.
    public var outageShare: Double = 0.1
    /// A new connection's readings are only observed for this long: the backlog
    /// gathered while connecting and a slow start on a long path are no reading of the link.
    /// So are the first readings after an outage of `pathRoundTrip.outageLength`.
    public var observation: TimeSpan = .milliseconds(1500)
    /// Quiet time before each increase step.
    public var increaseHold: TimeSpan = .milliseconds(500)
    /// The factor of each increase step away from the ceiling (`climb`, `recover`).
    public var increaseStep: Double = 1.25
    /// The share of the target the first probe step near the ceiling adds; each further step
    /// while the queue does not grow adds twice the one before, up to `largestProbeStep`.
    public var nearCeilingStep: Double = 0.03
    /// The largest probe step (a share of the target).
    public var largestProbeStep: Double = 0.25
    /// A probe step is taken back when the standing queue (the least delay of the last
    /// second) grew by more than this since the step (milliseconds), or by `probeQueueGrowthShare`
    /// of the congestion threshold when that is more (a TCP output's queue figure moves by tens
    /// of milliseconds by itself). A step passes once it has held for a standing window without
    /// that.
    public var probeQueueGrowthMilliseconds: Double = 10
    public var probeQueueGrowthShare: Double = 0.1
    /// After a probe was taken back the target stays for this long before the next probe.
    public var cruise: TimeSpan = .milliseconds(1500)
    /// The ceiling is forgotten once the link carries this much more video than it.
    public var ceilingPassedShare: Double = 0.1
    /// Whether a ceiling the link carried a quarter more than (the target not there) is
    /// forgotten, or raised to what the link carried. Raised where a reading of what got
    /// through swings by half either way (a TCP socket's acknowledgements): a cut on a low
    /// reading left a ceiling at half the link, a reading as the queue drained disproved it,
    /// and the climb with no ceiling went to the nominal rate and through the link's queue.
    public var forgetsDisprovedCeiling = true
    /// Least time between two decreases, so one backlog is not answered twice.
    public var decreaseHold: TimeSpan = .milliseconds(500)
    /// While the target is already under what the link delivered, a queue that is not growing
    /// is a backlog draining: cut again only after this long.
    public var drainHold: TimeSpan = .seconds(2)
    /// The share of the nominal rate a run starts at; it climbs by `startupStep` every half
    /// second until the first congestion or the nominal rate, so an unknown link is not first
    /// flooded at the full rate (what overflows a bottleneck's queue arrives too late to use).
    public var startShare: Double = 0.4
    /// The factor of each start-up step: three steps from the start share to the nominal rate
    /// (at a 600 ms round trip, five steps of 1.25 took 3.2 s after the connection came up).
    public var startupStep: Double = 1.5
    /// When set, an increase goes no further than this multiple of the video the link
    /// delivered (GCC has 1.5). Where congestion shows late (WebRTC's receiver reports, about
    /// a second behind), a climb by steps of 25 % is past a bottleneck and through its queue
    /// before the first sign of it; a climb bounded by what got through approaches it in
    /// small steps. Nil: no limit.
    public var increaseLimitOfDelivered: Double?
    /// The same bound for the start-up climb, before any congestion was seen, while the
    /// newest reading's queue is under `startupIncreaseClearMilliseconds` (nil, or a queue
    /// over that: as `increaseLimitOfDelivered`).
    public var startupIncreaseLimitOfDelivered: Double?
    /// The queue (ms) under which a start-up step may take `startupIncreaseLimitOfDelivered`.
    public var startupIncreaseClearMilliseconds: Double = 10
    /// Whether an increase waits for the newest reading's queue to be clear too, not only the
    /// least of the last window (which lets a keyframe's burst pass). Where readings come a
    /// second apart (WebRTC's receiver reports), that least is one older reading, and a queue
    /// that the last step started shows first in the newest.
    public var increaseNeedsClearReading = false
    /// How long the link must carry less than four fifths of the lowest frame rate's floor
    /// before only keyframes are asked for.
    public var keyframesOnlyAfter: TimeSpan = .seconds(3)

    public init(nominalBitsPerSecond: Int) {
      self.nominalBitsPerSecond = nominalBitsPerSecond
    }
  }

  /// Why the controller changed what it asks for.
  public enum Reason: String, Sendable, Equatable {
    /// The first estimate: the start share of the nominal rate goes to the encoder.
    case start
    /// The queueing delay grew: the target goes toward what the link delivered.
    case congestion
    /// The link stayed clear: the target rises one step.
    case probe
    /// The round trip changed with the path: what it made the controller cut is undone.
    case pathChanged
    /// At the floor and the link still does not keep up: a lower frame rate (and the floor's
    /// bits per frame at it).
    case frameRateDown
    /// The link is clear again: the frame rate comes back first.
    case frameRateUp
    /// The link carries less than the lowest frame rate needs.
    case keyframesOnly
    /// The link carries what the frame rate asked for needs again.
    case keyframesOnlyEnded
  }

  /// Where the controller is between the link's limits (`docs/rate-control.md`).
  public enum State: String, Sendable, Equatable {
    /// The start-up climb from the start share, until the first congestion or the nominal rate.
    case startup
    /// No ceiling known: multiplicative steps up to the nominal rate (or there).
    case climb
    /// Below the ceiling: multiplicative steps up to just under it.
    case recover
    /// Near or past the ceiling: small steps that double while the queue does not grow.
    case probe
    /// A probe grew the queue and was taken back: the target stays a while.
    case cruise
    /// After a cut, until the queue has drained: no increases.
    case drain
    /// Nothing gets through (a blackout): the target is held.
    case hold
  }

  /// The rule that made a decision, named in its `rate` status event.
  public enum Rule: String, Sendable, Equatable {
    /// The first estimate: the start share.
    case start
    /// A step of the start-up climb.
    case startupStep
    /// A queue over the threshold for a whole window that is not draining.
    case standingQueue
    /// A queue over twice the threshold in two readings, still rising, not carried.
    case risingQueue
    /// Loss grown above its recent minimum while a queue stands.
    case lossWithQueue
    /// A probe step grew the queue: back under the level that held.
    case probeQueueGrew
    /// A multiplicative step with no ceiling known.
    case climb
    /// A multiplicative step toward just under the ceiling.
    case recover
    /// A probe step near or past the ceiling.
    case probe
    /// The round trip stepped and stayed: the cuts it caused are undone.
    case pathChanged
    /// At the floor and still congested: a lower frame rate.
    case frameRateAtFloor
    /// Clear again: the frame rate back first.
    case frameRateBack
    /// The link carried under four fifths of the lowest frame rate's floor for a while.
    case belowFloor
    /// The link carries the floor at the frame rate asked for again.
    case floorCarried
  }

  /// What the encoder is asked for after an estimate.
  public struct Decision: Sendable, Equatable {
    public var targetBitsPerSecond: Int
    public var frameRate: Int
    public var keyframesOnly: Bool
    public var reason: Reason
    /// The rule that fired.
    public var rule: Rule
    /// The controller's state after the decision.
    public var state: State
    /// The estimate the decision was made on; nil for the start share asked before the
    /// output had a link to read (`begin(at:)`).
    public var link: LinkEstimate?
    /// The queueing delay the controller read from it (above the baselines), milliseconds.
    public var queueDelayMilliseconds: Double
    /// The path's round trip the delay was measured against, when known (milliseconds).
    public var baseRoundTripMilliseconds: Double?
    /// The ceiling remembered after the decision (video bits per second), when one is.
    public var ceilingBitsPerSecond: Int?
    /// What the encoder is asked for to carry the decision out: what changed, in the order
    /// bitrate, frame rate, keyframes only.
    public var requests: [EncoderRequest] = []

    public init(
      targetBitsPerSecond: Int, frameRate: Int, keyframesOnly: Bool, reason: Reason,
      rule: Rule? = nil, state: State = .climb, link: LinkEstimate?,
      queueDelayMilliseconds: Double, requests: [EncoderRequest] = []
    ) {
      self.targetBitsPerSecond = targetBitsPerSecond
      self.frameRate = frameRate
      self.keyframesOnly = keyframesOnly
      self.reason = reason
      self.rule = rule ?? Self.defaultRule(reason)
      self.state = state
      self.link = link
      self.queueDelayMilliseconds = queueDelayMilliseconds
      self.requests = requests
    }

    private static func defaultRule(_ reason: Reason) -> Rule {
      switch reason {
      case .start: .start
      case .congestion: .standingQueue
      case .probe: .climb
      case .pathChanged: .pathChanged
      case .frameRateDown: .frameRateAtFloor
      case .frameRateUp: .frameRateBack
      case .keyframesOnly: .belowFloor
      case .keyframesOnlyEnded: .floorCarried
      }
    }
  }

  public let configuration: Configuration
  /// The bitrate the encoder is asked for now.
  public private(set) var targetBitsPerSecond: Int
  /// The frame rate the encoder is asked for now.
  public private(set) var frameRate: Int
  /// Whether only keyframes are asked for.
  public private(set) var keyframesOnly = false
  /// Where the controller is.
  public private(set) var state: State = .startup
  /// The level the link last held when congestion appeared (video bits per second).
  public var ceilingBitsPerSecond: Int? { ceiling.map { Int($0) } }
  /// The path's round trip (milliseconds), when known.
  public var baseRoundTripMilliseconds: Double? {
    pathRoundTrip.baseline(at: lastEstimate ?? .origin)
  }

  private var queueBaseline: WindowedMinimum
  private var pathRoundTrip: PathRoundTrip
  private var lossBaseline: WindowedMinimum
  private var lastChange: MonotonicInstant?
  private var lastDecrease: MonotonicInstant?
  private var clearSince: MonotonicInstant?
  private var belowFloorSince: MonotonicInstant?
  /// When the frame rate last went up, and how long after the last change the next step up
  /// waits: a step up that the link did not carry (a lower frame rate again within
  /// `frameRateTrial`) doubles the wait, as a probe taken back holds the bitrate.
  private var frameRateRaised: MonotonicInstant?
  private var frameRateWait: TimeSpan = .zero
  /// The video the link carried, smoothed over `carriedSmoothing`, and when last read.
  private var carriedVideo: (time: MonotonicInstant, bitsPerSecond: Double)?
  /// What the link delivered when congestion last appeared; increases slow down near it.
  private var ceiling: Double?
  /// The ceiling was set where a probe step filled the link (not by a cut for a queue that a
  /// drop in capacity grew): probed past by the smallest step only.
  private var ceilingFilledByProbe = false
  /// The level the link held before its capacity dropped (a cut, after the start-up, from
  /// `dropShare` times the ceiling it left or more), until a probe finds the link full or the
  /// target is back at it: the link may come back (an oscillating or shared link, a handover),
  /// so the ceiling the drop left is probed quickly and the climb past it is fast.
  private var levelBeforeDrop: Double?
  /// A cut from this many times the ceiling it sets is a drop in capacity.
  private static let dropShare = 1.5
  /// When the previous estimate came, and until when a connection's first readings only
  /// observe.
  private var lastEstimate: MonotonicInstant?
  private var observingSince: MonotonicInstant?
  /// Whether the starting target has gone out.
  private var started = false
  /// Still in the start-up climb (no congestion seen yet).
  private var startingUp = true
  /// When a reading last showed a queue of `startupIncreaseClearMilliseconds` or more.
  private var lastQueuedReading: MonotonicInstant?
  /// How long such a reading keeps the start-up climb to the gentle bound.
  private static let queuedReadingMemory: TimeSpan = .seconds(2)
  /// The queueing delay when the target was last lowered.
  private var queueAtDecrease = 0.0
  /// The queueing delay of the previous estimate.
  private var previousQueueDelay = 0.0
  /// The queueing delays of the last second.
  private var recentDelays: WindowedMinimum
  /// The standing queue (least delay of a window) when last marked, and the mark before.
  private var standingMark: (time: MonotonicInstant, previousStanding: Double, standing: Double) = (
    .distantPast, .infinity, .infinity
  )
  /// The step the next probe adds (a share of the target).
  private var probeStep: Double
  /// The last probe step, while it is on trial: when, the target before it, and the standing
  /// queue then.
  private var probeTrial: (time: MonotonicInstant, before: Int, standing: Double)?
  /// After a probe was taken back: no probe before this time.
  private var cruiseUntil: MonotonicInstant = .distantPast
  /// Since when nothing gets through, while it lasts.
  private var outageSince: MonotonicInstant?
  /// The target before the last probe step, when it was raised, and the video the link
  /// carried then: the last level that held.
  private var lastHeld: (time: MonotonicInstant, target: Int, delivered: Double?)?
  /// The cuts of the last seconds, to undo when the path's round trip explains them.
  private var recentCuts: [(time: MonotonicInstant, before: Int, ceiling: Double?)] = []

  public init(configuration: Configuration) {
    precondition(configuration.floorBitsPerSecond <= configuration.nominalBitsPerSecond)
    self.configuration = configuration
    targetBitsPerSecond = max(
      configuration.floorBitsPerSecond,
      Int(Double(configuration.nominalBitsPerSecond) * configuration.startShare))
    frameRate = configuration.nominalFrameRate
    startingUp = targetBitsPerSecond < configuration.nominalBitsPerSecond
    state = startingUp ? .startup : .climb
    let window = configuration.baselineWindow
    queueBaseline = WindowedMinimum(window: window)
    var path = configuration.pathRoundTrip
    path.window = window
    pathRoundTrip = PathRoundTrip(configuration: path)
    lossBaseline = WindowedMinimum(window: window)
    recentDelays = WindowedMinimum(
      window: configuration.standingWindow, slots: 5)
    probeStep = configuration.nearCeilingStep
  }

  /// The queueing delay above which the link counts as congested, for an estimate.
  public func congestionThreshold(_ link: LinkEstimate) -> Double {
    max(
      link.latencyMilliseconds * configuration.congestedQueueShare,
      configuration.congestedQueueMilliseconds)
  }

  /// The path's round trip for `link`, capped: a baseline measured through a standing queue is
  /// no baseline, so at most a third of the latency counts as distance (SRT wants a latency of
  /// three to four round trips). Not one measured after a path change: a handover to a path
  /// longer than a third of the latency (a latency too short, which the output warns about)
  /// is distance all the same, and cutting the rate does not shorten it.
  private func roundTripBase(_ link: LinkEstimate) -> Double? {
    guard let base = pathRoundTrip.baseline(at: link.time) else { return nil }
    return pathRoundTrip.followsChange ? base : min(base, link.latencyMilliseconds / 3)
  }

  /// The queueing delay of `link` against the baselines: what waits in front of the path (or,
  /// from an output that cannot tell it apart, the queue time above its recent minimum) and
  /// the round trip above the path's own, plus the ring's backlog.
  private mutating func queueDelay(_ link: LinkEstimate) -> Double {
    let now = link.time
    var roundTripExcess = 0.0
    let base = roundTripBase(link)
    if let rtt = link.roundTripMilliseconds, rtt > 0, let base {
      roundTripExcess = max(0, rtt - base)
    }
    let delay: Double
    if let unsent = link.unsentMilliseconds {
      // What waits before its first transmission, then the path's own queue: in series.
      delay = roundTripExcess + max(0, unsent)
    } else {
      let cap = link.latencyMilliseconds / 3
      queueBaseline.add(link.queueMilliseconds, at: now)
      var queueBase = min(queueBaseline.minimum(at: now) ?? link.queueMilliseconds, cap)
      if let base {
        // The queue holds what is in flight for a round trip and an acknowledgement; a queue
        // that empties now and then (a low rate) does not lower that.
        queueBase = base + Self.acknowledgementMilliseconds
      }
      delay = max(roundTripExcess, link.queueMilliseconds - queueBase)
    }
    return max(0, delay) + max(0, link.backlogMilliseconds)
  }

  /// How long a receiver takes to acknowledge what arrived (libsrt: every 10 ms).
  private static let acknowledgementMilliseconds = 10.0

  /// Whether the loss of `link` grew above its recent minimum (a bottleneck dropping).
  private mutating func lossGrew(_ link: LinkEstimate) -> Bool {
    guard let loss = link.lossRatio else { return false }
    lossBaseline.add(loss, at: link.time)
    let baseline = lossBaseline.minimum(at: link.time) ?? loss
    return loss > baseline + max(configuration.lossGrowth, baseline)
  }

  /// Whether a connection's first readings are still only observed.
  private func observing(_ now: MonotonicInstant) -> Bool {
    guard let observingSince else { return false }
    return now - observingSince < configuration.observation
  }

  /// Whether the link delivers almost nothing of what is asked for (a blackout).
  private func isOutage(_ link: LinkEstimate) -> Bool {
    // Nothing acknowledged for two round trips and 50 ms (150 ms at least; acknowledgements
    // come every 10 ms while data flows): nothing gets through.
    if let stalled = link.stalledMilliseconds,
      stalled >= max(150, 2 * (pathRoundTrip.baseline(at: link.time) ?? 0) + 50)
    {
      return true
    }
    guard let delivered = link.deliveredBitsPerSecond else { return false }
    let asked =
      Double(targetBitsPerSecond) * (1 + configuration.framingShare)
      + Double(configuration.fixedBitsPerSecond)
    return delivered < asked * configuration.outageShare
  }

  /// Asks for the start share before the output has a link to read (while it connects), so
  /// that what the ring gathers meanwhile is made at that rate rather than the nominal one: at
  /// a 300 ms round trip connecting takes 0.9 s (1.9 s when a handshake packet is lost), and
  /// the drain of that much nominal-rate backlog made the slowest frames of the run. The first
  /// estimate then starts the observation, not the start share again.
  /// - Returns: the `start` decision (no link in it), or nil when the start share went out
  ///   already or is the nominal rate.
  public mutating func begin(at now: MonotonicInstant) -> Decision? {
    guard !started, targetBitsPerSecond < configuration.nominalBitsPerSecond else { return nil }
    started = true
    // Like the start share on the first estimate, no step whose effect the link must show.
    lastChange = nil
    var decision = Decision(
      targetBitsPerSecond: targetBitsPerSecond, frameRate: frameRate, keyframesOnly: keyframesOnly,
      reason: .start, rule: .start, state: state, link: nil, queueDelayMilliseconds: 0)
    decision.ceilingBitsPerSecond = ceilingBitsPerSecond
    decision.requests = [.bitrate(targetBitsPerSecond)]
    return decision
  }

  /// Feeds one estimate (a few a second is right).
  /// - Returns: the decision when the target, the frame rate or keyframes-only changed, with
  ///   the encoder requests that carry it out.
  public mutating func update(_ link: LinkEstimate) -> Decision? {
    let before = self
    guard var decision = step(link) else { return nil }
    // The start target differs from what the encoder runs at (its nominal rate), not from the
    // controller's own.
    if decision.targetBitsPerSecond != before.targetBitsPerSecond || decision.reason == .start {
      decision.requests.append(.bitrate(decision.targetBitsPerSecond))
    }
    if decision.frameRate != before.frameRate {
      decision.requests.append(.frameRate(Double(decision.frameRate)))
    }
    if decision.keyframesOnly != before.keyframesOnly {
      decision.requests.append(.keyframesOnly(decision.keyframesOnly))
    }
    return decision
  }

  private mutating func step(_ link: LinkEstimate) -> Decision? {
    let now = link.time
    // A connection (a new one, or estimates again after a gap) is first only observed
    // (`observation`): what the ring gathered while connecting, and a slow start on a
    // long path, are no reading of the link. It may be another path: the baselines start
    // again.
    if now - (lastEstimate ?? .distantPast) > configuration.standingWindow {
      observingSince = now
      if let lastEstimate {
        // No estimate for a while (a reconnect, or a thread starved of CPU): as after an
        // outage, the path's round trip is measured again once it settles.
        pathRoundTrip.observe(nil, at: lastEstimate, outage: true)
        queueBaseline.reset()
        lossBaseline.reset()
        recentDelays.reset()
        carriedVideo = nil
      }
    }
    lastEstimate = now
    if !started {
      // The encoder runs at its nominal rate until told otherwise: the start share goes out
      // with the first estimate.
      started = true
      if targetBitsPerSecond < configuration.nominalBitsPerSecond {
        let decision = decide(.start, .start, link, delay: 0, now: now)
        // The start share takes back what the encoder made while connecting, not a step whose
        // effect the link must show first: the climb's first step holds for nothing (at a
        // 600 ms round trip the hold alone put 90 % of nominal past 3 s from the start).
        lastChange = nil
        return decision
      }
    }
    let outage = isOutage(link)
    // A step in the round trip is followed only where the output tells what it has not sent
    // from what is in flight (SRT): a TCP output's own window keeps a bottleneck's queue
    // standing and flat (RTMP at 50 %: 2 ms became 77 ms for seconds). Nor while the ring
    // holds a backlog: the sink then keeps the bottleneck's queue at its bound, flat (the
    // link at 30 %: 9 ms became 100 ms for 3 s, taken for a new path, and the cut undone).
    let pathChange = pathRoundTrip.observe(
      link.roundTripMilliseconds, at: now, outage: outage,
      followSteps: link.unsentMilliseconds != nil
        && link.backlogMilliseconds < Self.stepBacklogMilliseconds)
    if outage {
      outageSince = outageSince ?? now
    } else if let since = outageSince {
      outageSince = nil
      // A blackout long enough to end on another path: the backlog that goes out first is no
      // reading of the link either.
      if now - since >= configuration.pathRoundTrip.outageLength { observingSince = now }
    }
    let delay = queueDelay(link)
    if delay >= configuration.startupIncreaseClearMilliseconds { lastQueuedReading = now }
    let grewLoss = lossGrew(link)
    defer { previousQueueDelay = delay }
    let threshold = congestionThreshold(link)
    if !outage {
      trackKeyframesOnly(link, now: now)
      smoothCarriedVideo(link)
    }
    let lossWithQueue = grewLoss && delay > threshold * configuration.clearShare
    // The least delay of the last second: a keyframe's burst is gone from it, a standing
    // queue is not.
    recentDelays.add(delay, at: now)
    let standing = recentDelays.minimum(at: now) ?? delay
    // The standing queue a second ago: one that has not shrunk since is not draining.
    if now - standingMark.time >= configuration.standingWindow {
      standingMark = (now, previousStanding: standingMark.standing, standing: standing)
    }
    let draining = standing < standingMark.previousStanding - 10
    let memory = cutMemory
    recentCuts.removeAll { now - $0.time > memory }
    if pathChange == .step, let undone = undoCuts(link, delay: delay, now: now) {
      return undone
    }
    if outage {
      state = .hold
      probeTrial = nil
    } else if state == .hold {
      state = stateForIncrease()
    }
    if delay > threshold || lossWithQueue {
      clearSince = nil
      // Nothing gets through: a lower rate would not either. Hold, so the return is at once.
      if outage { return nil }
      if observing(now) {
        // What the ring gathered while connecting is no reading of the link, but what the link
        // carried of it is: the climb goes up to that, and no further while the queue is
        // over the threshold. At a 600 ms round trip that backlog kept every reading over it
        // for a second while the link carried twice the nominal rate. Not while the ring
        // still holds half a second of it: a higher rate then adds to what waits (at 300 ms
        // with 1 % loss, a climb to the nominal rate over 1.6 s of backlog was cut 1.4 s
        // later, and the p95 latency grew by half a second).
        guard startingUp, link.backlogMilliseconds < Self.stepBacklogMilliseconds else {
          return nil
        }
        return startupStep(to: carried(link), blind: false, link, delay: delay, now: now)
      }
      // A queue over twice the threshold twice in a row, still rising, that the link does
      // not drain as fast as the target fills it: the capacity dropped. A burst (a keyframe)
      // or jitter falls by the next reading or is carried at the target's rate.
      let keepsUp = link.deliveredBitsPerSecond.map {
        videoShare(of: $0) >= Double(targetBitsPerSecond) * 0.97
      }
      let severe =
        delay > 2 * threshold && previousQueueDelay > 2 * threshold
        && delay >= previousQueueDelay - 5 && keepsUp != true
      // A queue that stands (over the threshold for a whole window) and is not draining,
      // neither by its own figures nor by the link carrying clearly more than the target (a
      // backlog after a blackout or a burst going out).
      let drainsFaster = link.deliveredBitsPerSecond.map {
        videoShare(of: $0) >= Double(targetBitsPerSecond) * 1.05
      }
      let stands = standing > threshold && !draining && drainsFaster != true
      guard stands || lossWithQueue || severe else { return nil }
      let rule: Rule = stands ? .standingQueue : severe ? .risingQueue : .lossWithQueue
      return congested(link, delay: delay, rule: rule, now: now)
    }
    if outage { return nil }
    // A probe step on trial: a standing queue it grew says the link was full at the level
    // before. A step that held passes.
    var probePassed = true
    if let trial = probeTrial {
      let age = now - trial.time
      // The least growth that counts: 10 ms, a tenth of the threshold or of the path's round
      // trip, whichever is more (libsrt's and TCP's round trips move by that much alone).
      let growth = max(
        configuration.probeQueueGrowthMilliseconds,
        configuration.probeQueueGrowthShare * max(threshold, roundTripBase(link) ?? 0))
      if age >= configuration.increaseHold, !observing(now),
        standing > trial.standing + growth
      {
        return probeTakenBack(trial, link, delay: delay, now: now)
      }
      if age >= 2 * configuration.standingWindow {
        probeTrial = nil
      } else {
        // A whole window without growth: the standing figure no longer remembers the time
        // before the step.
        probePassed = age >= probeTrialLength
      }
    }
    // Clear by the standing queue: a keyframe's burst does not hold the climb back.
    let clear = threshold * configuration.clearShare
    guard standing < clear, !configuration.increaseNeedsClearReading || delay < clear else {
      clearSince = nil
      return nil
    }
    let since = clearSince ?? now
    clearSince = since
    if state == .drain { state = stateForIncrease() }
    if startingUp {
      let step = Double(targetBitsPerSecond) * configuration.startupStep
      var carried = carried(link)
      // Within a tenth of the nominal rate, the nominal rate: what the link carried while the
      // ring drained is a floor of what it takes, and the last tenth is no more than a probe's
      // step. At a 600 ms round trip the first reading said 91 %, and the nominal rate came
      // 0.6 s later, past 3 s from the start.
      let nominal = Double(configuration.nominalBitsPerSecond)
      if carried >= Self.nearNominalShare * nominal { carried = nominal }
      return startupStep(
        to: max(step, carried), blind: step >= carried, link, delay: delay, now: now)
    }
    if keyframesOnly && belowFloorSince == nil {
      keyframesOnly = false
      return decide(.keyframesOnlyEnded, .floorCarried, link, delay: delay, now: now)
    }
    let target = Double(targetBitsPerSecond)
    let nominal = Double(configuration.nominalBitsPerSecond)
    let delivered = link.deliveredBitsPerSecond.map(videoShare) ?? 0
    let passed = 1 + configuration.ceilingPassedShare
    if let ceiling, !configuration.forgetsDisprovedCeiling,
      target < passed * ceiling, delivered >= Self.ceilingDisprovedShare * ceiling
    {
      // What the link carried is the better lower bound: recover to it, then probe.
      self.ceiling = min(delivered, Double(configuration.nominalBitsPerSecond))
      ceilingFilledByProbe = false
      probeTrial = nil
    } else if let ceiling,
      delivered >= passed * ceiling && target >= passed * ceiling
        || delivered >= Self.ceilingDisprovedShare * ceiling
    {
      // The link carried clearly more than the old ceiling: it grew, or the ceiling was set
      // by a reading that was not the link's (what got through just after a blackout). A
      // link cannot carry a quarter more than its capacity over a second: that alone is
      // enough. Climb again.
      self.ceiling = nil
      ceilingFilledByProbe = false
      probeTrial = nil
      state = .climb
    }
    let hold = configuration.increaseHold
    guard now - max(since, lastChange ?? since) >= hold else { return nil }
    if frameRate < configuration.nominalFrameRate {
      // Each step up adds a fifth or a quarter of the load: on a link that carried the lower
      // rate and no more, steps up every few seconds filled the queue each time. One that
      // failed waits longer from the last change, unless the link carried the next rate's
      // floor meanwhile (a backlog going out faster: the link came back).
      let next = nextFrameRateUp()
      let shown =
        (carriedVideo?.bitsPerSecond ?? 0) >= Self.drainingShare * Double(floor(atFrameRate: next))
      guard shown || now - (lastChange ?? .distantPast) >= frameRateWait else { return nil }
      if shown { frameRateWait = .zero }
      frameRate = next
      frameRateRaised = now
      targetBitsPerSecond = max(targetBitsPerSecond, frameRateFloor)
      return decide(.frameRateUp, .frameRateBack, link, delay: delay, now: now)
    }
    guard targetBitsPerSecond < configuration.nominalBitsPerSecond else {
      probeTrial = nil
      return nil
    }
    var next: Double
    let rule: Rule
    if let ceiling, target >= 0.9 * ceiling {
      guard now >= cruiseUntil, probePassed else { return nil }
      // Near or past the ceiling: a small step, twice the last one while the queue has not
      // grown (`probeTrial` takes it back otherwise).
      if probeTrial == nil { probeStep = configuration.nearCeilingStep }
      // Past the ceiling, steps of more than twice the first only once the link carries
      // more than the ceiling (it grew); a link still at its ceiling is probed gently, and
      // one a probe step filled by the first step alone: at twice it, RTMP at half the
      // nominal rate went 16 % over its median within two steps.
      let linkAtCeiling = delivered < 1.05 * ceiling
      if target * (1 + configuration.nearCeilingStep) >= ceiling && linkAtCeiling {
        let largest = ceilingFilledByProbe ? 1.0 : 2.0
        probeStep = min(probeStep, largest * configuration.nearCeilingStep)
      }
      next = target * (1 + probeStep)
      if target >= ceiling && linkAtCeiling {
        // Past the ceiling, a step over what the link carried at most: one that did not
        // carry the last step will not carry the next. RTMP at half the nominal rate went on
        // in 3 % steps to 12 % past a full link before its queue showed (TCP's buffer takes
        // it first), and came back 14 %.
        next = min(next, max(ceiling, delivered) * (1 + configuration.nearCeilingStep))
        guard next >= target + 1 else { return nil }
      }
      probeTrial = (now, targetBitsPerSecond, standing)
      probeStep = min(2 * probeStep, configuration.largestProbeStep)
      rule = .probe
      state = .probe
    } else {
      probeTrial = nil
      next = max(target * configuration.increaseStep, target + 0.05 * nominal)
      if ceiling == nil, let level = levelBeforeDrop, target < level {
        // Back towards the level the link held before it dropped, by the start-up's steps:
        // an oscillating link's high phase was half over before steps of a quarter got there.
        next = max(next, min(level, target * configuration.startupStep))
      }
      if let ceiling {
        // Below the ceiling: quickly up to just under it, then probes.
        next = min(next, 0.95 * ceiling)
        rule = .recover
        state = .recover
      } else {
        rule = .climb
        state = .climb
      }
    }
    let limited = limitedIncrease(next, link, limit: configuration.increaseLimitOfDelivered)
    guard limited > targetBitsPerSecond else { return nil }
    // A probe step is small: what congestion answers it, the level before held. A larger step
    // may have passed the link's limit by far: what the link delivered says where it is.
    lastHeld =
      rule == .probe
      ? (now, targetBitsPerSecond, link.deliveredBitsPerSecond.map(videoShare)) : nil
    targetBitsPerSecond = min(configuration.nominalBitsPerSecond, limited)
    // Past the floor at the nominal frame rate: the link carries every frame rate again.
    frameRateWait = .zero
    if let level = levelBeforeDrop, Double(targetBitsPerSecond) >= level { levelBeforeDrop = nil }
    return decide(.probe, rule, link, delay: delay, now: now)
  }

  /// The video the link carried, up to the nominal rate: a rate the link takes, so the
  /// start-up climb goes at once to it, as BBR starts from the bandwidth it measured. At a
  /// 600 ms round trip, what the ring gathered while connecting went out at more than the
  /// nominal rate while steps of half again took 1.2 s to get there.
  private func carried(_ link: LinkEstimate) -> Double {
    min(
      Double(configuration.nominalBitsPerSecond), link.deliveredBitsPerSecond.map(videoShare) ?? 0)
  }

  /// A step of the start-up climb to `next` (bits per second, within `limitedIncrease`); nil
  /// when that is no increase. A `blind` step (half again, beyond what the link carried) waits
  /// for the increase hold since the last change, so that its effect shows before the next;
  /// one to what the link carried does not: the link has shown it takes that.
  private mutating func startupStep(
    to next: Double, blind: Bool, _ link: LinkEstimate, delay: Double, now: MonotonicInstant
  ) -> Decision? {
    if blind {
      guard now - (lastChange ?? .distantPast) >= configuration.increaseHold else { return nil }
    }
    // A queue in the newest reading, however small, may be the bottleneck's: the gentle
    // bound then. (Through the half-rate link, a reading of 25 ms came two steps before one
    // of 234 ms; at a 100 ms round trip with 2 % loss the readings stayed within 1 ms.) And
    // for 2 s after one: a keyframe's burst can show the queue in one report and be gone by
    // the next (43 ms, then 9 ms: two quick steps went to 1.18 Mb/s through the half-rate
    // link, and it overflowed for 4 s).
    let quick =
      delay < configuration.startupIncreaseClearMilliseconds
      && now - (lastQueuedReading ?? .distantPast) >= Self.queuedReadingMemory
    let limited = limitedIncrease(
      next, link,
      limit: quick
        ? configuration.startupIncreaseLimitOfDelivered ?? configuration.increaseLimitOfDelivered
        : configuration.increaseLimitOfDelivered)
    guard limited > targetBitsPerSecond else { return nil }
    targetBitsPerSecond = min(configuration.nominalBitsPerSecond, limited)
    startingUp = targetBitsPerSecond < configuration.nominalBitsPerSecond
    state = startingUp ? .startup : .climb
    return decide(.probe, .startupStep, link, delay: delay, now: now)
  }

  /// A backlog in the ring at least this long says the sender is held back: a flat round
  /// trip is then its own queue at the sink's bound, not a new distance.
  private static let stepBacklogMilliseconds = 500.0

  /// What the link carried, as a share of the nominal rate, from which the start-up climb
  /// goes to the nominal rate.
  private static let nearNominalShare = 0.9

  /// What the link delivered above this multiple of the ceiling disproves it.
  private static let ceilingDisprovedShare = 1.25

  /// A congestion this soon after an increase answers it: the level before held.
  private static let increaseBlame: TimeSpan = .seconds(3)

  /// Whether a congestion now answers the probe step of `held`: it came within
  /// `increaseBlame`, or nothing changed since and the link carries what it did then (it did
  /// not drop: the step was just past it, and the queue grew slowly). RTMP at half the nominal
  /// rate went on 19 s after a step 3 % past the link before the queue stood, and the cut for
  /// a sudden queue, 24 % under what the link carried, put the video 23 % under its median.
  private func blames(
    _ held: (time: MonotonicInstant, target: Int, delivered: Double?), delivered: Double?,
    now: MonotonicInstant
  ) -> Bool {
    if now - held.time <= Self.increaseBlame { return true }
    guard let then = held.delivered, let delivered, then > 0 else { return false }
    return delivered >= Self.unchangedLinkShare * then
  }

  /// What the link carries now, as a share of what it carried at a probe step, that says it
  /// did not drop since.
  private static let unchangedLinkShare = 0.95

  /// How long cuts are remembered, to be undone if the path's round trip explains them: the
  /// time a step takes to be recognised, and a window more.
  private var cutMemory: TimeSpan {
    configuration.pathRoundTrip.stepHold + 2 * configuration.standingWindow
  }

  /// How long a probe step stands on trial before the next: a standing window, or half a
  /// second (`increaseHold`) below a level the link held before it dropped, while no probe has
  /// found the link full: the 3, 6 and 12 % steps past a ceiling left by the drop took 3 s of
  /// an oscillating link's 10 s high phase.
  private var probeTrialLength: TimeSpan {
    levelBeforeDrop != nil && !ceilingFilledByProbe
      ? configuration.increaseHold : configuration.standingWindow
  }

  /// The state an increase from here is in: below the ceiling, near it, or none known.
  private func stateForIncrease() -> State {
    if startingUp { return .startup }
    guard let ceiling else { return .climb }
    return Double(targetBitsPerSecond) >= 0.9 * ceiling ? .probe : .recover
  }

  /// The round trip stepped and stayed (a handover, a new route): the cuts of the last
  /// seconds answered distance, not a queue. The target goes back to where it was before the
  /// first of them, and the ceiling they set is forgotten.
  private mutating func undoCuts(_ link: LinkEstimate, delay: Double, now: MonotonicInstant)
    -> Decision?
  {
    guard let first = recentCuts.first else { return nil }
    recentCuts.removeAll()
    ceiling = first.ceiling
    probeTrial = nil
    lastDecrease = nil
    guard first.before > targetBitsPerSecond else { return nil }
    targetBitsPerSecond = first.before
    state = stateForIncrease()
    return decide(.pathChanged, .pathChanged, link, delay: delay, now: now)
  }

  /// The probe step on trial grew the queue: the link is full. The ceiling is the level before
  /// the step (or the one remembered, if higher), but no more than what the link carried, and
  /// the target goes just under it and stays there a while. (A ceiling set low by a keyframe's
  /// queue read as growth is passed by 10 % on the same link and forgotten.)
  private mutating func probeTakenBack(
    _ trial: (time: MonotonicInstant, before: Int, standing: Double), _ link: LinkEstimate,
    delay: Double,
    now: MonotonicInstant
  ) -> Decision? {
    probeTrial = nil
    probeStep = configuration.nearCeilingStep
    cruiseUntil = now + configuration.cruise
    state = .cruise
    var held = max(ceiling ?? 0, Double(trial.before))
    if let delivered = link.deliveredBitsPerSecond.map(videoShare), delivered > 0 {
      // No more than the link carried: the level before may have been over it too (the
      // encoder follows a target late, and a queue behind TCP's window grows slowly). Taken
      // back to just under the level before, and recovering to just under it as a ceiling,
      // the target stayed over the link until a cut for the standing queue took a quarter
      // off (RTMP at half the nominal rate, every 8 s).
      held = min(held, delivered)
    }
    ceiling = held
    ceilingFilledByProbe = true
    levelBeforeDrop = nil
    let next = max(configuration.floorBitsPerSecond, Int(held * 0.97))
    guard next < targetBitsPerSecond else { return nil }
    recentCuts.append((now, targetBitsPerSecond, ceiling))
    targetBitsPerSecond = next
    lastDecrease = now
    queueAtDecrease = delay
    return decide(.congestion, .probeQueueGrew, link, delay: delay, now: now)
  }

  private mutating func congested(
    _ link: LinkEstimate, delay: Double, rule: Rule, now: MonotonicInstant
  ) -> Decision? {
    if let lastDecrease, now - lastDecrease < configuration.decreaseHold {
      return nil
    }
    let afterStartUp = !startingUp
    startingUp = false
    probeTrial = nil
    probeStep = configuration.nearCeilingStep
    let floor = configuration.floorBitsPerSecond
    let target = Double(targetBitsPerSecond)
    if targetBitsPerSecond > floor {
      // Toward (below) what the link delivered, so the backlog drains while the encoder follows.
      var next = target * 0.85
      let delivered = link.deliveredBitsPerSecond.map(videoShare)
      if let delivered, delivered > 0 {
        // Under what the link carries by enough to drain the backlog within about 2 s; after
        // a probe step of the last seconds (it went a little too far), within about 4 s. A
        // capacity that dropped is followed at once: over 9 s in steps of 15 % it overflowed.
        let probeWentTooFar = lastHeld.map { blames($0, delivered: delivered, now: now) } ?? false
        let anchor =
          probeWentTooFar
          ? delivered * max(0.85, 0.9 - delay / 4000) : delivered * max(0.5, 0.9 - delay / 2000)
        if anchor < target {
          next = anchor
        } else if let lastDecrease, now - lastDecrease < configuration.drainHold,
          delay < queueAtDecrease * 1.1
        {
          // Already under what the link carries and the queue is not growing: it is draining.
          return nil
        }
      }
      recentCuts.append((now, targetBitsPerSecond, ceiling))
      // The level the link held, approached slowly, forgotten once the link carries more: the
      // target before a probe step of the last seconds (which the congestion answers), or else
      // what the link delivered. (What a TCP output's socket acknowledged over a second swings
      // by half either way; the level that held does not.)
      var point = delivered.map { min($0, target) } ?? target
      if let lastHeld, blames(lastHeld, delivered: delivered, now: now) {
        point = min(Double(lastHeld.target), target)
      }
      self.lastHeld = nil
      if let ceiling, abs(point - ceiling) <= 0.2 * ceiling {
        // The same limit again: the mean of both points.
        self.ceiling = (ceiling + point) / 2
      } else {
        ceiling = point
      }
      ceilingFilledByProbe = false
      // The highest level of this drop's cuts (the start-up's overshoot is no level the link
      // held). Only where the output tells what it has not sent (SRT): what a TCP socket
      // acknowledged over a second swings by half either way, so a cut there can set a
      // ceiling half the link's without any drop.
      let from = recentCuts.map { Double($0.before) }.max() ?? target
      if afterStartUp, link.unsentMilliseconds != nil, let ceiling,
        from >= Self.dropShare * ceiling
      {
        levelBeforeDrop = max(levelBeforeDrop ?? 0, from)
      }
      targetBitsPerSecond = max(floor, Int(next))
      lastDecrease = now
      queueAtDecrease = delay
      state = .drain
      return decide(.congestion, rule, link, delay: delay, now: now)
    }
    // At the floor, a queue that stands while the link carries more than is sent is what the
    // drop left in the ring, draining: a lower frame rate would only skip frames. At the 30 %
    // step, 2 s of nominal-rate frames drained for 20 s behind a floor the link carried with a
    // fifth to spare, and a second's reading, a tenth under the mean now and then, went to
    // 15 fps for nothing. Judged over seconds (`carriedVideo`).
    if let carried = carriedVideo?.bitsPerSecond, carried >= Self.drainingShare * target {
      return nil
    }
    if let lower = configuration.reducedFrameRates.first(where: { $0 < frameRate }) {
      if let raised = frameRateRaised, now - raised < Self.frameRateTrial {
        frameRateWait = min(Self.longestFrameRateWait, max(2 * frameRateWait, .seconds(2)))
      }
      frameRate = lower
      // The floor's bits per frame: the step sheds its share of the load.
      targetBitsPerSecond = min(targetBitsPerSecond, frameRateFloor)
      lastDecrease = now
      state = .drain
      return decide(.frameRateDown, .frameRateAtFloor, link, delay: delay, now: now)
    }
    if !keyframesOnly, let belowFloorSince,
      now - belowFloorSince >= configuration.keyframesOnlyAfter
    {
      keyframesOnly = true
      state = .drain
      return decide(.keyframesOnly, .belowFloor, link, delay: delay, now: now)
    }
    return nil
  }

  /// `next`, within `limit` times the video `link` delivered (the target while it gives no
  /// delivered rate), never below the target. The video counts as up to `encoderShortfall`
  /// more, never more than the target: an encoder makes a little less than it is asked, and a
  /// bound of 5 % on what it made holds the climb where it is on a link that carried all of it
  /// (WHIP through the half-rate link, after a cut to the 300 kb/s floor: the video that got
  /// through read 4.5 % under the target, and the steps were 1 %, for 20 s). Counted as the
  /// whole target whenever within 15 % of it, the bound rose with each step on the same
  /// reading: under load, an encoder that lagged its target by a tenth let the target climb
  /// 30 % above what it sent, and when the encoder caught up the half-rate link overflowed.
  private func limitedIncrease(_ next: Double, _ link: LinkEstimate, limit: Double?) -> Int {
    guard let limit else { return Int(next) }
    // No figure of what the link carries yet: nothing to climb on.
    guard let delivered = link.deliveredBitsPerSecond.map(videoShare), delivered > 0 else {
      return targetBitsPerSecond
    }
    let credited = min(Double(targetBitsPerSecond), delivered / (1 - Self.encoderShortfall))
    let base = max(delivered, credited)
    return max(targetBitsPerSecond, Int(min(next, limit * base)))
  }

  /// How far under the target an encoder's video may be, as a share of what it was asked.
  private static let encoderShortfall = 0.05

  /// The part of a delivered link rate that was video (what the target is for).
  private func videoShare(of delivered: Double) -> Double {
    max(0, delivered - Double(configuration.fixedBitsPerSecond)) / (1 + configuration.framingShare)
  }

  /// Keyframes only, when the link has carried less than four fifths of the floor at the frame
  /// rate asked for a while at the lowest one; ended once it carries that floor again.
  private mutating func trackKeyframesOnly(_ link: LinkEstimate, now: MonotonicInstant) {
    guard let delivered = link.deliveredBitsPerSecond.map(videoShare) else { return }
    let floor = Double(frameRateFloor)
    if delivered >= floor {
      belowFloorSince = nil
    } else if delivered < Self.keyframesOnlyShare * floor {
      belowFloorSince = belowFloorSince ?? now
    }
  }

  /// Under this share of the floor at the frame rate asked for, the link counts as not
  /// carrying it.
  private static let keyframesOnlyShare = 0.8

  /// The floor at the frame rate asked for: the floor's bits per frame.
  private var frameRateFloor: Int { floor(atFrameRate: frameRate) }

  /// The floor's bits per frame at `rate` frames a second.
  private func floor(atFrameRate rate: Int) -> Int {
    configuration.floorBitsPerSecond * rate / configuration.nominalFrameRate
  }

  /// Follows the video `link` carried, smoothed over `carriedSmoothing`: a second's reading
  /// swings by a tenth either way with the acknowledgements of a keyframe.
  private mutating func smoothCarriedVideo(_ link: LinkEstimate) {
    guard let delivered = link.deliveredBitsPerSecond.map(videoShare) else { return }
    guard let last = carriedVideo else {
      carriedVideo = (link.time, delivered)
      return
    }
    let weight = min(1, (link.time - last.time).inSeconds / Self.carriedSmoothing.inSeconds)
    carriedVideo = (link.time, last.bitsPerSecond + weight * (delivered - last.bitsPerSecond))
  }

  /// How long after a step up of the frame rate a step down says the link did not carry it.
  private static let frameRateTrial: TimeSpan = .seconds(5)
  /// The longest a step up of the frame rate waits after ones that failed.
  private static let longestFrameRateWait: TimeSpan = .seconds(16)

  /// The time constant of `carriedVideo`.
  private static let carriedSmoothing: TimeSpan = .seconds(2)

  /// What the link carries, as a share of the target, that drains a queue standing at the
  /// floor.
  private static let drainingShare = 1.05

  /// The next frame rate up the list toward the nominal one.
  private func nextFrameRateUp() -> Int {
    let rates = [configuration.nominalFrameRate] + configuration.reducedFrameRates
    guard let index = rates.firstIndex(of: frameRate), index > 0 else {
      return configuration.nominalFrameRate
    }
    return rates[index - 1]
  }

  private mutating func decide(
    _ reason: Reason, _ rule: Rule, _ link: LinkEstimate, delay: Double, now: MonotonicInstant
  ) -> Decision {
    lastChange = now
    var decision = Decision(
      targetBitsPerSecond: targetBitsPerSecond, frameRate: frameRate, keyframesOnly: keyframesOnly,
      reason: reason, rule: rule, state: state, link: link, queueDelayMilliseconds: delay)
    decision.baseRoundTripMilliseconds = roundTripBase(link)
    decision.ceilingBitsPerSecond = ceilingBitsPerSecond
    return decision
  }
}
