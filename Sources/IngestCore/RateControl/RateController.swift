/// Steers the encoder between what the link delivers and the nominal rate: a continuous target
/// bitrate first, the frame rate only once the bitrate is at its floor, keyframes only when the
/// link carries less than the floor.
///
/// Decreases are quick and go toward what the link delivered (below it when the queue is long,
/// so the backlog drains); increases are slow, one step per quiet second, smaller near the rate
/// where congestion last appeared, so at a steady capacity the target settles under it instead of
/// sawing up and down. The floor keeps recovery after a dip fast. The memory ladder
/// (`DegradationLadder`) stays the safety net for the budget; this controller only reads the
/// link.
///
/// Deterministic: it reads only the estimates it is given (their `time` is its clock).
public struct RateController: Sendable {
  /// Limits and thresholds.
  public struct Configuration: Sendable, Equatable {
    /// The encoder's configured bitrate: the target never goes above it.
    public var nominalBitsPerSecond: Int
    /// The target never goes below it (a floor makes recovery after a dip fast).
    public var floorBitsPerSecond: Int = 300_000
    /// What the link carries besides the video the target is for: audio tracks and their
    /// framing. The link's delivered rate is compared with the video target plus this.
    public var fixedBitsPerSecond: Int = 0
    /// Transport framing (TS packets, PES headers, SRT/UDP/IP headers) as a share of the video.
    public var framingShare: Double = 0.08
    /// The encoder's frame rate, restored before the bitrate rises above the floor.
    public var nominalFrameRate: Int = 30
    /// Lower frame rates, tried in order while the bitrate is at its floor and the link still
    /// does not keep up (30 to 24 fps is hardly seen; a halved bitrate is).
    public var reducedFrameRates: [Int] = [24, 20, 15]
    /// The queue is long when it exceeds this share of the output's latency...
    public var congestedQueueShare: Double = 0.5
    /// ...or this many milliseconds above the lowest round trip seen (at most a quarter of the
    /// latency), whichever is larger.
    public var congestedQueueMilliseconds: Double = 100
    /// The link is clear when the queue is below this share of the congestion threshold.
    public var clearShare: Double = 0.4
    /// Quiet time before each increase step (nanoseconds).
    public var increaseHoldNanoseconds: Int64 = 1_000_000_000
    /// Least time between two decreases, so one backlog is not answered twice (nanoseconds).
    public var decreaseHoldNanoseconds: Int64 = 500_000_000
    /// While the target is already under what the link delivered, a queue that is not growing
    /// is a backlog draining: cut again only after this long (nanoseconds).
    public var drainHoldNanoseconds: Int64 = 2_000_000_000
    /// The share of the nominal rate a run starts at; it climbs by `startupStep` every half
    /// second until the first congestion or the nominal rate, so an unknown link is not first
    /// flooded at the full rate (what overflows a bottleneck's queue arrives too late to use).
    public var startShare: Double = 0.4
    /// The factor of each start-up step.
    public var startupStep: Double = 1.15
    /// How long the link must keep below the floor, at the lowest frame rate, before only
    /// keyframes are asked for (nanoseconds).
    public var keyframesOnlyAfterNanoseconds: Int64 = 3_000_000_000

    public init(nominalBitsPerSecond: Int) {
      self.nominalBitsPerSecond = nominalBitsPerSecond
    }
  }

  /// Why the controller changed what it asks for.
  public enum Reason: String, Sendable, Equatable {
    /// The queue or the round trip grew: the target goes toward what the link delivered.
    case congestion
    /// The link stayed clear: the target rises one step.
    case probe
    /// At the floor and the link still does not keep up: a lower frame rate.
    case frameRateDown
    /// The link is clear again: the frame rate comes back first.
    case frameRateUp
    /// The link carries less than the floor, even at the lowest frame rate.
    case keyframesOnly
    /// The link carries the floor again.
    case keyframesOnlyEnded
  }

