/// The path's own round trip (its distance), the baseline a queue is measured against: the
/// least round trip of the last `window`, which follows the path when it changes.
///
/// A minimum over a window alone keeps an old path's round trip for a whole window: after a
/// handover from 40 ms to 180 ms every millisecond of the new distance counted as queue for
/// 10 s, and the controller cut the rate to its floor on a link with room to spare. So:
///
/// - **An outage** (nothing gets through) that lasts `outageLength` may end on another
///   path: the window starts again when data gets through, once the figure has settled: at
///   least `settleTime`, then until it moved by less than 5 ms (or 3 %) over a fifth of
///   a second, at most `settleLimit`. The first
///   figures after a blackout are the old path's, still being smoothed toward the new one
///   (libsrt's took 0.7 s from 41 to 181 ms, through 59 and 133).
/// - **A step that persists**: the least round trip of the last second has stood above the
///   baseline by `stepMinimumMilliseconds` (and `stepShare` of it) for `stepHold`
///   without moving by more than `flatMilliseconds` (or `flatShare`): a queue of ours grows
///   while we send more than the link takes and drains once we send less, a new distance does
///   neither. And it got there at once: by that margin within `stepRise` (a new
///   route is there from one packet to the next; libsrt's smoothed figure follows in under a
///   second). A bottleneck's queue that built up over seconds while the rate climbed to the
///   link's capacity, and then stood there while the rate stayed at it, is not followed (the
///   step benchmark: 3 to 60 ms over 5 s, flat for 3 s, read as a new path, and the cut that
///   answered it undone). The window starts again from that level.
///
/// The caller leaves out figures that are no measurement (libsrt reports 100 ms until its first
/// round trip). Deterministic: it reads only the times it is given.
public struct PathRoundTrip: Sendable {
  /// Limits of the rules above.
  public struct Configuration: Sendable, Equatable {
    public var window: TimeSpan = .seconds(10)
    public var outageLength: TimeSpan = .seconds(1)
    public var settleTime: TimeSpan = .milliseconds(500)
    public var settleLimit: TimeSpan = .seconds(2)
    public var stepHold: TimeSpan = .seconds(3)
    public var stepMinimumMilliseconds = 20.0
    public var stepShare = 0.25
    public var flatMilliseconds = 10.0
    public var flatShare = 0.1
    public var stepRise: TimeSpan = .milliseconds(1500)

    public init() {}
  }

  /// Why the baseline started again.
  public enum Change: String, Sendable, Equatable {
    /// An outage long enough to end on another path.
    case outage
    /// The round trip stepped and stayed.
    case step
  }

  public let configuration: Configuration
  private var window: WindowedMinimum
  /// The least round trip of the last second: a queue's peaks are gone from it, a new
  /// distance is not.
  private var recent: WindowedMinimum
  /// Since when the last second's minimum stands above the baseline, and its range since.
  private var elevation: (since: MonotonicInstant, low: Double, high: Double)?
  /// The last second's minimum some `stepRise` ago (renewed once that old): what an
  /// elevation rose from.
  private var riseMark: (time: MonotonicInstant, level: Double)?
  /// The elevation now standing rose slowly (a queue that built up): no step until the round
  /// trip is back near the baseline.
  private var gradual = false
  private var outageSince: MonotonicInstant?
  private var settlesAt: MonotonicInstant = .distantPast
  /// While settling after an outage: until when at most, and the last figure compared.
  private var settling: (limit: MonotonicInstant, mark: (time: MonotonicInstant, value: Double)?)?
  /// How often the baseline started again for a path change (outage or step).
  public private(set) var changes = 0
  /// Whether the baseline was measured after a path change: from the new path's own first
  /// figures, or from a level that stood flat for seconds, so no queue of ours is in it.
  public private(set) var followsChange = false

  public init(configuration: Configuration = Configuration()) {
    self.configuration = configuration
    window = WindowedMinimum(window: configuration.window)
    recent = WindowedMinimum(window: .seconds(1), slots: 5)
  }

