/// Exact conversion of rational timestamps to the 90 kHz MPEG clock.
public enum TimeConversion {
  /// Ticks of the MPEG system clock's 90 kHz base per second.
  public static let ticksPerSecond: Int64 = 90_000

  /// `floor(value * 90000 / timescale)` computed exactly in 128 bits.
  ///
  /// Correct for every Int64 value at every positive Int32 timescale; the result is nil only when
  /// it does not fit in Int64 (possible only for timescales below 90000).
  public static func ticks90k(_ time: MediaTime) -> Int64? {
    guard time.isValid else { return nil }
    return Int64(exactly: wideTicks(time))
  }

  /// `floor(value * 90000 / timescale)` in 128 bits, for a valid (positive) timescale.
  static func wideTicks(_ time: MediaTime) -> Int128 {
    let product = Int128(time.value) * Int128(ticksPerSecond)
    let divisor = Int128(time.timescale)
    let quotient = product / divisor
    // Integer division truncates toward zero; the timeline needs the floor.
    return product % divisor < 0 ? quotient - 1 : quotient
  }

  /// Nanoseconds for a tick count, for pacing (exact for any tick count below about 292 years).
  public static func nanoseconds(ticks: Int64) -> Int64 {
    ticks.multipliedReportingOverflow(by: 100_000).partialValue / 9
  }
}
