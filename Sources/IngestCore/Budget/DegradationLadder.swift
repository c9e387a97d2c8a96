/// Chooses the degradation tier from a pressure reading, with hysteresis so it never flaps.
///
/// Up: as soon as the pressure reaches a tier's threshold, the ladder jumps to the highest tier
/// reached. Down: only after the pressure stayed below `recoverBelow` for `holdNanoseconds`, and
/// then one tier at a time, each step with a fresh hold period.
public struct DegradationLadder: Sendable {
  /// Thresholds and hysteresis.
  public struct Configuration: Sendable, Equatable {
    /// Pressure (fraction of the budget) at which tiers 1, 2, 3 and 4 start.
    public var thresholds: [Double] = [0.80, 0.85, 0.90, 0.95]
    /// The pressure must stay below this to step down.
    public var recoverBelow: Double = 0.70
    /// How long the pressure must stay below `recoverBelow` before each step down.
    public var holdNanoseconds: Int64 = 5_000_000_000

    public init() {}
  }

  /// A tier change.
  public struct Change: Equatable, Sendable {
    public var from: Tier
    public var to: Tier
    public var pressure: Double
  }

  public let configuration: Configuration
  /// The current tier.
  public private(set) var tier: Tier = .normal
  private var belowSince: Int64?

  public init(configuration: Configuration = Configuration()) {
    precondition(configuration.thresholds.count == Tier.allCases.count - 1)
    self.configuration = configuration
  }

  /// Feeds a pressure reading taken at `now` (nanoseconds, monotonic).
  /// - Returns: the change, if the tier changed.
  public mutating func update(pressure: Double, now: Int64) -> Change? {
    var target = Tier.normal
    for (index, threshold) in configuration.thresholds.enumerated() where pressure >= threshold {
      target = Tier(rawValue: index + 1)!
    }
    if target > tier {
      belowSince = nil
      return move(to: target, pressure: pressure)
    }
    guard pressure < configuration.recoverBelow && tier > .normal else {
      belowSince = nil
      return nil
    }
    guard let since = belowSince else {
      belowSince = now
      return nil
    }
    guard now - since >= configuration.holdNanoseconds else { return nil }
    belowSince = now
    return move(to: Tier(rawValue: tier.rawValue - 1)!, pressure: pressure)
  }

  private mutating func move(to target: Tier, pressure: Double) -> Change {
    let change = Change(from: tier, to: target, pressure: pressure)
    tier = target
    return change
  }
}
