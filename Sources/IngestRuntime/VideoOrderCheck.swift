import IngestCore

/// Whether video samples without decode times (the DTS flag clear) come in display order.
///
/// A track whose presentation times step back is reordered (B-frames): its decode times are
/// not its presentation times, and without them every output would show the frames in the
/// wrong order (the timeline could only force the times to increase). Such a track is refused
/// by name, as Annex B input is; a producer must set each sample's DTS.
struct VideoOrderCheck {
  /// Video samples without a DTS looked at before the order is taken as display order: a
  /// reordered stream steps back within its first mini-GOP, a few frames in.
  static let frames = 32

  private var checked = 0
  private var stepsBack = 0
  private var newestPTS: MediaTime?
  /// Whether the first video sample gave its DTS (nothing to check) or enough were checked.
  private(set) var isSettled = false

  /// Takes the next video sample's times.
  /// - Returns: why the track is refused, or nil.
  mutating func check(pts: MediaTime, hasDTS: Bool) -> String? {
    guard !isSettled else { return nil }
    if hasDTS {
      isSettled = true
      return nil
    }
    defer {
      checked += 1
      if checked >= Self.frames { isSettled = true }
    }
    if let newest = newestPTS, Self.precedes(pts, newest) {
      // Once may be two frames delivered swapped (dropped later, `DropReason.outOfOrder`);
      // B-frames step back in every group of pictures.
      stepsBack += 1
      guard stepsBack >= 2 else { return nil }
      isSettled = true
      return
        "frames are reordered (presentation times step back, again at video sample \(checked + 1)) "
        + "but carry no decode time (the DTS flag is clear): their decode order is unknown, so "
        + "no output could show them in order; write each sample's DTS"
    }
    newestPTS = newestPTS.map { Self.precedes(pts, $0) ? $0 : pts } ?? pts
    return nil
  }

  /// Whether `a` is earlier than `b`, each in its own timescale (exact: no rounding to ticks).
  private static func precedes(_ a: MediaTime, _ b: MediaTime) -> Bool {
    Int128(a.value) * Int128(b.timescale) < Int128(b.value) * Int128(a.timescale)
  }
}
