/// The smallest value seen over a sliding window of time: the baseline a queueing delay is
/// measured against (a round trip or a send-buffer time above its recent minimum is queue; the
/// minimum itself is distance).
///
/// The window is kept as `slots` buckets of equal length, so old values age out a
/// bucket at a time: a first reading taken before the link was measured (libsrt reports a
/// 100 ms round trip until its first acknowledgement) is forgotten after one window, and a
/// path whose distance grows is followed within one window. Fixed storage, made at `init`.
public struct WindowedMinimum: Sendable {
  private var minima: [Double]
  private var epochs: [Int64]
  private let bucketNanoseconds: Int64

  /// - Parameters:
  ///   - window: how far back the minimum looks (at least one bucket).
  ///   - slots: buckets in the window; more follow the window's end more closely.
  public init(window: TimeSpan, slots: Int = 10) {
    let count = max(slots, 1)
    bucketNanoseconds = max(window.nanoseconds / Int64(count), 1)
    minima = Array(repeating: .infinity, count: count)
    epochs = Array(repeating: .min, count: count)
  }

  /// Forgets every value (a new connection).
  public mutating func reset() {
    for index in minima.indices {
      minima[index] = .infinity
      epochs[index] = .min
    }
  }

  /// Records `value` seen at `time` (non-decreasing between calls).
  public mutating func add(_ value: Double, at time: MonotonicInstant) {
    let epoch = time.nanoseconds / bucketNanoseconds
    let slot = Int(epoch % Int64(minima.count))
    if epochs[slot] != epoch {
      epochs[slot] = epoch
      minima[slot] = value
    } else {
      minima[slot] = min(minima[slot], value)
    }
  }

  /// The smallest value recorded within the window ending at `time`; nil when there is none.
  public func minimum(at time: MonotonicInstant) -> Double? {
    let epoch = time.nanoseconds / bucketNanoseconds
    let oldest = epoch - Int64(minima.count) + 1
    var result = Double.infinity
    for index in minima.indices where epochs[index] >= oldest && epochs[index] <= epoch {
      result = min(result, minima[index])
    }
    return result.isFinite ? result : nil
  }
}
