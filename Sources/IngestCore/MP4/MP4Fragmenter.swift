/// Collects the samples of one fragment per track and writes them as `moof` + `mdat`
/// (ISO/IEC 14496-12, 8.8), after the `MP4InitSegment`.
///
/// ```
/// moof
/// ├─ mfhd             sequence_number, 1, 2, 3, ...
/// └─ traf             one per track that has samples in this fragment
///    ├─ tfhd          track_ID; default-base-is-moof (offsets count from moof's first byte)
///    ├─ tfdt          baseMediaDecodeTime (64 bits) of the first sample, in the track's timescale
///    └─ trun          data_offset, then per sample: duration, size, [flags, composition offset]
/// mdat                video samples, then app audio, then mic audio, each track's contiguous
/// ```
///
/// Memory: every track has a media buffer and a sample table of fixed capacity, reserved at
/// `init` and reused for every fragment; `append` copies the sample's bytes into its track's
/// buffer and returns false when either is full (the caller writes the fragment and appends
/// again). The `moof` is written into a reused array of its own. So nothing is allocated per
/// sample or per fragment once the first fragment's `moof` has grown its array.
///
/// A sample's duration is the next sample's decode time less its own; the last of a track in a
/// fragment lasts until the end time the caller names (the next fragment's first sample), else
/// as long as the track's previous sample (else `MP4Track.nominalSampleDuration`).
public struct MP4Fragmenter {
  /// The tracks, in `traf` and `mdat` order.
  public private(set) var tracks: [MP4Track]
  private var fragments: [TrackFragment]
  private var moof: MP4ByteWriter
  /// The last `mfhd` sequence number written.
  public private(set) var sequenceNumber: UInt32 = 0

  /// One sample of the fragment being collected.
  struct Sample {
    var size: UInt32
    var decodeTime: Int64
    var compositionOffset: UInt32
    var isSync: Bool
  }

  /// One track's part of the fragment being collected.
  struct TrackFragment {
    var media: [UInt8]
    let mediaCapacity: Int
    var samples: [Sample]
    let sampleCapacity: Int
    /// The duration of the track's last sample written, for a last sample with no end time.
    var lastDuration: UInt32
    /// Audio: the decode time of the track's last sample appended, in any fragment.
    var previousDecodeTime: Int64?

    init(mediaCapacity: Int, sampleCapacity: Int, nominalDuration: UInt32) {
      media = []
      media.reserveCapacity(mediaCapacity)
      samples = []
      samples.reserveCapacity(sampleCapacity)
      self.mediaCapacity = mediaCapacity
      self.sampleCapacity = sampleCapacity
      lastDuration = nominalDuration
    }
  }

  /// - Parameters:
  ///   - tracks: the tracks of the init segment.
  ///   - mediaCapacity: bytes of media one fragment may hold per track, for each track.
  ///   - sampleCapacity: samples one fragment may hold per track.
  public init(tracks: [MP4Track], mediaCapacity: (MP4Track) -> Int, sampleCapacity: Int) {
    precondition(sampleCapacity > 0)
    self.tracks = tracks
    fragments = tracks.map {
      TrackFragment(
        mediaCapacity: mediaCapacity($0), sampleCapacity: sampleCapacity,
        nominalDuration: $0.nominalSampleDuration)
    }
    moof = MP4ByteWriter(capacity: Self.moofBytes(tracks: tracks.count, samples: sampleCapacity))
  }

  /// The largest `moof` (plus the `mdat` header) for `tracks` tracks of `samples` samples each:
  /// 16 bytes of trun fields per sample, at most 76 bytes of boxes per track, and 32 for the
  /// moof and mfhd headers and the mdat header.
  public static func moofBytes(tracks: Int, samples: Int) -> Int {
    32 + tracks * (76 + 16 * samples)
  }

  /// Bytes of one entry of a track's sample table.
  public static var sampleStride: Int { MemoryLayout<Sample>.stride }

  /// Bytes held: every track's media buffer and sample table, and the `moof` array.
  public var bufferBytes: Int {
    fragments.reduce(0) {
      $0 + $1.mediaCapacity + $1.sampleCapacity * MemoryLayout<Sample>.stride
    } + Self.moofBytes(tracks: tracks.count, samples: fragments.first?.sampleCapacity ?? 0)
  }

