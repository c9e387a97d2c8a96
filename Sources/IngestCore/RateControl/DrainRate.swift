/// The rate at which a link drained an output's queue while data waited at both ends of an
/// interval (the link was the limit), smoothed: how SRT's and RTMP's pacing size what their
/// transport may hold. Intervals that start or end with nothing waiting measure what was
/// offered, not what the link can take, and change nothing.
public struct DrainRate: Sendable {
  /// Intervals shorter than this say little about a rate (nanoseconds).
  public static let minimumInterval: Int64 = 50_000_000
  /// Weight of a new interval in the smoothed rate.
  public static let smoothing = 0.25

  /// Bytes per second drained while data waited, smoothed; nil before a measurement.
  public private(set) var bytesPerSecond: Double?
  private var last: (time: Int64, delivered: Int64, waiting: Int)?

  public init() {}

  /// Nothing got through for a while (a blackout): that interval is not the link's rate, and
  /// the next one starts with the next figures. The rate measured before stays.
  public mutating func interrupt() { last = nil }

  /// Forgets the measurements (a new connection).
  public mutating func reset() {
    bytesPerSecond = nil
    last = nil
  }

  /// Takes the output's figures at `now` (nanoseconds): bytes delivered (acknowledged) since
  /// the connection was made and bytes waiting (not yet acknowledged). An interval shorter
  /// than `minimumInterval` waits for a longer one (a round trip, where a loss holds the
  /// acknowledgements back for one).
  public mutating func observe(
    delivered: Int64, waiting: Int, now: Int64, minimumInterval: Int64 = Self.minimumInterval
  ) {
    guard let last else {
      self.last = (now, delivered, waiting)
      return
    }
    let interval = now - last.time
    guard interval >= max(minimumInterval, Self.minimumInterval) else { return }
    if last.waiting > 0 && waiting > 0 {
      let rate = Double(max(0, delivered - last.delivered)) * 1e9 / Double(interval)
      bytesPerSecond = bytesPerSecond.map { $0 + Self.smoothing * (rate - $0) } ?? rate
    }
    self.last = (now, delivered, waiting)
  }
}
