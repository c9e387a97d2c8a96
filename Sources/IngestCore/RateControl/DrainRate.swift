/// The rate at which a link drained an output's queue while data waited at both ends of an
/// interval (the link was the limit), smoothed: how SRT's and RTMP's pacing size what their
/// transport may hold. Intervals that start or end with nothing waiting measure what was
/// offered, not what the link can take, and change nothing.
public struct DrainRate: Sendable {
  /// Intervals shorter than this say little about a rate.
  public static let minimumInterval: TimeSpan = .milliseconds(50)
  /// Intervals longer than this (waiting for a delivery) spanned an outage.
  public static let maximumInterval: TimeSpan = .seconds(1)
  /// Weight of a new interval in the smoothed rate.
  public static let smoothing = 0.25

  /// Bytes per second drained while data waited, smoothed; nil before a measurement.
  public private(set) var bytesPerSecond: Double?
  private var last: (time: MonotonicInstant, delivered: Int64, waiting: Int)?
  /// Nothing has been delivered for longer than the maximum interval.
  private var inOutage = false

  public init() {}

  /// Forgets the measurements (a new connection).
  public mutating func reset() {
    bytesPerSecond = nil
    last = nil
    inOutage = false
  }

  /// Takes the output's figures at `now`: bytes delivered (acknowledged) since
  /// the connection was made and bytes waiting (not yet acknowledged). An interval shorter
  /// than `minimumInterval` waits for a longer one (a round trip, where a loss holds the
  /// acknowledgements back for one), and so does one in which nothing was delivered: the
  /// interval then spans the wait and what comes after it. One that grew past
  /// `maximumInterval` that way spanned an outage (a blackout, a handover): it is no reading
  /// of the link's rate, and the next interval starts from here. (A blackout's zero pulled the
  /// smoothed rate to a fifth of the link's; after a handover the SRT sink then let a trickle
  /// through while the ring grew to 1.5 s.)
  public mutating func observe(
    delivered: Int64, waiting: Int, now: MonotonicInstant,
    minimumInterval: TimeSpan = Self.minimumInterval,
    maximumInterval: TimeSpan = Self.maximumInterval
  ) {
    guard let last else {
      self.last = (now, delivered, waiting)
      return
    }
    let interval = now - last.time
    guard interval >= max(minimumInterval, Self.minimumInterval) else { return }
    // What was delivered never goes down: a figure below the last is no delivery (not a rate
    // of zero), and the level kept never falls, so coming back up to it is not counted as
    // delivered either. (SRT's figure, when it was the unique bytes sent less the buffer,
    // dipped by every message queued: read as zero, the dips of a blackout pulled the rate
    // from 2.6 Mb/s to 0.5 in 1.5 s; taken as the level, its rises read 11 Mb/s on a 1.3 Mb/s
    // link.)
    let level = max(delivered, last.delivered)
    if delivered <= last.delivered && last.waiting > 0 && waiting > 0 {
      // Nothing delivered while data waits: a loss's wait or an outage; see how it ends.
      if inOutage || interval > max(maximumInterval, minimumInterval) {
        inOutage = true
        self.last = (now, level, waiting)
      }
      return
    }
    if inOutage || interval > max(maximumInterval, 2 * minimumInterval) {
      // The first delivery after an outage is its backlog going out at once: no reading either.
      inOutage = false
      self.last = (now, level, waiting)
      return
    }
    if last.waiting > 0 && waiting > 0 {
      let rate = Double(level - last.delivered) / interval.inSeconds
      bytesPerSecond = bytesPerSecond.map { $0 + Self.smoothing * (rate - $0) } ?? rate
    }
    self.last = (now, level, waiting)
  }
}
