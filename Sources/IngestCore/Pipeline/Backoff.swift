/// Capped exponential backoff with jitter for reconnect attempts.
///
/// Delays grow from `initial` by `multiplier` up to `maximum`; each is spread by ±`jitterPercent`
/// so that many senders that lost the same server do not come back in lockstep. The random source
/// is a seeded SplitMix64, so tests are deterministic.
public struct Backoff: Sendable {
  public var initial: TimeSpan = .milliseconds(500)
  public var maximum: TimeSpan = .seconds(10)
  public var multiplier: Int64 = 2
  public var jitterPercent: Int64 = 20
  private var attempt = 0
  private var state: UInt64

  public init(seed: UInt64 = 0x9E37_79B9_7F4A_7C15) { state = seed }

  /// How many delays were handed out since the last success.
  public var attempts: Int { attempt }

  /// The delay before the next attempt.
  public mutating func next() -> TimeSpan {
    var delay = initial.nanoseconds
    for _ in 0..<min(attempt, 32) where delay < maximum.nanoseconds { delay *= multiplier }
    delay = min(delay, maximum.nanoseconds)
    attempt += 1
    let spread = delay * jitterPercent / 100
    guard spread > 0 else { return .nanoseconds(delay) }
    let offset = Int64(randomBits() % UInt64(2 * spread + 1)) - spread
    return .nanoseconds(max(1, delay + offset))
  }

  /// A connection succeeded: start again from `initial`.
  public mutating func reset() { attempt = 0 }

  private mutating func randomBits() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
