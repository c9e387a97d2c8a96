/// A signed length of time in nanoseconds, on the monotonic clock or between media times.
///
/// Arithmetic saturates at `Int64.min` and `Int64.max` instead of trapping (as swift-nio's
/// `TimeAmount` does): a "forever" timeout (`.max`) added to a deadline, or a span multiplied
/// past 292 years, stays at the limit rather than taking the process down. Named so as not to
/// clash with the standard library's `Duration`, which is 128 bits wide and not saturating.
public struct TimeSpan: Hashable, Comparable, Sendable, CustomStringConvertible {
  /// Nanoseconds in a second: the package's one definition of the figure.
  ///
  /// The constants are computed properties rather than stored ones so that reading them is
  /// never a lazy global's first access: `StopSignal`'s handler converts a `timespec`.
  @inlinable public static var nanosecondsPerSecond: Int64 { 1_000_000_000 }
  /// Nanoseconds in a millisecond.
  @inlinable public static var nanosecondsPerMillisecond: Int64 { nanosecondsPerSecond / 1_000 }
  /// Nanoseconds in a microsecond.
  @inlinable public static var nanosecondsPerMicrosecond: Int64 {
    nanosecondsPerSecond / 1_000_000
  }

  /// The length in nanoseconds (negative for a span backwards).
  public var nanoseconds: Int64

  /// A span of `nanoseconds`.
  @inlinable public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

  /// No time at all.
  public static var zero: TimeSpan { TimeSpan(nanoseconds: 0) }
  /// The longest span, where sums saturate: "never" as a timeout.
  public static var max: TimeSpan { TimeSpan(nanoseconds: .max) }
  /// The most negative span.
  public static var min: TimeSpan { TimeSpan(nanoseconds: .min) }

  /// A span of `count` nanoseconds.
  public static func nanoseconds(_ count: Int64) -> TimeSpan { TimeSpan(nanoseconds: count) }

  /// A span of `count` microseconds, saturating.
  public static func microseconds(_ count: Int64) -> TimeSpan {
    TimeSpan(nanoseconds: saturatingProduct(count, nanosecondsPerMicrosecond))
  }

  /// A span of `count` milliseconds, saturating.
  public static func milliseconds(_ count: Int64) -> TimeSpan {
    TimeSpan(nanoseconds: saturatingProduct(count, nanosecondsPerMillisecond))
  }

  /// A span of `count` seconds, saturating.
  public static func seconds(_ count: Int64) -> TimeSpan {
    TimeSpan(nanoseconds: saturatingProduct(count, nanosecondsPerSecond))
  }

  /// `seconds` (a figure from an option or a measurement) in nanoseconds, truncated toward zero
  /// as `Int64(seconds * 1e9)` is; beyond the Int64 range it saturates instead of trapping, and
  /// NaN is zero.
  public init(seconds: Double) {
    self.init(nanoseconds: Self.truncating(seconds * Double(Self.nanosecondsPerSecond)))
  }

  /// `milliseconds` in nanoseconds, truncated toward zero, saturating; NaN is zero.
  public init(milliseconds: Double) {
    self.init(nanoseconds: Self.truncating(milliseconds * Double(Self.nanosecondsPerMillisecond)))
  }

  /// A standard library `Duration` in nanoseconds: the attoseconds below a nanosecond are
  /// truncated toward zero, and a duration beyond the Int64 range saturates.
  public init(_ duration: Duration) {
    let (seconds, attoseconds) = duration.components
    // The components share a sign, so truncating each truncates the whole toward zero. A
    // nanosecond holds 10^9 attoseconds, as a second holds 10^9 nanoseconds.
    let attosecondsPerNanosecond = Self.nanosecondsPerSecond
    self = .seconds(seconds) + .nanoseconds(attoseconds / attosecondsPerNanosecond)
  }

  /// The span in seconds, as a Double (for reports and rates).
  public var inSeconds: Double { Double(nanoseconds) / Double(Self.nanosecondsPerSecond) }