  /// What the encoder is asked for after an estimate.
  public struct Decision: Sendable, Equatable {
    public var targetBitsPerSecond: Int
    public var frameRate: Int
    public var keyframesOnly: Bool
    public var reason: Reason
    /// The estimate the decision was made on.
    public var link: LinkEstimate
  }

  public let configuration: Configuration
  /// The bitrate the encoder is asked for now.
  public private(set) var targetBitsPerSecond: Int
  /// The frame rate the encoder is asked for now.
  public private(set) var frameRate: Int
  /// Whether only keyframes are asked for.
  public private(set) var keyframesOnly = false

  private var minimumRoundTrip: Double?
  private var lastChange: Int64?
  private var lastDecrease: Int64?
  private var clearSince: Int64?
  private var belowFloorSince: Int64?
  /// What the link delivered when congestion last appeared; increases slow down near it.
  private var ceiling: Double?
  /// Still in the start-up climb (no congestion seen yet).
  private var startingUp = true
  /// The queue when the target was last lowered.
  private var queueAtDecrease = 0.0
  /// Consecutive estimates over the congestion threshold: one alone is a keyframe's burst.
  private var longQueueReadings = 0

  public init(configuration: Configuration) {
    precondition(configuration.floorBitsPerSecond <= configuration.nominalBitsPerSecond)
    self.configuration = configuration
    targetBitsPerSecond = max(
      configuration.floorBitsPerSecond,
      Int(Double(configuration.nominalBitsPerSecond) * configuration.startShare))
    frameRate = configuration.nominalFrameRate
    startingUp = targetBitsPerSecond < configuration.nominalBitsPerSecond
  }

  /// The queue above which the link counts as congested, for an estimate.
  public func congestionThreshold(_ link: LinkEstimate) -> Double {
    // A round trip first measured through a full queue is no baseline: at most a quarter of the
    // latency counts (SRT wants a latency of several round trips anyway).
    let base = min(minimumRoundTrip ?? 0, link.latencyMilliseconds / 4)
    return max(
      link.latencyMilliseconds * configuration.congestedQueueShare,
      base + configuration.congestedQueueMilliseconds)
  }

  /// Feeds one estimate (a few a second is right).
  /// - Returns: the decision when the target, the frame rate or keyframes-only changed.
  public mutating func update(_ link: LinkEstimate) -> Decision? {
    if let rtt = link.roundTripMilliseconds, rtt > 0 {
      minimumRoundTrip = min(minimumRoundTrip ?? rtt, rtt)
    }
    let threshold = congestionThreshold(link)
    let now = link.time
    trackKeyframesOnly(link, now: now)
    if link.queueMilliseconds > threshold {
      clearSince = nil
      longQueueReadings += 1
      let severe = link.queueMilliseconds > 2 * threshold
      // A keyframe fills the queue for one reading; a link that is short stays long.
      guard severe || longQueueReadings >= 2 else { return nil }
      return congested(link, severe: severe, now: now)
    }
    longQueueReadings = 0
    guard link.queueMilliseconds < threshold * configuration.clearShare else {
      clearSince = nil
      return nil
    }
    let since = clearSince ?? now
    clearSince = since
    if startingUp {
      guard now - (lastChange ?? .min / 2) >= configuration.increaseHoldNanoseconds / 2 else {
        return nil
      }
      let next = Int(Double(targetBitsPerSecond) * configuration.startupStep)
      targetBitsPerSecond = min(configuration.nominalBitsPerSecond, next)
      startingUp = targetBitsPerSecond < configuration.nominalBitsPerSecond
      return decide(.probe, link, now: now)
    }
    if keyframesOnly && belowFloorSince == nil {
      keyframesOnly = false
      return decide(.keyframesOnlyEnded, link, now: now)
    }
    let target = Double(targetBitsPerSecond)
    let nominal = Double(configuration.nominalBitsPerSecond)
    if let ceiling, target >= 1.1 * ceiling {
      // Past the old congestion point without trouble: the link has grown.
      self.ceiling = nil
    }
    // Near the rate where congestion last appeared: smaller steps, three times as far apart.
    let nearCeiling = ceiling.map { target >= 0.9 * $0 } ?? false
    let hold = configuration.increaseHoldNanoseconds * (nearCeiling ? 3 : 1)
    guard now - max(since, lastChange ?? since) >= hold else { return nil }
    if frameRate < configuration.nominalFrameRate {
      frameRate = nextFrameRateUp()
      return decide(.frameRateUp, link, now: now)
    }
    guard targetBitsPerSecond < configuration.nominalBitsPerSecond else { return nil }
    let step = nearCeiling ? 0.02 * target : max(0.02 * nominal, 0.08 * target)
    targetBitsPerSecond = min(configuration.nominalBitsPerSecond, Int(target + step))
    return decide(.probe, link, now: now)
  }

