import IngestCore

/// The stream's own byte rate: the bytes of the units handed to the sink against the decode
/// time they span, so a backlog drained at once reads as the media's rate, not as a burst.
///
/// `SRTQueueLimit` starts a connection from it: before libsrt has acknowledged enough to
/// measure the link, the stream's rate is what the link must take anyway, and starting from a
/// floor of a few messages held the first seconds of a 50 Mb/s stream in the ring.
struct SRTStreamRate {
  /// The span after which the window restarts (90 kHz ticks, 1 s): the rate follows an
  /// encoder that changes its bitrate.
  static let windowTicks = MediaTicks.seconds(1).value
  /// A decode time further than this from the window's newest one (10 s) is a jump of the
  /// timeline, not media: the window restarts.
  static let jumpTicks: Int64 = 900_000
  /// The least span a partial window's bytes are spread over (a tenth of a second): a first
  /// keyframe alone, which spans no time, reads as about the rate it is sent at.
  static let startTicks = MediaTicks.milliseconds(100).value

  private var bytes = 0
  private var first: Int64?
  private var newest: Int64 = 0
  /// The rate of the last full window, bytes per second of media.
  private var measured: Double?

  /// Forgets what it saw (a new connection).
  mutating func reset() { self = SRTStreamRate() }

  /// Counts a unit of `count` bytes with decode time `dts` (90 kHz ticks).
  mutating func observe(bytes count: Int, dts: Int64) {
    guard let start = first, abs(dts - newest) <= Self.jumpTicks else {
      first = dts
      newest = dts
      bytes = count
      return
    }
    newest = max(newest, dts)
    bytes += count
    let span = newest - start
    if span >= Self.windowTicks {
      measured = Double(bytes) * Double(MediaTicks.perSecond) / Double(span)
      first = newest
      bytes = 0
    }
  }

  /// Bytes per second of media: the last full window's rate, or before one the bytes so far
  /// over the media they span (at least `startTicks`); nil before the first unit.
  ///
  /// Not a partial window spread over a whole second: the sink hands libsrt only what this
  /// rate allows, so an underestimate grew only as fast as the units it let through, and on a
  /// 300 ms round trip the first 2.5 s of a live run waited in the ring (which then read as
  /// congestion and cut the rate to its floor).
  var bytesPerSecond: Double? {
    if let measured { return measured }
    guard let start = first else { return nil }
    let span = max(newest - start, Self.startTicks)
    return Double(bytes) * Double(MediaTicks.perSecond) / Double(span)
  }
}