  /// Forgets everything (a new connection).
  public mutating func reset() {
    window.reset()
    recent.reset()
    elevation = nil
    riseMark = nil
    gradual = false
    outageSince = nil
    settlesAt = .distantPast
    settling = nil
    followsChange = false
  }

  /// Takes one reading at `now` (non-decreasing): the smoothed round trip in
  /// milliseconds (nil or not above 0 when unknown), and whether nothing gets through
  /// (`outage`: the round trip is then a stale figure and is not recorded). `followSteps`
  /// false leaves the step rule out: over TCP the sender's own congestion window keeps the
  /// bottleneck's queue standing and flat, so a flat step is no evidence of distance there.
  /// - Returns: why the baseline started again with this reading, if it did.
  @discardableResult
  public mutating func observe(
    _ roundTrip: Double?, at now: MonotonicInstant, outage: Bool = false, followSteps: Bool = true
  ) -> Change? {
    if outage {
      outageSince = outageSince ?? now
      elevation = nil
      return nil
    }
    var change: Change?
    if let since = outageSince {
      outageSince = nil
      if now - since >= configuration.outageLength {
        window.reset()
        recent.reset()
        elevation = nil
        riseMark = nil
        gradual = false
        settlesAt = now + configuration.settleTime
        settling = (now + configuration.settleLimit, nil)
        changes += 1
        followsChange = true
        change = .outage
      }
    }
    guard let roundTrip, roundTrip > 0, now >= settlesAt else { return change }
    if let (limit, mark) = settling, now < limit {
      // Still moving toward the new path's figure: not a baseline yet.
      guard let mark, now - mark.time >= Self.settleStep else {
        if mark == nil { settling = (limit, (now, roundTrip)) }
        return change
      }
      let tolerance = max(Self.settledMilliseconds, Self.settledShare * roundTrip)
      guard abs(roundTrip - mark.value) <= tolerance else {
        settling = (limit, (now, roundTrip))
        return change
      }
    }
    settling = nil
    window.add(roundTrip, at: now)
    recent.add(roundTrip, at: now)
    guard followSteps, let base = window.minimum(at: now), let level = recent.minimum(at: now)
    else {
      elevation = nil
      return change
    }
    let margin = max(configuration.stepMinimumMilliseconds, configuration.stepShare * base)
    let risenFrom = riseMark?.level ?? base
    if riseMark.map({ now - $0.time >= configuration.stepRise }) ?? true {
      riseMark = (now, level)
    }
    guard level > base + margin else {
      elevation = nil
      gradual = false
      return change
    }
    if elevation == nil, !gradual {
      // A new elevation: a step only if it came at once, not over seconds.
      gradual = level - risenFrom < margin
    }
    guard !gradual else { return change }
    var current = elevation ?? (now, level, level)
    current.low = min(current.low, level)
    current.high = max(current.high, level)
    let flat = max(configuration.flatMilliseconds, configuration.flatShare * current.low)
    if current.high - current.low > flat {
      // Still moving: a queue growing or draining, not a new distance (yet).
      current = (now, level, level)
    }
    elevation = current
    guard now - current.since >= configuration.stepHold else { return change }
    window.reset()
    window.add(current.low, at: now)
    elevation = nil
    riseMark = nil
    changes += 1
    followsChange = true
    return .step
  }

  /// How far apart two figures are compared while settling, and how little they may differ.
  /// (With 10 ms or 10 % in a tenth of a second, 151 ms passed for settled on its way to 181.)
  private static let settleStep: TimeSpan = .milliseconds(200)
  private static let settledMilliseconds = 5.0
  private static let settledShare = 0.03

  /// The path's round trip at `now`: the least of the window (nil before a reading).
  public func baseline(at now: MonotonicInstant) -> Double? {
    window.minimum(at: now)
  }
}
