/// Bit rates from byte counts, without overflow.
public enum BitRate {
  /// `bytes * 8` per second over `span` (at least a nanosecond), computed in 128 bits.
  ///
  /// `bytes * 8 * 10^9` overflows Int64 once `bytes` passes about 1.15 GB: an hour
  /// of a 3 Mb/s stream, or one half-second interval of a replay at full speed. Saturates at
  /// `Int64.max` for a rate that does not fit.
  public static func bitsPerSecond(bytes: Int64, over span: TimeSpan) -> Int64 {
    let rate =
      Int128(bytes) * 8 * Int128(TimeSpan.nanosecondsPerSecond) / Int128(max(span.nanoseconds, 1))
    return Int64(exactly: rate) ?? (rate < 0 ? .min : .max)
  }
}