  private mutating func congested(_ link: LinkEstimate, severe: Bool, now: Int64) -> Decision? {
    if let lastDecrease, now - lastDecrease < configuration.decreaseHoldNanoseconds {
      return nil
    }
    startingUp = false
    let floor = configuration.floorBitsPerSecond
    let target = Double(targetBitsPerSecond)
    if targetBitsPerSecond > floor {
      // Toward (below) what the link delivered, so the backlog drains while the encoder follows.
      var next = target * 0.85
      if let delivered = link.deliveredBitsPerSecond.map(videoShare), delivered > 0 {
        let anchor = delivered * (severe ? 0.75 : 0.9)
        if anchor < target {
          next = anchor
        } else if let lastDecrease, now - lastDecrease < configuration.drainHoldNanoseconds,
          link.queueMilliseconds < queueAtDecrease * 1.1
        {
          // Already under what the link carries and the queue is not growing: it is draining.
          return nil
        }
      }
      ceiling = link.deliveredBitsPerSecond.map { min(videoShare(of: $0), target) } ?? target
      targetBitsPerSecond = max(floor, Int(next))
      lastDecrease = now
      queueAtDecrease = link.queueMilliseconds
      return decide(.congestion, link, now: now)
    }
    if let lower = configuration.reducedFrameRates.first(where: { $0 < frameRate }) {
      frameRate = lower
      lastDecrease = now
      return decide(.frameRateDown, link, now: now)
    }
    if !keyframesOnly, let belowFloorSince,
      now - belowFloorSince >= configuration.keyframesOnlyAfterNanoseconds
    {
      keyframesOnly = true
      return decide(.keyframesOnly, link, now: now)
    }
    return nil
  }

  /// The part of a delivered link rate that was video (what the target is for).
  private func videoShare(of delivered: Double) -> Double {
    max(0, delivered - Double(configuration.fixedBitsPerSecond)) / (1 + configuration.framingShare)
  }

  /// Keyframes only, when the link has carried less than half the floor for a while at the
  /// lowest frame rate; ended once it carries the floor again.
  private mutating func trackKeyframesOnly(_ link: LinkEstimate, now: Int64) {
    guard let delivered = link.deliveredBitsPerSecond.map(videoShare) else { return }
    if delivered >= Double(configuration.floorBitsPerSecond) {
      belowFloorSince = nil
    } else if delivered < Double(configuration.floorBitsPerSecond) / 2 {
      belowFloorSince = belowFloorSince ?? now
    }
  }

  /// The next frame rate up the list toward the nominal one.
  private func nextFrameRateUp() -> Int {
    let rates = [configuration.nominalFrameRate] + configuration.reducedFrameRates
    guard let index = rates.firstIndex(of: frameRate), index > 0 else {
      return configuration.nominalFrameRate
    }
    return rates[index - 1]
  }

  private mutating func decide(_ reason: Reason, _ link: LinkEstimate, now: Int64) -> Decision {
    lastChange = now
    return Decision(
      targetBitsPerSecond: targetBitsPerSecond, frameRate: frameRate, keyframesOnly: keyframesOnly,
      reason: reason, link: link)
  }
}
