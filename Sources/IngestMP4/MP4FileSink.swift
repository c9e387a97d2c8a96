import IngestCore
import IngestPlatform

/// Records the run as a fragmented MP4 (`.mp4`) or QuickTime movie (`.mov`): the head
/// (`MP4InitSegment`) when the file is opened, then one `moof` + `mdat` fragment per GOP.
///
/// ```
/// ftyp moov | moof mdat | moof mdat | ...      each fragment: one GOP, every track's samples
///             ^ written and flushed to the file when the next keyframe arrives
/// ```
///
/// The file is locked (`flock`) while it is written, so a second run naming it, or a recovery,
/// is refused rather than emptying or cutting it; `ftyp` lists `MP4InitSegment.recordingBrand`,
/// by which recovery knows the file is ours.
///
/// Every fragment reaches the file (write(2)) as soon as it is complete, so a run killed with
/// SIGKILL loses at most the fragment being collected, and `ingest recover` cuts the torn one
/// away (`MP4Recovery`); a run stopped by a signal or the end of its input writes the last
/// fragment in `finish`, and the file is complete.
///
/// The ring holds access units (AVCC video, raw AAC). The three streams stay three tracks. The
/// file starts at the first video keyframe: units before it (and audio from before it) are
/// discarded as `.awaitingKeyframe`. Times are made relative to that keyframe's decode time,
/// one base for every track (`MP4DecodeClock`), so the tracks stay in sync; a clock reset that
/// would take a track's time back moves the base instead.
///
/// A format change mid-run (the device rotated: a new avcC; a new AAC configuration) is refused
/// with a non-retryable error: one file holds one sample description per track. The fragment
/// collected before it is written, so the file is complete up to the change.
///
/// Without video, a fragment holds about `audioFragmentSeconds` of audio. A fragment is also cut
/// when a track's buffer fills (a GOP longer than the buffer holds). The video buffer takes the
/// run's largest sample (`holdSamples(upTo:)`, planned in the memory ledger through
/// `bufferBytes(forSamplesUpTo:)`), so every sample the pipeline admits fits; one larger than
/// the whole buffer all the same (a sink never told the limit) is discarded as `.tooLarge` with
/// a warning naming its size, and the video frames after it until the next keyframe too, since
/// they may reference it.
public final class MP4FileSink: OutputSink {
  public let payloadFormat = PayloadFormat.accessUnits
  /// The file written.
  public let path: String
  /// ISO (`.mp4`) or QuickTime (`.mov`) brands.
  public let brand: MP4InitSegment.Brand
  /// Seconds of audio in one fragment when there is no video to cut at.
  public static let audioFragmentSeconds: Int64 = 2

  /// The file writer's buffer: fragments larger than it go to write(2) directly.
  static let writerBufferBytes = 64 << 10

  private let tracks: [MP4Track]
  /// What the fragment buffers hold: a GOP, or the run's largest sample (`holdSamples`).
  private var capacity = MP4FragmentCapacity()
  private var fragmenter: MP4Fragmenter
  private var writer: FileWriter?
  /// Index in `tracks` by `SampleKind.rawValue`; -1 for a stream the file does not carry.
  private var trackIndex = [Int](repeating: -1, count: SampleKind.allCases.count)
  private let videoIndex: Int?
  /// Decode times from the first unit written, never going back on a track.
  private var clock = MP4DecodeClock()
  /// The 90 kHz decode time of the first unit of the fragment being collected.
  private var fragmentStart: Int64?
  /// Dropping video until the next keyframe (before the first, after an oversized frame).
  private var awaitingKeyframe = true
  /// Units in the fragment being collected, by track (`SampleKind.rawValue`).
  private var collected = [Int](repeating: 0, count: SampleKind.allCases.count)
  /// Units taken that never reached the file, by track.
  private var lost = [Int](repeating: 0, count: SampleKind.allCases.count)
  /// Bytes earlier writers stored.
  private var stored: Int64 = 0