  /// Whether the fragment being collected holds no sample.
  public var isEmpty: Bool { fragments.allSatisfy { $0.samples.isEmpty } }

  /// Samples in the fragment being collected for the track at `index`.
  public func sampleCount(track index: Int) -> Int { fragments[index].samples.count }

  /// Whether a sample of `byteCount` bytes fits the track's buffer at all (an empty one).
  public func canEverHold(track index: Int, byteCount: Int) -> Bool {
    byteCount <= fragments[index].mediaCapacity
  }

  /// Adds a sample to the fragment being collected.
  /// - Parameters:
  ///   - index: the track's index in `tracks`.
  ///   - bytes: the sample (AVCC access unit, raw AAC frame).
  ///   - decodeTime: in the track's timescale, from the start of the file; not below the
  ///     previous sample's.
  ///   - compositionOffset: presentation time less decode time, in the track's timescale.
  ///   - isSync: a sample decodable on its own (a video IDR/IRAP; every audio frame).
  /// - Returns: false, copying nothing, when the track's buffer or table has no room left.
  /// - Complexity: O(`bytes.count`), no allocation.
  public mutating func append(
    track index: Int, bytes: UnsafeRawBufferPointer, decodeTime: Int64,
    compositionOffset: UInt32, isSync: Bool
  ) -> Bool {
    guard fragments[index].samples.count < fragments[index].sampleCapacity,
      fragments[index].media.count + bytes.count <= fragments[index].mediaCapacity
    else { return false }
    var decodeTime = decodeTime
    if tracks[index].kind.isAudio {
      // Times converted from 90 kHz ticks to the sample rate round either way: a frame one
      // sample off its predecessor's end is on it, so that every frame lasts its nominal
      // duration and a fragment's last one (which has no successor yet) ends where the next
      // fragment's tfdt starts, without a sample of gap or overlap.
      let nominal = Int64(tracks[index].nominalSampleDuration)
      if let previous = fragments[index].previousDecodeTime,
        abs(decodeTime - (previous + nominal)) <= 1
      {
        decodeTime = previous + nominal
      }
      fragments[index].previousDecodeTime = decodeTime
    }
    fragments[index].media.append(contentsOf: bytes)
    fragments[index].samples.append(
      Sample(
        size: UInt32(bytes.count), decodeTime: decodeTime, compositionOffset: compositionOffset,
        isSync: isSync))
    return true
  }

  /// Gives the track at `index` a new format: the device rotated, and an HLS rendition goes on
  /// under a new initialization section. The buffers stay; the fragment must be empty, so that
  /// samples of two formats never share one.
  public mutating func setFormat(_ format: FormatDescription, track index: Int) {
    precondition(isEmpty, "a format changes between fragments")
    let track = tracks[index]
    tracks[index] = MP4Track(kind: track.kind, id: track.id, format: format)
    fragments[index].lastDuration = tracks[index].nominalSampleDuration
  }

  /// Forgets the fragment being collected (its file was closed before it could be written).
  public mutating func discardFragment() {
    for index in fragments.indices {
      fragments[index].media.removeAll(keepingCapacity: true)
      fragments[index].samples.removeAll(keepingCapacity: true)
    }
  }

  /// Writes the fragment collected (`moof` + `mdat`) through `emit` and starts the next one. Does
  /// nothing when the fragment is empty.
  /// - Parameters:
  ///   - endTime: for a track index, the decode time (its timescale) at which its last sample
  ///     ends, when the caller knows it (the first sample of the next fragment); else nil.
  ///   - emit: takes the fragment's bytes, in order, in a few calls.
  /// - Complexity: O(samples), no allocation once the `moof` array has grown.
  public mutating func writeFragment<E: Error>(
    endTime: (Int) -> Int64?, _ emit: (UnsafeRawBufferPointer) throws(E) -> Void
  ) throws(E) {
    guard !isEmpty else { return }
    sequenceNumber &+= 1
    writeMovieFragment(endTime: endTime)
    defer { discardFragment() }
    // Array's withUnsafeBytes rethrows untyped errors, so each call hands back a Result.
    try moof.bytes.withUnsafeBytes { header in Result { () throws(E) in try emit(header) } }.get()
    for fragment in fragments where !fragment.media.isEmpty {
      try fragment.media.withUnsafeBytes { media in Result { () throws(E) in try emit(media) } }
        .get()
    }
  }