  /// The span in milliseconds, as a Double (for reports).
  public var inMilliseconds: Double {
    Double(nanoseconds) / Double(Self.nanosecondsPerMillisecond)
  }

  /// Whole milliseconds, truncated toward zero.
  public var wholeMilliseconds: Int64 { nanoseconds / Self.nanosecondsPerMillisecond }

  /// Whole seconds, truncated toward zero (a `timespec`'s `tv_sec`).
  public var wholeSeconds: Int64 { nanoseconds / Self.nanosecondsPerSecond }

  /// The nanoseconds past `wholeSeconds`, with the span's sign (a `timespec`'s `tv_nsec` for a
  /// span that is not negative).
  public var subsecondNanoseconds: Int64 { nanoseconds % Self.nanosecondsPerSecond }

  public var description: String { "\(nanoseconds) ns" }

  public static func < (lhs: TimeSpan, rhs: TimeSpan) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

  /// The sum, saturating.
  public static func + (lhs: TimeSpan, rhs: TimeSpan) -> TimeSpan {
    TimeSpan(nanoseconds: saturatingSum(lhs.nanoseconds, rhs.nanoseconds))
  }

  /// The difference, saturating.
  public static func - (lhs: TimeSpan, rhs: TimeSpan) -> TimeSpan {
    TimeSpan(nanoseconds: saturatingDifference(lhs.nanoseconds, rhs.nanoseconds))
  }

  /// The span backwards; `-.min` saturates to `.max`.
  public static prefix func - (span: TimeSpan) -> TimeSpan { .zero - span }

  /// `span` repeated `factor` times, saturating.
  public static func * (span: TimeSpan, factor: Int64) -> TimeSpan {
    TimeSpan(nanoseconds: saturatingProduct(span.nanoseconds, factor))
  }

  /// `span` repeated `factor` times, saturating.
  public static func * (factor: Int64, span: TimeSpan) -> TimeSpan { span * factor }

  /// `span` divided by `divisor` (not zero), truncated toward zero; `.min / -1` saturates.
  public static func / (span: TimeSpan, divisor: Int64) -> TimeSpan {
    let (quotient, overflow) = span.nanoseconds.dividedReportingOverflow(by: divisor)
    return TimeSpan(nanoseconds: overflow ? .max : quotient)
  }

  /// Adds `rhs` to `lhs`, saturating.
  public static func += (lhs: inout TimeSpan, rhs: TimeSpan) { lhs = lhs + rhs }

  /// Subtracts `rhs` from `lhs`, saturating.
  public static func -= (lhs: inout TimeSpan, rhs: TimeSpan) { lhs = lhs - rhs }
}

extension TimeSpan {
  static func saturatingSum(_ lhs: Int64, _ rhs: Int64) -> Int64 {
    let (sum, overflow) = lhs.addingReportingOverflow(rhs)
    return overflow ? (rhs > 0 ? .max : .min) : sum
  }

  static func saturatingDifference(_ lhs: Int64, _ rhs: Int64) -> Int64 {
    let (difference, overflow) = lhs.subtractingReportingOverflow(rhs)
    return overflow ? (rhs < 0 ? .max : .min) : difference
  }

  static func saturatingProduct(_ lhs: Int64, _ rhs: Int64) -> Int64 {
    let (product, overflow) = lhs.multipliedReportingOverflow(by: rhs)
    return overflow ? ((lhs < 0) == (rhs < 0) ? .max : .min) : product
  }

  /// `value` truncated toward zero as `Int64(value)` is, but clamped to the Int64 range (where
  /// `Int64(value)` traps) and zero for NaN.
  static func truncating(_ value: Double) -> Int64 {
    if value.isNaN { return 0 }
    // 2^63 is exactly representable; every Double below it converts.
    if value >= 9_223_372_036_854_775_808.0 { return .max }
    if value < -9_223_372_036_854_775_808.0 { return .min }
    return Int64(value)
  }
}