  /// - Parameters:
  ///   - path: the file to create (truncated if present, once its lock is held).
  ///   - tracks: the run's tracks, which size the fragment buffers.
  ///   - brand: `.quickTime` for a `.mov`.
  public init(path: String, tracks: TrackFormats, brand: MP4InitSegment.Brand = .iso) {
    self.path = path
    self.brand = brand
    self.tracks = MP4Track.tracks(for: tracks)
    fragmenter = capacity.fragmenter(tracks: self.tracks)
    videoIndex = self.tracks.firstIndex { $0.kind == .video }
    for (index, track) in self.tracks.enumerated() { trackIndex[Int(track.kind.rawValue)] = index }
  }

  /// The fragment buffers and the file writer's buffer.
  public var bufferBytes: Int { fragmenter.bufferBytes + Self.writerBufferBytes }

  /// The buffers with a video fragment buffer that takes samples of up to `maximumSampleBytes`.
  public func bufferBytes(forSamplesUpTo maximumSampleBytes: Int) -> Int {
    MP4FragmentCapacity(largestSample: maximumSampleBytes).bufferBytes(kinds: tracks.map(\.kind))
      + Self.writerBufferBytes
  }

  /// Makes the video fragment buffer take samples of up to `maximumSampleBytes` (before `open`).
  public func holdSamples(upTo maximumSampleBytes: Int) {
    let wanted = MP4FragmentCapacity(largestSample: maximumSampleBytes)
    guard wanted != capacity else { return }
    precondition(fragmenter.isEmpty, "fragment buffers are sized before the first sample")
    capacity = wanted
    fragmenter = wanted.fragmenter(tracks: tracks)
  }

  /// A sample refused for want of room, once per run: its size and the buffer's.
  public private(set) var warnings: [String] = []
  public var congestion: Double { 0 }
  public var redactedDescription: String { path }
  /// What reached the file, the head included.
  public var acceptedBytes: Int64? { stored + (writer?.bytesStored ?? 0) }
  /// Units taken that are not in the file: those of a fragment whose write failed, and those of
  /// the fragment being collected (until it is written).
  public var unstoredUnits: [Int]? { zip(lost, collected).map { $0 + $1 } }

  public func open(tracks formats: TrackFormats) throws(SinkError) {
    close()
    guard !tracks.isEmpty else {
      throw .unsupported(endpoint: path, reason: "no track to record")
    }
    let head = MP4InitSegment.bytes(tracks: tracks, brand: brand, marksRecording: true)
    do throws(FileError) {
      // Locked before it is truncated, for as long as it is written: a second run naming the
      // same file, or `ingest recover`, is refused and finds the recording as it was.
      let writer = try FileWriter(
        path: path, bufferCapacity: Self.writerBufferBytes, exclusive: true)
      self.writer = writer
      try head.withUnsafeBytes { bytes in Result { () throws(FileError) in try writer.write(bytes) }
      }
      .get()
      try writer.flush()
    } catch  where error.isLockedByAnother {
      throw .write(
        endpoint: path,
        reason:
          "another ingest process is writing this recording (it holds the file's lock); wait for"
          + " it to end or choose another name",
        retryable: false)
    } catch {
      throw SinkError(file: error)
    }
    clock.reset()
    awaitingKeyframe = true
    fragmentStart = nil
  }

