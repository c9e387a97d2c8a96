/// The largest sample payload a run takes: what a dump record can hold (8 MiB less the sample
/// header), or what the send ring can hold once packaged, whichever is smaller.
///
/// The dump reader's buffer and the rings come out of the same budget, and the reader's buffer
/// must hold the largest sample too, so a larger limit leaves less for the rings: the limit is
/// the largest size for which both fit.
public enum SampleSizeLimit {
  /// The largest sample payload a version 1 dump record holds.
  public static let format = DumpFormat.maximumPayloadSize - DumpFormat.sampleHeaderSize

  /// The smallest limit a run starts with: a keyframe of a 1080p screen at a usual bit rate
  /// (a few hundred kB) fits. Below it, a run would refuse most video and every audio frame
  /// as too large and write nothing, so it is refused at start with the budget it needs.
  public static let minimumUseful = 512 * 1024

  /// Bytes the ring needs for a sample of `payloadSize` bytes: its TS packets (the worst of
  /// the program's tracks, parameter sets and start codes included) or the raw access unit.
  public static func ringBytes(
    payloadSize: Int, tracks: TrackFormats, payloadFormat: PayloadFormat
  ) -> Int {
    guard payloadFormat == .transportStream else { return payloadSize }
    var largest = payloadSize
    for kind in SampleKind.allCases {
      guard let format = tracks.format(for: kind) else { continue }
      largest = max(
        largest,
        TSPacketizer.maximumPacketizedSize(payloadSize: payloadSize, kind: kind, format: format))
    }
    return largest
  }

  /// The largest payload up to `cap` whose packaged form fits in a ring of `arenaBytes` with
  /// `headroom` bytes in front of each unit; 0 when none does.
  /// - Complexity: O(log cap) packaged-size computations.
  public static func largest(
    cap: Int, arenaBytes: Int, headroom: Int, tracks: TrackFormats, payloadFormat: PayloadFormat
  ) -> Int {
    largest(cap: cap) { size in
      headroom + ringBytes(payloadSize: size, tracks: tracks, payloadFormat: payloadFormat)
        <= arenaBytes
    }
  }

  /// The largest payload up to `cap` for which a reader buffer of the payload plus
  /// `readerExtra` bytes, the sinks' buffers that keep a whole sample (`sinkBytes` of the
  /// payload size: what they hold beyond their fixed buffers) and `rings` rings (each with its
  /// `headroom`) all fit in `availableBytes`, the rings sharing what the rest leaves equally;
  /// 0 when none does.
  /// - Complexity: O(log cap) packaged-size computations.
  public static func largest(
    cap: Int, availableBytes: Int, readerExtra: Int, rings: Int, headroom: Int,
    tracks: TrackFormats, payloadFormat: PayloadFormat, sinkBytes: (Int) -> Int = { _ in 0 }
  ) -> Int {
    largest(cap: cap) { size in
      let arena = (availableBytes - size - readerExtra - sinkBytes(size)) / max(1, rings)
      return arena > 0
        && headroom + ringBytes(payloadSize: size, tracks: tracks, payloadFormat: payloadFormat)
          <= arena
    }
  }

  /// Binary search over the sizes: the fit is monotonic in the size.
  private static func largest(cap: Int, fits: (Int) -> Bool) -> Int {
    var low = 0
    var high = max(0, cap)
    while low < high {
      let middle = low + (high - low + 1) / 2
      if fits(middle) { low = middle } else { high = middle - 1 }
    }
    return low
  }
}
