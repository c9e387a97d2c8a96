import IngestCore

/// How captured timestamps are expressed.
///
/// Conversion is exact integer arithmetic (128-bit intermediates, round half up), never Double,
/// so a dump made twice from the same input is byte-identical.
public enum CaptureClock: Sendable, Hashable {
  /// Like an iOS host clock: `hostBase` plus the input time, in nanoseconds (timescale 10^9).
  case host
  /// The container's own timestamps, in the stream's time base (timescale = its denominator).
  case zero

  /// The fixed host-clock origin: 352 417.123456789 s, a plausible uptime, so dumps reproduce.
  public static let hostBaseNanoseconds: Int64 = 352_417_123_456_789

  /// The time of `ticks` in `timeBase`, shifted by `shift` nanoseconds.
  public func time(_ ticks: Int64, timeBase: DemuxedStream.TimeBase, shift: Int64 = 0)
    -> MediaTime
  {
    let numerator = Int128(timeBase.numerator)
    let denominator = Int128(timeBase.denominator)
    switch self {
    case .host:
      let nanoseconds = Self.divideRounded(
        Int128(ticks) * numerator * Int128(TimeSpan.nanosecondsPerSecond), denominator)
      return MediaTime(
        value: Int64(clamping: Int128(Self.hostBaseNanoseconds) + nanoseconds + Int128(shift)),
        timescale: MediaTime.nanosecondTimescale)
    case .zero:
      let shiftTicks = Self.divideRounded(
        Int128(shift) * denominator, Int128(TimeSpan.nanosecondsPerSecond))
      return MediaTime(
        value: Int64(clamping: Int128(ticks) * numerator + shiftTicks),
        timescale: timeBase.denominator)
    }
  }

  /// The time `nanoseconds` after the input's zero, in the clock's units for a stream of
  /// `timeBase` (host: nanoseconds plus the base; zero: the stream's denominator).
  public func time(nanoseconds: Int64, timeBase: DemuxedStream.TimeBase) -> MediaTime {
    switch self {
    case .host:
      MediaTime(
        value: Int64(clamping: Int128(Self.hostBaseNanoseconds) + Int128(nanoseconds)),
        timescale: MediaTime.nanosecondTimescale)
    case .zero:
      MediaTime(
        value: Int64(
          clamping: Self.divideRounded(
            Int128(nanoseconds) * Int128(timeBase.denominator),
            Int128(TimeSpan.nanosecondsPerSecond))),
        timescale: timeBase.denominator)
    }
  }

  /// Input time in nanoseconds (no base), used to order samples across streams.
  static func nanoseconds(_ ticks: Int64, timeBase: DemuxedStream.TimeBase) -> Int64 {
    Int64(
      clamping: divideRounded(
        Int128(ticks) * Int128(timeBase.numerator) * Int128(TimeSpan.nanosecondsPerSecond),
        Int128(timeBase.denominator)))
  }

  /// `value / divisor` rounded to nearest, halves towards +infinity; `divisor` > 0.
  static func divideRounded(_ value: Int128, _ divisor: Int128) -> Int128 {
    let doubled = value * 2 + divisor
    let quotient = doubled / (divisor * 2)
    return doubled % (divisor * 2) < 0 ? quotient - 1 : quotient
  }
}