  public func write(_ unit: OutgoingUnit, bytes: UnsafeRawBufferPointer, now: MonotonicInstant)
    throws(SinkError) -> SinkWriteResult
  {
    guard writer != nil else {
      throw .write(endpoint: path, reason: "not open", retryable: false)
    }
    let kind = Int(unit.kind.rawValue)
    let index = trackIndex[kind]
    guard index >= 0 else { return .discarded(.notCarried) }
    if let format = unit.format, format != tracks[index].format {
      throw .unsupported(
        endpoint: path,
        reason:
          "the \(unit.kind) format changed mid-run (\(Self.describe(format))); one .mp4 holds one "
          + "format per track, so the recording ends here: record to hls:DIR or a .ts file to "
          + "keep format changes")
    }
    let isVideo = index == videoIndex
    if awaitingKeyframe {
      guard videoIndex == nil || (isVideo && unit.isKeyframe) else {
        return .discarded(.awaitingKeyframe)
      }
    }
    // Audio from before the first keyframe, or a unit whose time slipped back.
    guard let decodeTime = clock.decodeTime(of: unit) else { return .discarded(.awaitingKeyframe) }
    let track = tracks[index]
    let offset = UInt32(clamping: max(0, track.ticks(from: unit.pts) - track.ticks(from: unit.dts)))

    let cutHere =
      isVideo
      ? unit.isKeyframe
      : videoIndex == nil
        && fragmentStart.map {
          decodeTime - $0 >= MediaTicks.seconds(Self.audioFragmentSeconds).value
        } ?? false
    if cutHere { try writeFragment(endingAt: decodeTime, track: index) }
    if !fragmenter.append(
      track: index, bytes: bytes, decodeTime: track.ticks(from: decodeTime),
      compositionOffset: offset, isSync: unit.isKeyframe)
    {
      try writeFragment(endingAt: decodeTime, track: index)
      guard
        fragmenter.append(
          track: index, bytes: bytes, decodeTime: track.ticks(from: decodeTime),
          compositionOffset: offset, isSync: unit.isKeyframe)
      else {
        // Larger than the whole buffer: the pipeline admitted more than the sink was sized for.
        if isVideo { awaitingKeyframe = true }
        if warnings.isEmpty {
          warnings.append(
            "a \(unit.kind) sample of \(bytes.count) bytes does not fit the \(capacity.mediaBytes(unit.kind))-byte fragment buffer and was dropped"
              + (isVideo ? ", with the video frames after it until the next keyframe" : ""))
        }
        return .discarded(.tooLarge)
      }
    }
    if isVideo || videoIndex == nil { awaitingKeyframe = false }
    if fragmentStart == nil { fragmentStart = decodeTime }
    clock.advance(unit.kind, to: decodeTime)
    collected[kind] += 1
    return .written
  }

  /// Writes the fragment collected and flushes it to the file. The track at `index` (if any)
  /// ends its last sample at `end` (90 kHz); the others keep their last frame's duration.
  private func writeFragment(endingAt end: Int64?, track index: Int?) throws(SinkError) {
    guard let writer, !fragmenter.isEmpty else { return }
    let tracks = self.tracks
    do {
      try fragmenter.writeFragment(
        endTime: { position in
          guard position == index, let end else { return nil }
          return tracks[position].ticks(from: end)
        }
      ) { (bytes) throws(FileError) in try writer.write(bytes) }
      try writer.flush()
    } catch {
      for kind in collected.indices {
        lost[kind] += collected[kind]
        collected[kind] = 0
      }
      throw SinkError(file: error)
    }
    for kind in collected.indices { collected[kind] = 0 }
    fragmentStart = nil
  }

  /// Writes what was collected and closes the file: after a refused format change or a
  /// failure, the file still ends with a whole fragment.
  public func close() {
    try? writeFragment(endingAt: nil, track: nil)
    retireWriter()
  }

  public func finish() throws(SinkError) {
    defer { retireWriter() }
    try writeFragment(endingAt: nil, track: nil)
    do { try writer?.close() } catch { throw SinkError(file: error) }
  }

  /// Closes the writer and ends its accounts: what the fragment being collected held is lost.
  private func retireWriter() {
    guard let writer else { return }
    try? writer.close()
    stored += writer.bytesStored
    self.writer = nil
    for kind in collected.indices {
      lost[kind] += collected[kind]
      collected[kind] = 0
    }
    fragmenter.discardFragment()
  }

  private static func describe(_ format: FormatDescription) -> String {
    switch format {
    case .h264(let h264):
      let size = h264.sps.first.flatMap { H264PictureSize(sps: $0) }
      return "H.264" + (size.map { " \($0.width)x\($0.height)" } ?? "")
    case .hevc(let hevc): return "HEVC \(hevc.sequence.width)x\(hevc.sequence.height)"
    case .aac(let aac): return "AAC \(aac.sampleRate) Hz, \(aac.channels) channels"
    }
  }
}
