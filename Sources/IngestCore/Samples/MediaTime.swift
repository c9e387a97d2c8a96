/// A CMTime-like rational timestamp: `value / timescale` seconds.
///
/// Only valid times (timescale > 0) are converted; see `Timeline` for the exact conversion to
/// 90 kHz ticks.
public struct MediaTime: Hashable, Sendable, CustomStringConvertible {
  /// Count of `timescale` units.
  public var value: Int64
  /// Units per second; must be positive for the time to be valid.
  public var timescale: Int32

  @inlinable public init(value: Int64, timescale: Int32) {
    self.value = value
    self.timescale = timescale
  }

  /// A time is usable only with a positive timescale (CMTime's "valid" flag).
  @inlinable public var isValid: Bool { timescale > 0 }

  public var description: String { "\(value)/\(timescale)" }
}

extension MediaTime {
  /// The timescale of a time in nanoseconds (a host clock's, as iOS delivers samples on).
  @inlinable public static var nanosecondTimescale: Int32 { Int32(TimeSpan.nanosecondsPerSecond) }
  /// The timescale of a time in 90 kHz ticks.
  @inlinable public static var ticks90kTimescale: Int32 { Int32(MediaTicks.perSecond) }
}
