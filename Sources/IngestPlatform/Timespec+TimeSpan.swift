import IngestCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension timespec {
  /// `span` as whole seconds and the nanoseconds past them, both truncated toward zero: what
  /// `clock_nanosleep` and `pthread_cond_timedwait` read for a span or an instant since the
  /// clock's origin that is not negative.
  public init(_ span: TimeSpan) {
    self.init(tv_sec: Int(span.wholeSeconds), tv_nsec: Int(span.subsecondNanoseconds))
  }

  /// The time this holds as a span (from the clock's origin for a time a clock returned),
  /// saturating.
  public var span: TimeSpan { .seconds(Int64(tv_sec)) + .nanoseconds(Int64(tv_nsec)) }
}
