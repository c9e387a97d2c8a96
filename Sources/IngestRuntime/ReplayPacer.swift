import IngestCore

/// When each sample of a dump is due, as a live capture would have delivered it.
///
/// Each track is paced by its own clock, so a track whose clock jumps (the mic after an
/// interruption) does not stall or rush the others: a jump backwards or of more than
/// `jumpThreshold` is absorbed into that track's offset.
package struct ReplayPacer {
  private let speed: Double
  private let jumpThreshold = MediaTicks.seconds(5).value
  private var start: MonotonicInstant?
  private var origin: Int64 = 0
  private var last: [Int64?] = [nil, nil, nil]
  private var offset: [Int64] = [0, 0, 0]

  package init(speed: Double) { self.speed = speed }

  /// The clock time at which the sample is due.
  package mutating func due(kind: SampleKind, time: MediaTime, now: MonotonicInstant)
    -> MonotonicInstant
  {
    guard let ticks = TimeConversion.ticks90k(time) else { return now }
    let track = Int(kind.rawValue)
    guard let start else {
      start = now
      origin = ticks
      last[track] = ticks
      return now
    }
    if let previous = last[track] {
      let delta = ticks &- previous
      if delta < 0 || delta > jumpThreshold { offset[track] = offset[track] &- delta }
    } else {
      offset[track] = 0
    }
    last[track] = ticks
    let position = ticks &+ offset[track] &- origin
    let span = MediaTicks(max(0, position)).span
    return start + .nanoseconds(Int64(Double(span.nanoseconds) / speed))
  }
}
