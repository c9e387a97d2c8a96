/// Exact conversion of rational timestamps to the 90 kHz MPEG clock.
public enum TimeConversion {
  /// `floor(value * 90 kHz / timescale)` computed exactly in 128 bits.
  ///
  /// Correct for every Int64 value at every positive Int32 timescale; the result is nil only when
  /// it does not fit in Int64 (possible only for timescales below 90 kHz).
  public static func ticks90k(_ time: MediaTime) -> Int64? {
    guard time.isValid else { return nil }
    return Int64(exactly: wideTicks(time))
  }

  /// `floor(value * 90 kHz / timescale)` in 128 bits, for a valid (positive) timescale.
  static func wideTicks(_ time: MediaTime) -> Int128 {
    let product = Int128(time.value) * Int128(MediaTicks.perSecond)
    let divisor = Int128(time.timescale)
    let quotient = product / divisor
    // Integer division truncates toward zero; the timeline needs the floor.
    return product % divisor < 0 ? quotient - 1 : quotient
  }

  /// Nanoseconds for a tick count, for pacing: truncated toward zero, saturating beyond about
  /// 292 years (`MediaTicks.span`).
  public static func nanoseconds(ticks: Int64) -> Int64 { MediaTicks(ticks).span.nanoseconds }
}
