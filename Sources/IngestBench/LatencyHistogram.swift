/// A fixed-memory histogram of durations in nanoseconds, for percentiles of millions of samples.
///
/// Buckets are logarithmic with 64 linear sub-buckets per power of two (relative error under
/// 1.6 %), like HdrHistogram: recording is a few instructions and never allocates, so timing the
/// capture path does not disturb it. The maximum is kept exactly.
///
/// ```
/// value < 64            bucket = value                    (exact)
/// 2^k <= value < 2^k+1  bucket = 64 * (k - 5) + (value >> (k - 6)) - 64 + 64
/// ```
public struct LatencyHistogram: Sendable {
  static let subBuckets = 64
  static let magnitudes = 58
  private var counts: [Int]
  /// Values recorded.
  public private(set) var count = 0
  /// The largest value recorded.
  public private(set) var maximum: Int64 = 0
  /// Sum of the values recorded.
  public private(set) var total: Int64 = 0

  /// Allocates every bucket up front.
  public init() {
    counts = [Int](repeating: 0, count: Self.subBuckets * Self.magnitudes)
  }

  static func bucket(_ value: Int64) -> Int {
    let v = UInt64(max(0, value))
    if v < UInt64(subBuckets) { return Int(v) }
    let magnitude = 63 - v.leadingZeroBitCount  // >= 6
    let shift = magnitude - 6
    return (magnitude - 5) * subBuckets + Int(v >> UInt64(shift)) - subBuckets
  }

  /// The smallest value that falls in `bucket`.
  static func lowerBound(_ bucket: Int) -> Int64 {
    if bucket < subBuckets { return Int64(bucket) }
    let magnitude = bucket / subBuckets + 5
    let mantissa = bucket % subBuckets + subBuckets
    return Int64(mantissa) << Int64(magnitude - 6)
  }

  /// Records one duration.
  public mutating func record(_ nanoseconds: Int64) {
    let index = min(Self.bucket(nanoseconds), counts.count - 1)
    counts[index] += 1
    count += 1
    total &+= nanoseconds
    if nanoseconds > maximum { maximum = nanoseconds }
  }

  /// The value below which `fraction` (0...1) of the recorded values fall (bucket midpoint,
  /// never above the maximum); 0 when empty.
  public func percentile(_ fraction: Double) -> Int64 {
    guard count > 0 else { return 0 }
    let rank = max(1, Int((fraction * Double(count)).rounded(.up)))
    var seen = 0
    for (index, bucketCount) in counts.enumerated() where bucketCount > 0 {
      seen += bucketCount
      if seen >= rank {
        let low = Self.lowerBound(index)
        let high = Self.lowerBound(index + 1)
        return min(maximum, (low + high - 1) / 2)
      }
    }
    return maximum
  }
}
