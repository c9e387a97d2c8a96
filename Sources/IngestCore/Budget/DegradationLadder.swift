/// Chooses the degradation tier from pressure readings, with hysteresis so it never flaps.
///
/// Memory pressure (the ledger, resident memory, the ring's bytes against the budget) guards
/// the ceiling: as soon as it reaches a tier's threshold, the ladder jumps to the highest tier
/// reached; down only after it stayed below `recoverBelow` for `hold`, one tier at
/// a time, each step with a fresh hold period.
///
/// Link pressure (the ring's backlog against `--buffer`, the sink's congestion) is a link that
/// does not keep up for a while, or not at all for a moment (a blackout): it grades, one tier
/// per `linkStep`, and no further than `linkCeiling` (a lower bitrate, then a lower
/// frame rate with disposable frames dropped), so audio and whole GOPs are left to the ring's
/// drop policy, which sheds only what does not fit. Once the link keeps up again (link pressure
/// below `recoverBelow` for `linkRecover`), its tiers end at once.
public struct DegradationLadder: Sendable {
  /// Thresholds and hysteresis.
  public struct Configuration: Sendable, Equatable {
    /// Pressure (fraction of the budget) at which tiers 1, 2, 3 and 4 start.
    public var thresholds: [Double] = [0.80, 0.85, 0.90, 0.95]
    /// The pressure must stay below this to step down.
    public var recoverBelow: Double = 0.70
    /// How long the pressure must stay below `recoverBelow` before each step down.
    public var hold: TimeSpan = .seconds(5)
    /// Link pressure raises the tier one step at most this often.
    public var linkStep: TimeSpan = .seconds(1)
    /// The highest tier link pressure alone reaches.
    public var linkCeiling: Tier = .reducedFrameRate
    /// How long link pressure must stay below `recoverBelow` before its tiers end.
    public var linkRecover: TimeSpan = .seconds(1)

    public init() {}
  }

  /// A tier change.
  public struct Change: Equatable, Sendable {
    public var from: Tier
    public var to: Tier
    public var pressure: Double
  }

  public let configuration: Configuration
  /// The current tier: the higher of the memory and the link tiers.
  public var tier: Tier { max(memoryTier, linkTier) }
  private var memoryTier: Tier = .normal
  private var belowSince: MonotonicInstant?
  private var linkTier: Tier = .normal
  private var linkStepped: MonotonicInstant?
  private var linkBelowSince: MonotonicInstant?

  public init(configuration: Configuration = Configuration()) {
    precondition(configuration.thresholds.count == Tier.allCases.count - 1)
    self.configuration = configuration
  }

  /// Feeds a memory pressure reading taken at `now`, with no link
  /// pressure.
  /// - Returns: the change, if the tier changed.
  public mutating func update(pressure: Double, now: MonotonicInstant) -> Change? {
    update(pressure: pressure, linkPressure: 0, now: now)
  }

  /// Feeds the memory and link pressure readings taken at `now`.
  /// - Returns: the change, if the tier changed.
  public mutating func update(pressure: Double, linkPressure: Double, now: MonotonicInstant)
    -> Change?
  {
    let before = tier
    updateMemory(pressure, now: now)
    updateLink(linkPressure, now: now)
    guard tier != before else { return nil }
    return Change(from: before, to: tier, pressure: max(pressure, linkPressure))
  }

  private func target(_ pressure: Double) -> Tier {
    var target = Tier.normal
    for (index, threshold) in configuration.thresholds.enumerated() where pressure >= threshold {
      target = Tier(rawValue: index + 1)!
    }
    return target
  }

  private mutating func updateMemory(_ pressure: Double, now: MonotonicInstant) {
    let target = target(pressure)
    if target > memoryTier {
      belowSince = nil
      memoryTier = target
      return
    }
    guard pressure < configuration.recoverBelow && memoryTier > .normal else {
      belowSince = nil
      return
    }
    guard let since = belowSince else {
      belowSince = now
      return
    }
    guard now - since >= configuration.hold else { return }
    belowSince = now
    memoryTier = Tier(rawValue: memoryTier.rawValue - 1)!
  }

  private mutating func updateLink(_ pressure: Double, now: MonotonicInstant) {
    let target = min(target(pressure), configuration.linkCeiling)
    if target > linkTier {
      linkBelowSince = nil
      if let linkStepped, now - linkStepped < configuration.linkStep { return }
      linkStepped = now
      linkTier = Tier(rawValue: linkTier.rawValue + 1)!
      return
    }
    guard pressure < configuration.recoverBelow && linkTier > .normal else {
      linkBelowSince = nil
      return
    }
    let since = linkBelowSince ?? now
    linkBelowSince = since
    guard now - since >= configuration.linkRecover else { return }
    linkTier = .normal
    linkStepped = nil
    linkBelowSince = nil
  }
}
