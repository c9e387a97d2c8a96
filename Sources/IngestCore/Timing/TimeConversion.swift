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
    return wideTicks(time).int64
  }

  static func wideTicks(_ time: MediaTime) -> WideInt {
    WideInt(multiplying: time.value, by: ticksPerSecond).floorDivided(by: Int64(time.timescale))
  }

  /// Nanoseconds for a tick count, for pacing (exact for any tick count below about 292 years).
  public static func nanoseconds(ticks: Int64) -> Int64 {
    ticks.multipliedReportingOverflow(by: 100_000).partialValue / 9
  }
}