  /// Writes `moof` and the `mdat` header into `moof`, with each trun's data offset pointing
  /// at its track's bytes in the `mdat`.
  private mutating func writeMovieFragment(endTime: (Int) -> Int64?) {
    moof.reset()
    let moofStart = moof.begin("moof")
    let mfhd = moof.begin("mfhd", version: 0, flags: 0)
    moof.u32(sequenceNumber)
    moof.end(mfhd)
    // Where each track's data_offset field is, patched once the moof's size is known.
    var dataOffsetFields = (0, 0, 0)
    for index in fragments.indices where !fragments[index].samples.isEmpty {
      let field = writeTrackFragment(index: index, end: endTime(index))
      switch index {
      case 0: dataOffsetFields.0 = field
      case 1: dataOffsetFields.1 = field
      default: dataOffsetFields.2 = field
      }
    }
    moof.end(moofStart)
    let moofSize = moof.bytes.count
    var mediaBytes = 0
    for index in fragments.indices where !fragments[index].samples.isEmpty {
      let field =
        index == 0 ? dataOffsetFields.0 : index == 1 ? dataOffsetFields.1 : dataOffsetFields.2
      moof.patch(u32: UInt32(moofSize + 8 + mediaBytes), at: field)
      mediaBytes += fragments[index].media.count
    }
    moof.u32(UInt32(8 + mediaBytes))
    moof.fourCC("mdat")
  }

  /// Writes one `traf`; returns the offset of its trun's data_offset field.
  private mutating func writeTrackFragment(index: Int, end: Int64?) -> Int {
    let track = tracks[index]
    let samples = fragments[index].samples
    let isVideo = track.kind == .video
    let traf = moof.begin("traf")
    let tfhd = moof.begin("tfhd", version: 0, flags: 0x02_0000)  // default-base-is-moof
    moof.u32(track.id)
    moof.end(tfhd)
    let tfdt = moof.begin("tfdt", version: 1, flags: 0)
    moof.u64(UInt64(max(0, samples[0].decodeTime)))
    moof.end(tfdt)
    // data-offset, sample duration and size; video adds sample flags and composition offsets.
    let flags: UInt32 = isVideo ? 0x000F01 : 0x000301
    let trun = moof.begin("trun", version: 0, flags: flags)
    moof.u32(UInt32(samples.count))
    let dataOffsetField = moof.bytes.count
    moof.u32(0)
    for position in samples.indices {
      let sample = samples[position]
      let duration: UInt32
      if position + 1 < samples.count {
        duration = Self.duration(from: sample.decodeTime, to: samples[position + 1].decodeTime)
      } else if let end, end > sample.decodeTime,
        !(track.kind.isAudio
          && abs(end - sample.decodeTime - Int64(track.nominalSampleDuration)) <= 1)
      {
        // (An audio end one sample off the nominal one is that, as `append` snaps the times.)
        duration = Self.duration(from: sample.decodeTime, to: end)
      } else if track.kind.isAudio, end != nil {
        duration = track.nominalSampleDuration
      } else {
        duration = fragments[index].lastDuration
      }
      if position + 1 == samples.count, duration > 0 { fragments[index].lastDuration = duration }
      moof.u32(duration)
      moof.u32(sample.size)
      if isVideo {
        // sample_depends_on 2 (an IDR) or 1 with sample_is_non_sync_sample.
        moof.u32(sample.isSync ? 0x0200_0000 : 0x0101_0000)
        moof.u32(sample.compositionOffset)
      }
    }
    moof.end(trun)
    moof.end(traf)
    return dataOffsetField
  }

  private static func duration(from start: Int64, to end: Int64) -> UInt32 {
    UInt32(clamping: max(0, end - start))
  }
}
