/// A simulated network link for tests and the benchmark: a token bucket at a bit rate, and an
/// optional outage. Sinks consult it before taking a unit.
///
/// The bucket holds at most 100 ms of tokens (never less than one unit may borrow): a unit is
/// taken whenever the bucket is not in debt, and its bytes are then charged, so any unit size
/// passes at the long-run rate.
public struct LinkShaper: Sendable, Equatable {
  /// Bits per second; nil means unlimited.
  public var bitsPerSecond: Int64?
  /// An outage: the link takes nothing from `stallStart` for `stallDuration`, counted from the
  /// first unit offered.
  public var stallStart: TimeSpan?
  public var stallDuration: TimeSpan = .zero

  private var origin: MonotonicInstant?
  private var tokens: Double = 0
  private var lastRefill: MonotonicInstant?

  public init(
    bitsPerSecond: Int64? = nil, stallStart: TimeSpan? = nil, stallDuration: TimeSpan = .zero
  ) {
    self.bitsPerSecond = bitsPerSecond
    self.stallStart = stallStart
    self.stallDuration = stallDuration
  }

  /// Whether anything is shaped at all.
  public var isActive: Bool { bitsPerSecond != nil || stallStart != nil }

  /// Asks to send `bytes` at `now`.
  /// - Returns: nil when the unit may go now (and charges it), else the time to ask again.
  public mutating func admit(bytes: Int, now: MonotonicInstant) -> MonotonicInstant? {
    let origin = self.origin ?? now
    self.origin = origin
    if let stallStart {
      let start = origin + stallStart
      if now >= start && now < start + stallDuration { return start + stallDuration }
    }
    guard let rate = bitsPerSecond, rate > 0 else { return nil }
    let bytesPerNanosecond = Double(rate) / 8e9
    let elapsed = now - (lastRefill ?? now)
    tokens = min(tokens + Double(elapsed.nanoseconds) * bytesPerNanosecond, Double(rate) / 80)
    lastRefill = now
    guard tokens >= 0 else {
      return now + .nanoseconds(Int64((-tokens / bytesPerNanosecond).rounded(.up)))
    }
    tokens -= Double(bytes)
    return nil
  }
}
