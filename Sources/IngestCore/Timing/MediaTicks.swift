/// A count of ticks of the MPEG system clock's 90 kHz base: the unit of every timestamp on the
/// timeline (`Timeline`) and in MPEG-TS, and of durations measured between them.
///
/// Sums and differences saturate like `TimeSpan`'s. The conversions to and from other units
/// are named for how they round, because the code they replaced rounded differently at
/// different places (toward zero, down, to the nearest).
public struct MediaTicks: Hashable, Comparable, Sendable, CustomStringConvertible {
  /// Ticks per second: the package's one definition of the 90 kHz rate.
  @inlinable public static var perSecond: Int64 { 90_000 }
  /// Ticks per millisecond.
  @inlinable public static var perMillisecond: Int64 { perSecond / 1_000 }

  /// The tick count (negative for a time before the origin or a span backwards).
  public var value: Int64

  /// `value` ticks.
  @inlinable public init(_ value: Int64) { self.value = value }

  /// No ticks.
  public static var zero: MediaTicks { MediaTicks(0) }

  /// `count` seconds in ticks, saturating.
  public static func seconds(_ count: Int64) -> MediaTicks {
    MediaTicks(TimeSpan.saturatingProduct(count, perSecond))
  }

  /// `count` milliseconds in ticks, saturating.
  public static func milliseconds(_ count: Int64) -> MediaTicks {
    MediaTicks(TimeSpan.saturatingProduct(count, perMillisecond))
  }

  /// `span` in ticks, rounded down (toward negative infinity, as `TimeConversion.ticks90k` rounds
  /// a nanosecond time), computed exactly; saturates only in theory (a span in ticks is always
  /// smaller than in nanoseconds).
  public init(flooring span: TimeSpan) {
    let product = Int128(span.nanoseconds) * Int128(Self.perSecond)
    let divisor = Int128(TimeSpan.nanosecondsPerSecond)
    let quotient = product / divisor
    self.init(Int64(clamping: product % divisor < 0 ? quotient - 1 : quotient))
  }

  /// The ticks as a span of nanoseconds, truncated toward zero (as `ticks * 10^9 / 90000` is),
  /// computed exactly and saturating beyond about ±292 years.
  public var span: TimeSpan {
    let nanoseconds =
      Int128(value) * Int128(TimeSpan.nanosecondsPerSecond) / Int128(Self.perSecond)
    return TimeSpan(nanoseconds: Int64(clamping: nanoseconds))
  }

  /// The ticks in seconds, as a Double (for reports).
  public var inSeconds: Double { Double(value) / Double(Self.perSecond) }

  /// Whole seconds, truncated toward zero.
  public var wholeSeconds: Int64 { value / Self.perSecond }

  public var description: String { "\(value) ticks" }

  public static func < (lhs: MediaTicks, rhs: MediaTicks) -> Bool { lhs.value < rhs.value }

  /// The sum, saturating.
  public static func + (lhs: MediaTicks, rhs: MediaTicks) -> MediaTicks {
    MediaTicks(TimeSpan.saturatingSum(lhs.value, rhs.value))
  }

  /// The difference, saturating.
  public static func - (lhs: MediaTicks, rhs: MediaTicks) -> MediaTicks {
    MediaTicks(TimeSpan.saturatingDifference(lhs.value, rhs.value))
  }

  /// `ticks` repeated `factor` times, saturating.
  public static func * (ticks: MediaTicks, factor: Int64) -> MediaTicks {
    MediaTicks(TimeSpan.saturatingProduct(ticks.value, factor))
  }
}
