/// How many bytes libsrt's send buffer may hold before the sink holds the next message back:
/// what the link drains in half the latency, at the rate it was measured to drain while busy.
///
/// The send buffer's time span (`msSndBuf`, the spread of the buffered packets' timestamps)
/// misses a burst: a keyframe handed over at once spans a few milliseconds, yet on a slow link
/// its last packets leave long after their timestamps, arrive later than the latency allows and
/// are dropped by the receiver, a hole in the picture every decoder reports. Counted in bytes
/// against the drain rate, the same burst is held back and fed to libsrt as the link takes it;
/// what cannot go waits in the ring, which drops whole frames.
///
/// The rate is measured from the bytes acknowledged over intervals in which data was waiting
/// at both ends (the link was the limit), smoothed; before the first such interval the limit is
/// `floorBytes`, which the first acknowledgements lift within a few round trips.
struct SRTQueueLimit {
  /// The least the buffer may hold: eight 1316-byte messages, about 0.13 s at 650 kb/s.
  static let floorBytes = 8 * SRTMessageChunker.messageSize
  /// Intervals shorter than this say little about a rate.
  private static let minimumInterval: Int64 = 50_000_000
  /// Weight of a new interval in the smoothed rate.
  private static let smoothing = 0.25

  /// Bytes per second the link drained while data waited, smoothed; nil before a measurement.
  private(set) var drainBytesPerSecond: Double?
  private var last: (time: Int64, acknowledged: Int64, buffered: Int)?

  /// Forgets the measurements (a new connection).
  mutating func reset() {
    drainBytesPerSecond = nil
    last = nil
  }

  /// Takes libsrt's figures at `now` (nanoseconds): bytes acknowledged since the connection was
  /// made and bytes in the send buffer.
  mutating func observe(acknowledgedBytes: Int64, bufferedBytes: Int, now: Int64) {
    guard let last else {
      self.last = (now, acknowledgedBytes, bufferedBytes)
      return
    }
    let interval = now - last.time
    guard interval >= Self.minimumInterval else { return }
    if last.buffered > 0 && bufferedBytes > 0 {
      let rate = Double(max(0, acknowledgedBytes - last.acknowledged)) * 1e9 / Double(interval)
      drainBytesPerSecond = drainBytesPerSecond.map { $0 + Self.smoothing * (rate - $0) } ?? rate
    }
    self.last = (now, acknowledgedBytes, bufferedBytes)
  }

  /// The bytes the buffer may hold for a receiver latency of `latencyMilliseconds`.
  func limitBytes(latencyMilliseconds: Int) -> Int {
    guard let rate = drainBytesPerSecond else { return Self.floorBytes }
    let halfLatency = Double(max(latencyMilliseconds, 1)) / 2000
    return max(Self.floorBytes, Int(min(rate * halfLatency, Double(Int32.max))))
  }
}
