import IngestCore
import IngestPlatform

/// The fMP4 side of an HLS recording: access units collected into `moof` + `mdat` fragments by
/// `IngestCore`'s `MP4Fragmenter`, the same writer as the `.mp4` recording's, and handed to the
/// open segment's file one fragment per GOP.
///
/// ```
/// init00000.mp4   ftyp moov                  (MP4InitSegment, one per run and format change)
/// seg00000.m4s    moof mdat | moof mdat      one fragment per GOP, the segment's first at a
///                                            keyframe; a fragment is also cut when a track's
///                                            buffer fills
/// ```
///
/// Memory: the fragmenter's buffers, reserved when the collector is made, are reused for every
/// fragment; nothing is allocated per sample. A changed format waits (`wait(for:kind:)`) until
/// the next segment, whose new initialization section (`initSection()`) describes it.
struct HLSFragmentCollector {
  private var fragmenter: MP4Fragmenter
  /// What the buffers hold: a GOP of video, or the run's largest sample when larger.
  let capacity: MP4FragmentCapacity
  /// Decode times from the recording's first unit, never going back on a track.
  var clock = MP4DecodeClock()
  /// Index in the fragmenter's tracks by `SampleKind.rawValue`; -1 for a stream not carried.
  private var trackIndex = [Int](repeating: -1, count: SampleKind.allCases.count)
  /// Per track: a new format that takes effect with the next initialization section.
  private var waiting = [FormatDescription?](repeating: nil, count: SampleKind.allCases.count)
  /// Units in the fragment being collected, by track.
  private(set) var collected = [Int](repeating: 0, count: SampleKind.allCases.count)

  init(tracks: TrackFormats, capacity: MP4FragmentCapacity) {
    let tracks = MP4Track.tracks(for: tracks)
    self.capacity = capacity
    fragmenter = capacity.fragmenter(tracks: tracks)
    for (index, track) in tracks.enumerated() { trackIndex[Int(track.kind.rawValue)] = index }
  }

  /// Whether the recording carries `kind`.
  func carries(_ kind: SampleKind) -> Bool { trackIndex[Int(kind.rawValue)] >= 0 }

  /// Notes that `kind` changed format from its next unit on; the units until the next segment
  /// still belong to the old initialization section.
  mutating func wait(for format: FormatDescription, kind: SampleKind) {
    waiting[Int(kind.rawValue)] = format
  }

  /// Whether a track has a format that waits for the next initialization section.
  var hasWaitingFormat: Bool { waiting.contains { $0 != nil } }

  /// Whether `kind` has a format that waits for the next initialization section.
  func isWaiting(_ kind: SampleKind) -> Bool { waiting[Int(kind.rawValue)] != nil }

  /// The initialization section for the next segment, with every waiting format in force.
  /// Call between segments (with the fragment written).
  mutating func initSection() -> [UInt8] {
    for kind in SampleKind.allCases {
      let index = trackIndex[Int(kind.rawValue)]
      guard index >= 0, let format = waiting[Int(kind.rawValue)] else { continue }
      fragmenter.setFormat(format, track: index)
      waiting[Int(kind.rawValue)] = nil
    }
    return MP4InitSegment.bytes(tracks: fragmenter.tracks)
  }

  /// Adds a unit to the fragment being collected.
  /// - Parameter decodeTime: 90 kHz, from `clock`.
  /// - Returns: false, taking nothing, when its track's buffer has no room left.
  /// - Complexity: O(`bytes.count`), no allocation.
  mutating func append(_ unit: OutgoingUnit, bytes: UnsafeRawBufferPointer, decodeTime: Int64)
    -> Bool
  {
    let index = trackIndex[Int(unit.kind.rawValue)]
    let track = fragmenter.tracks[index]
    let offset = UInt32(clamping: max(0, track.ticks(from: unit.pts) - track.ticks(from: unit.dts)))
    guard
      fragmenter.append(
        track: index, bytes: bytes, decodeTime: track.ticks(from: decodeTime),
        compositionOffset: offset, isSync: unit.isKeyframe)
    else { return false }
    clock.advance(unit.kind, to: decodeTime)
    collected[Int(unit.kind.rawValue)] += 1
    return true
  }

  /// Writes the fragment collected into `writer` and flushes it to the file, so that a kill
  /// loses at most the fragment being collected. The track of `kind` (if any) ends its last
  /// sample at `end` (90 kHz); the others keep their last frame's duration.
  mutating func write(to writer: FileWriter, endingAt end: Int64?, kind: SampleKind?)
    throws(FileError)
  {
    guard !fragmenter.isEmpty else { return }
    let index = kind.map { trackIndex[Int($0.rawValue)] }
    let tracks = fragmenter.tracks
    // On a failure the counts stay, for `discardFragment` to report them lost.
    try fragmenter.writeFragment(
      endTime: { position in
        guard position == index, let end else { return nil }
        return tracks[position].ticks(from: end)
      }
    ) { (bytes) throws(FileError) in try writer.write(bytes) }
    try writer.flush()
    for position in collected.indices { collected[position] = 0 }
  }

  /// Forgets the fragment being collected; returns its units by track (lost with it).
  mutating func discardFragment() -> [Int] {
    let lost = collected
    for position in collected.indices { collected[position] = 0 }
    fragmenter.discardFragment()
    return lost
  }
}
