import IngestCore

/// Turns what the RTMP sink wrote and the kernel's unacknowledged bytes into a `LinkEstimate`:
/// what the server acknowledged over about the last second, the bytes and the time that wait in
/// the socket, and the round trip.
///
/// It also bounds the socket's queue: TCP holds whatever it is given until it is delivered, and
/// the kernel's buffer (half a megabyte) is seconds of media on a slow link, all of it late.
/// Past `queueBoundSeconds` of the link's rate (on top of what is in flight), the sink holds
/// the next unit back, so the backlog waits in the ring, which drops whole frames by its
/// policy and which the rate controller sees.
struct RTMPLinkMeter {
  /// How much of the link's rate may wait in the socket beyond what is in flight.
  static let queueBoundSeconds = 0.5
  /// The least the socket may hold: a keyframe of a small stream goes out at once.
  static let floorBytes = 64 * 1024
  private static let window: TimeSpan = .seconds(1)

  /// Bytes handed to the socket since the connection was made.
  private(set) var writtenBytes: Int64 = 0
  private var drain = DrainRate()
  private var samples: [(time: MonotonicInstant, acknowledged: Int64)] = []
  private var lastProgress: (time: MonotonicInstant, acknowledged: Int64) = (.origin, 0)

  /// A new connection.
  mutating func reset(now: MonotonicInstant) {
    writtenBytes = 0
    drain.reset()
    samples.removeAll(keepingCapacity: true)
    lastProgress = (now, 0)
  }

  mutating func wrote(_ bytes: Int) { writtenBytes += Int64(bytes) }

  /// Takes the socket's unacknowledged bytes at `now`.
  mutating func observe(unacknowledged: Int, now: MonotonicInstant) {
    let acknowledged = max(0, writtenBytes - Int64(unacknowledged))
    if acknowledged > lastProgress.acknowledged || unacknowledged == 0 {
      lastProgress = (now, acknowledged)
    }
    drain.observe(delivered: acknowledged, waiting: unacknowledged, now: now)
    guard now - (samples.last?.time ?? .distantPast) >= DrainRate.minimumInterval else { return }
    if samples.count == 32 { samples.removeFirst() }
    samples.append((now, acknowledged))
  }

  /// Bytes per second the server acknowledged while data waited, smoothed.
  var drainBytesPerSecond: Double? { drain.bytesPerSecond }

  /// The time since the server last acknowledged anything while data waited.
  func sinceProgress(now: MonotonicInstant) -> TimeSpan { max(.zero, now - lastProgress.time) }

  /// Whether the socket holds more than the bound allows, `roundTripMilliseconds` in flight.
  func isQueueFull(unacknowledged: Int, roundTripMilliseconds: Double?) -> Bool {
    guard let rate = drainBytesPerSecond else { return false }
    let seconds = (roundTripMilliseconds ?? 0) / 1000 + Self.queueBoundSeconds
    return unacknowledged > max(Self.floorBytes, Int(rate * seconds))
  }

  /// The estimate at `now`, with the socket's figures.
  func estimate(
    now: MonotonicInstant, unacknowledged: Int, roundTripMilliseconds: Double?
  ) -> LinkEstimate {
    var delivered: Double?
    if let latest = samples.last,
      let oldest = samples.last(where: { latest.time - $0.time >= Self.window }) ?? samples.first,
      latest.time > oldest.time
    {
      delivered =
        Double(latest.acknowledged - oldest.acknowledged) * 8
        / (latest.time - oldest.time).inSeconds
    }
    // The time the bytes in the socket take to leave at the rate the link delivers.
    let rate = drainBytesPerSecond ?? delivered.map { $0 / 8 } ?? 0
    let queue = rate > 0 ? Double(unacknowledged) / rate * 1000 : 0
    var estimate = LinkEstimate(
      time: now, queueMilliseconds: queue, queueBytes: unacknowledged,
      roundTripMilliseconds: roundTripMilliseconds, deliveredBitsPerSecond: delivered,
      latencyMilliseconds: Self.queueBoundSeconds * 1000 * 2)
    estimate.stalledMilliseconds =
      unacknowledged > 0 ? sinceProgress(now: now).inMilliseconds : 0
    return estimate
  }
}
