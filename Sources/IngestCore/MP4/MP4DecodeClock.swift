/// The decode times a fragmented MP4 gives the pipeline's units: 90 kHz, counted from the first
/// unit written (time 0), one base for every track, and never going back on a track.
///
/// A fragment's `tfdt` and `trun` durations cannot go back in time, but the pipeline's timeline
/// may (a clock reset, marked as a discontinuity). Such a reset moves the base instead: the
/// tracks continue one frame after the latest time written, so they stay in sync with each
/// other. The `.mp4` recording and the HLS fMP4 segments share this clock.
public struct MP4DecodeClock: Sendable {
  /// 90 kHz decode time of the first unit, which becomes time 0; nil before it.
  private var base: Int64?
  /// Added to every time after a clock reset.
  private var shift: Int64 = 0
  /// Per track (`SampleKind.rawValue`): the latest time entered with `advance`.
  private var latest = [Int64](repeating: Int64.min, count: SampleKind.allCases.count)

  public init() {}

  /// Forgets every time: the next unit becomes time 0.
  public mutating func reset() {
    base = nil
    shift = 0
    for index in latest.indices { latest[index] = Int64.min }
  }

  /// The decode time of `unit`, not before the latest of its track; nil for a unit from before
  /// time 0 (audio that precedes the first keyframe, a unit whose time slipped back).
  /// A discontinuity that would take the time back shifts every later time forward.
  /// - Complexity: O(1), no allocation.
  public mutating func decodeTime(of unit: OutgoingUnit) -> Int64? {
    if base == nil { base = unit.dts }
    var time = unit.dts - base! + shift
    if unit.isDiscontinuity, let newest = latest.max(), time < newest {
      // Continue from the latest time written, one frame on.
      shift += newest - time + (unit.kind == .video ? 3000 : 1920)
      time = unit.dts - base! + shift
    }
    guard time >= 0 else { return nil }
    return max(time, latest[Int(unit.kind.rawValue)])
  }

  /// Records that a unit of `kind` at `time` (from `decodeTime(of:)`) was written.
  public mutating func advance(_ kind: SampleKind, to time: Int64) {
    latest[Int(kind.rawValue)] = time
  }
}
