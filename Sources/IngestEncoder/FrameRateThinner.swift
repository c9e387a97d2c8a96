import IngestCore

/// Decides which source frames to encode when a lower frame rate is asked for: frames are
/// dropped before the encoder, and the ones kept keep their true timestamps.
struct FrameRateThinner {
  /// The rate asked for; nil encodes every frame.
  private(set) var target: Double?
  private var nextDue: Int64?

  /// Asks for at most `fps` frames per second from now on (nil: all).
  mutating func setTarget(_ fps: Double?) {
    target = fps
    nextDue = nil
  }

  /// Whether the frame at `nanoseconds` is encoded.
  mutating func keep(at nanoseconds: Int64) -> Bool {
    guard let target else { return true }
    let interval = Int64(Double(TimeSpan.nanosecondsPerSecond) / target)
    // Source timestamps are rounded to their time base; a frame a little early is on time.
    let tolerance = min(interval / 10, 2_000_000)
    guard let due = nextDue else {
      nextDue = nanoseconds + interval
      return true
    }
    guard nanoseconds + tolerance >= due else { return false }
    // After a pause in the source, count from this frame rather than bursting to catch up.
    nextDue = due + interval > nanoseconds ? due + interval : nanoseconds + interval
    return true
  }
}
