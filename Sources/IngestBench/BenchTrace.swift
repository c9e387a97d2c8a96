import IngestCore

/// Memory and ring over time for one scenario, for the chart: at most `capacity` points,
/// preallocated; when full, every other point is dropped and the interval doubled, so a run of
/// any length fits without allocating while it is measured.
public struct BenchTrace: Sendable {
  /// One reading.
  public struct Point: Sendable, Equatable {
    /// Seconds since the start, on the scenario's clock.
    public var time: Double
    /// The ledger, bytes.
    public var ledger: Int
    /// Resident memory of the process, bytes.
    public var resident: Int
    /// Buffered duration of the ring against its limit (0...1).
    public var ringFill: Double
    /// The degradation tier (0...4).
    public var tier: Int

    public init(time: Double, ledger: Int, resident: Int, ringFill: Double, tier: Int) {
      self.time = time
      self.ledger = ledger
      self.resident = resident
      self.ringFill = ringFill
      self.tier = tier
    }
  }

  public private(set) var points: [Point] = []
  private let capacity: Int
  private var interval: TimeSpan
  private var next: MonotonicInstant = .distantPast

  /// - Parameters:
  ///   - interval: the time between readings at first.
  public init(capacity: Int = 1024, interval: TimeSpan) {
    self.capacity = max(2, capacity)
    self.interval = max(.nanoseconds(1), interval)
    points.reserveCapacity(self.capacity)
  }

  /// Points read back from a report.
  public init(points: [Point]) {
    self.points = points
    capacity = max(2, points.count)
    interval = .nanoseconds(1)
  }

  /// Whether a reading is due at `now`.
  public func isDue(_ now: MonotonicInstant) -> Bool { now >= next }

  /// Adds a reading taken at `now` (`time` is `now` in seconds from the start).
  public mutating func add(_ point: Point, now: MonotonicInstant) {
    if points.count == capacity {
      var kept = 0
      for index in stride(from: 0, to: points.count, by: 2) {
        points[kept] = points[index]
        kept += 1
      }
      points.removeLast(points.count - kept)
      interval = interval * 2
    }
    points.append(point)
    next = now + interval
  }
}
