import IngestCore
import IngestPlatform

/// Writes the stream as HLS: segments cut at keyframes, a live media playlist, and a journal
/// that lets an interrupted recording be recovered (see docs/hls.md). One writer per directory:
/// `open` takes the directory's lock and refuses while another process holds it.
///
/// ```
/// DIR/
///   journal             append-only, one synced line per event: the truth for recovery
///   seg00000.ts ...     complete segments (written as .part, synced, then renamed)
///   seg00007.ts.part    the segment being written, through one bounded write buffer
///   index.m3u8          replaced atomically (write .tmp, sync, rename) after each segment
///   space.tmp           disk space held back for recovery after a full disk (HLSSpaceReserve)
/// ```
///
/// The segments are MPEG-TS (`Configuration.container`, the transport stream from the ring) or
/// fMP4: `segNNNNN.m4s` files of `moof` + `mdat` fragments after an initialization section
/// `initNNNNN.mp4` (`EXT-X-MAP`), made from the ring's access units (`HLSFragmentCollector`).
///
/// A TS segment starts at a video keyframe whose prefix holds PAT and PMT (its first packet
/// carries the PCR), once the running segment reached the target duration, or at the first
/// keyframe after a clock reset. Without video it starts at a unit of the PCR track whose prefix
/// holds PAT/PMT. An fMP4 segment starts at the same units (the ring's keyframes: IDR pictures
/// for H.264, IRAP for HEVC), and also at the first keyframe after a format change, under a new
/// initialization section and with a discontinuity.
public final class HLSSink: OutputSink {
  /// Settings of an HLS output.
  public struct Configuration: Sendable {
    /// The recording directory (created if missing).
    public var directory: String
    /// The playlist's file name inside `directory`.
    public var playlistName = "index.m3u8"
    /// Target segment duration in seconds.
    public var targetDuration = 2
    /// Segments in the live playlist; 0 lists every segment (an EVENT playlist).
    public var window = 6
    /// Bytes of the one write buffer segments stream through.
    public var bufferCapacity = 256 << 10
    /// MPEG-TS or fMP4 segments; `HLSContainer.preferred(for:)` picks by codec.
    public var container = HLSContainer.transportStream

    public init(directory: String) { self.directory = directory }
  }

  private struct OpenSegment {
    var name: String
    var writer: FileWriter
    var startDTS: Int64
    var lastDTS: Int64
    var lastDelta: Int64 = 0
    var timingUnits = 1
    var discontinuity: Bool
    var programDateTime: Int64
    var map: String?
    /// An H.264 recovery point (an open GOP's keyframe, no IDR) came in the segment.
    var sawRecoveryPoint = false
  }

  /// The transport stream for TS segments, access units for fMP4 ones.
  public var payloadFormat: PayloadFormat { configuration.container.payloadFormat }
  /// After the TS segments the directory already holds (`HLSContinuation`). An fMP4 segment's
  /// decode times restart at zero every run (`MP4DecodeClock`), so it is not moved.
  public var timelineStart: Int64? {
    configuration.container == .transportStream
      ? HLSContinuation.timelineStart(directory: configuration.directory) : nil
  }
  public let configuration: Configuration
  /// Called on the sender's thread after each segment is complete and listed.
  public var onSegment: ((HLSSegment) -> Void)?
  /// Called when `open` found an unfinished recording in the directory and recovered it.
  public var onRecovery: ((HLSRecoveryReport) -> Void)?
  /// The wall clock in milliseconds since the epoch (`EXT-X-PROGRAM-DATE-TIME`).
  public var wallClock: @Sendable () -> Int64 = { HLSDateTime.now() }
  /// The playlist as last written.
  public private(set) var playlist: HLSPlaylist
  /// Segments completed by this run.
  public private(set) var completedSegments = 0

  private var journal: HLSAppendFile?
  private var directoryLock: HLSDirectoryLock?
  private var reserve: HLSSpaceReserve?
  private var current: OpenSegment?
  private var timingKind = SampleKind.video
  private var nextIndex = 0
  private var discontinuityPending = false
  private var previous: HLSSegment?
  /// Bytes of this run's completed segments (synced), and of everything handed to writers.
  private var storedInSegments: Int64 = 0
  private var taken: Int64 = 0
  /// Units whose bytes may still wait in the open segment's write buffer: their track and where
  /// they end in `taken`, oldest first from `pendingHead`. At most the buffer's worth of
  /// 188-byte units, twice over before it is compacted.
  private var pending: [(kind: Int, end: Int64)] = []
  private var pendingHead = 0
  /// Warnings of the run so far, each once: a segment that found no keyframe to end at.
  public private(set) var warnings: [String] = []
  /// Units lost with a segment that could not be completed (a full disk), by track.
  private var lost = Array(repeating: 0, count: SampleKind.allCases.count)
  /// fMP4: the fragments being collected, made at `open`; nil for TS.
  private var fragments: HLSFragmentCollector?
  /// fMP4: the tracks the fragment buffers are planned for.
  private let plannedKinds: [SampleKind]
  /// fMP4: what the fragment buffers hold (`holdSamples(upTo:)`).
  private var fragmentCapacity = MP4FragmentCapacity()
  /// fMP4: the initialization section the open segment (and the next, unless a format changes)
  /// refers to; nil before the run's first.
  private var map: HLSMap?
  /// fMP4: video waits for a keyframe (after a unit too large for the fragment buffer).
  private var awaitingKeyframe = false
  /// An audio rendition of a set (`HLSRenditionSink`) cuts where the video did, not on its own
  /// clock, so that its segments line up with the video's.
  var followsCuts = false
  /// Following: the decode time from which the next cut point starts a segment.
  private(set) var pendingCut: Int64?
  /// Following: the segment the pending cut starts carries a discontinuity (the video's did).
  private var pendingCutDiscontinuity = false
  /// A segment that ran past twice the target was warned about.
  private var warnedLongSegment = false
  /// fMP4: a unit too large for its fragment buffer was warned about.
  private var refusedOversized = false

  /// - Parameters:
  ///   - configuration: where and how to record.
  ///   - tracks: the run's tracks, which size the fMP4 fragment buffers (all three when nil).
  public init(configuration: Configuration, tracks: TrackFormats? = nil) {
    self.configuration = configuration
    plannedKinds = tracks?.kinds ?? SampleKind.allCases
    playlist = HLSPlaylist(
      window: configuration.window, targetDuration: configuration.targetDuration)
  }

  public var bufferBytes: Int {
    switch configuration.container {
    case .transportStream:
      configuration.bufferCapacity + pendingCapacity * MemoryLayout<(Int, Int64)>.stride
    case .fragmentedMP4: bufferBytes(forSamplesUpTo: fragmentCapacity.largestSample)
    }
  }

  /// fMP4: the buffers with a video fragment buffer that takes samples of up to
  /// `maximumSampleBytes`; TS segments stream through the write buffer whatever the size.
  public func bufferBytes(forSamplesUpTo maximumSampleBytes: Int) -> Int {
    guard configuration.container == .fragmentedMP4 else { return bufferBytes }
    return configuration.bufferCapacity
      + MP4FragmentCapacity(largestSample: maximumSampleBytes).bufferBytes(kinds: plannedKinds)
  }

  /// fMP4: makes the video fragment buffer take samples of up to `maximumSampleBytes` from the
  /// next `open` on.
  public func holdSamples(upTo maximumSampleBytes: Int) {
    fragmentCapacity = MP4FragmentCapacity(largestSample: maximumSampleBytes)
  }

  private var pendingCapacity: Int { 2 * (configuration.bufferCapacity / 188 + 1) }

  /// What reached the segment files, so that a full disk does not count buffered bytes as sent.
  public var acceptedBytes: Int64? { storedInSegments + (current?.writer.bytesStored ?? 0) }

  /// The units whose bytes did not all reach a segment file, by track.
  public var unstoredUnits: [Int]? {
    var counts = lost
    if let fragments {
      // Every fragment is flushed once written: what is not in a file is being collected.
      for kind in counts.indices { counts[kind] += fragments.collected[kind] }
      return counts
    }
    let reached = acceptedBytes ?? 0
    for unit in pending[pendingHead...] where unit.end > reached { counts[unit.kind] += 1 }
    return counts
  }
  public var congestion: Double { 0 }
  public var redactedDescription: String {
    "hls:" + HLSFileSystem.join(configuration.directory, configuration.playlistName)
  }

  private var directory: String { configuration.directory }
  /// Elapsed ticks after which the next cut point ends the segment. Without video, PAT/PMT come
  /// every ~100 ms on either audio track, so cuts are accepted from 120 ms before the target on:
  /// segments then stay at or below it.
  private var cutAfter: Int64 {
    Int64(configuration.targetDuration) * MediaTicks.perSecond - (timingKind == .video ? 0 : 10_800)
  }

  public func open(tracks: TrackFormats) throws(SinkError) {
    close()
    timingKind = tracks.pcrKind ?? .video
    if configuration.container == .fragmentedMP4 {
      guard !tracks.kinds.isEmpty else {
        throw .unsupported(endpoint: directory, reason: "no track to record")
      }
      fragments = HLSFragmentCollector(tracks: tracks, capacity: fragmentCapacity)
      map = nil
      awaitingKeyframe = false
    } else {
      pending.reserveCapacity(pendingCapacity)
    }
    do {
      try HLSFileSystem.makeDirectories(directory)
      directoryLock = try HLSDirectoryLock(directory: directory)
      if try HLSRecovery.needsRecovery(directory: directory) {
        let report = try HLSRecovery.recover(lockedDirectory: directory, now: wallClock())
        onRecovery?(report)
      }
      try resume()
    } catch let error as HLSError {
      if case .file(let file) = error { throw SinkError(file: file) }
      throw .write(endpoint: directory, reason: error.description, retryable: false)
    } catch let error as FileError {
      throw SinkError(file: error)
    } catch {
      throw .write(endpoint: directory, reason: "\(error)", retryable: false)
    }
  }

  /// Continues after what the directory already holds: numbering goes on, earlier segments stay
  /// listed (as far as the window reaches), and the first new segment gets a discontinuity.
  private func resume() throws {
    let journalPath = HLSFileSystem.join(directory, HLSJournal.fileName)
    let earlier = try HLSFileSystem.readJournal(journalPath) ?? HLSJournal()
    // One playlist cannot switch between TS and fMP4 segments: EXT-X-MAP would apply to both.
    if let found = earlier.segments.last.flatMap({ HLSContainer.of(segmentName: $0.name) }),
      found != configuration.container
    {
      throw HLSError.containerMismatch(
        directory: directory, found: found, requested: configuration.container)
    }
    playlist = HLSPlaylist(
      window: configuration.window, targetDuration: configuration.targetDuration)
    nextIndex = 0
    for name in try HLSFileSystem.entries(of: directory) {
      if let index = HLSSegment.index(ofFileName: name) ?? HLSSegment.index(ofMapName: name) {
        nextIndex = max(nextIndex, index + 1)
      }
    }
    for segment in earlier.segments
    where HLSFileSystem.size(of: HLSFileSystem.join(directory, segment.name)) == segment.bytes {
      playlist.append(segment)
    }
    discontinuityPending = !playlist.segments.isEmpty || playlist.mediaSequence > 0
    previous = playlist.segments.last
    let file = try HLSAppendFile(path: journalPath)
    // End a line torn by an earlier kill, or the run line would be glued to it and lost.
    if earlier.endsWithTornLine { try file.append(HLSJournal.tornLineEnd) }
    try file.append(
      HLSJournal.runLine(
        playlist: configuration.playlistName, targetDuration: configuration.targetDuration,
        window: configuration.window))
    try HLSFileSystem.syncDirectory(directory)
    journal = file
    reserve = HLSSpaceReserve(directory: directory)
    reserve?.ensure(segments: listedSegments)
  }

  /// Following: the next segment starts at the first cut point at or after `dts`, with a
  /// discontinuity when the video segment it lines up with has one.
  func scheduleCut(at dts: Int64, discontinuity: Bool) {
    pendingCut = dts
    pendingCutDiscontinuity = discontinuity
  }

  /// The decode time of the open segment's first unit; nil before the first segment.
  var openSegmentStart: Int64? { current?.startDTS }

  /// Whether the open segment starts with a discontinuity.
  var openSegmentIsDiscontinuity: Bool { current?.discontinuity ?? false }

  /// Whether `unit`, a cut point, ends the open segment (or starts the first one).
  private func cuts(at unit: OutgoingUnit) -> Bool {
    guard followsCuts else {
      return current.map { unit.dts - $0.startDTS >= cutAfter || discontinuityPending } ?? true
    }
    return pendingCut.map { unit.dts >= $0 } ?? false
      || (current != nil && discontinuityPending)
  }

  /// Segments a recovered playlist would list (every run's, not just the live window).
  private var listedSegments: Int { playlist.mediaSequence + playlist.segments.count }

  public func write(_ unit: OutgoingUnit, bytes: UnsafeRawBufferPointer, now: MonotonicInstant)
    throws(SinkError)
    -> SinkWriteResult
  {
    if fragments != nil {
      let result = try writeFragmented(unit, bytes: bytes)
      if result == .written { noteWritten(unit) }
      return result
    }
    if unit.isDiscontinuity { discontinuityPending = true }
    let cutPoint = isCutPoint(unit, bytes: bytes)
    do {
      if let segment = current {
        if cutPoint && cuts(at: unit) {
          try finishSegment(duration: unit.dts - segment.startDTS, next: unit)
        }
      } else if cutPoint && cuts(at: unit) {
        try startSegment(unit, journalPrefix: "")
      } else {
        // Nothing before the first keyframe: a segment must start decodable.
        return .written
      }
      try current!.writer.write(bytes)
    } catch {
      throw SinkError(file: error)
    }
    taken += Int64(bytes.count)
    notePending(kind: Int(unit.kind.rawValue))
    noteWritten(unit)
    return .written
  }

  /// Keeps the open segment's timing (its last unit on the timing track) and warns once about
  /// a segment that found no keyframe to end at.
  private func noteWritten(_ unit: OutgoingUnit) {
    if unit.isRecoveryPoint, current != nil { current!.sawRecoveryPoint = true }
    // A following rendition's segments are as long as the video's, which warns for them.
    if !followsCuts, let segment = current, unit.dts - segment.startDTS > 2 * cutAfter,
      !warnedLongSegment
    {
      warnedLongSegment = true
      // Without keyframes to cut at, segments outgrow the target duration the playlist states.
      // Either the keyframes are that far apart, or they are H.264 recovery points (open
      // GOPs), which are no keyframes here; the segment says which it saw.
      let limit = 2 * configuration.targetDuration
      warnings.append(
        segment.sawRecoveryPoint
          ? "\(segment.name) runs past \(limit) s without a keyframe to cut at: the video's"
            + " keyframes are open-GOP recovery points, and H.264 segments start at IDR"
            + " pictures only (ask the encoder for IDRs rather than open-GOP recovery points)"
          : "\(segment.name) runs past \(limit) s without a keyframe to cut at: the video's"
            + " keyframes are more than \(limit) s apart (ask the encoder for one every"
            + " \(configuration.targetDuration) s or less)")
    }
    if unit.kind == timingKind, var segment = current, unit.dts > segment.lastDTS {
      segment.lastDelta = unit.dts - segment.lastDTS
      segment.lastDTS = unit.dts
      segment.timingUnits += 1
      current = segment
    }
  }

  /// Enters the unit just written and forgets those that reached the file, without allocating:
  /// the array is compacted in place once half of it is behind `pendingHead`.
  private func notePending(kind: Int) {
    let reached = acceptedBytes ?? 0
    while pendingHead < pending.count && pending[pendingHead].end <= reached { pendingHead += 1 }
    if pendingHead > 0 && pendingHead * 2 >= pending.count {
      pending.removeFirst(pendingHead)
      pendingHead = 0
    }
    pending.append((kind, taken))
  }

  /// A unit a segment can start with: a video keyframe (any audio unit without video), with PAT
  /// first.
  private func isCutPoint(_ unit: OutgoingUnit, bytes: UnsafeRawBufferPointer) -> Bool {
    let eligible = timingKind == .video ? unit.kind == .video && unit.isKeyframe : unit.kind.isAudio
    guard eligible,
      unit.prefixLength >= 2 * TSPacket.size, bytes.count >= TSPacket.size,
      bytes[0] == TSPacket.syncByte
    else { return false }
    return UInt16(bytes[1] & 0x1F) << 8 | UInt16(bytes[2]) == TSPacket.patPID
  }

  private func startSegment(_ unit: OutgoingUnit, journalPrefix: String) throws(FileError) {
    if pendingCut != nil && pendingCutDiscontinuity { discontinuityPending = true }
    var journalPrefix = journalPrefix
    if fragments != nil, map == nil || fragments!.hasWaitingFormat {
      journalPrefix += try writeMap()
    }
    let name = HLSSegment.fileName(index: nextIndex, container: configuration.container)
    // Dates follow the media durations so they never go back; the wall clock anchors the first
    // segment of a run, and a later one after a clock reset if it is ahead.
    var date: Int64
    if let previous {
      date = previous.programDateTime + previous.duration / 90
      if discontinuityPending { date = max(date, wallClock()) }
    } else {
      date = wallClock()
    }
    try journal?.append(
      journalPrefix
        + HLSJournal.openLine(
          name: name, discontinuity: discontinuityPending, programDateTime: date,
          map: map?.name))
    let writer = try FileWriter(
      path: HLSFileSystem.join(directory, name + ".part"),
      bufferCapacity: configuration.bufferCapacity)
    nextIndex += 1
    pendingCut = nil
    pendingCutDiscontinuity = false
    current = OpenSegment(
      name: name, writer: writer, startDTS: unit.dts, lastDTS: unit.dts,
      discontinuity: discontinuityPending, programDateTime: date, map: map?.name)
    discontinuityPending = false
  }

  /// Completes the open segment: sync, journal, rename, playlist; then starts the next one at
  /// `next` (the journal gets both lines in one synced write).
  private func finishSegment(duration: Int64, next: OutgoingUnit?) throws(FileError) {
    guard let open = current else { return }
    try open.writer.sync()
    try open.writer.close()
    current = nil
    storedInSegments += open.writer.bytesWritten
    pending.removeAll(keepingCapacity: true)
    pendingHead = 0
    let segment = HLSSegment(
      name: open.name, duration: max(duration, 1), bytes: open.writer.bytesWritten,
      discontinuity: open.discontinuity, programDateTime: open.programDateTime, map: open.map)
    let line = HLSJournal.segmentLine(segment)
    previous = segment
    if let next {
      try startSegment(next, journalPrefix: line)
    } else {
      try journal?.append(line)
    }
    try HLSFileSystem.rename(
      HLSFileSystem.join(directory, open.name + ".part"),
      to: HLSFileSystem.join(directory, open.name))
    playlist.append(segment)
    try writePlaylist()
    reserve?.ensure(segments: listedSegments + 1)
    completedSegments += 1
    onSegment?(segment)
  }

  private func writePlaylist() throws(FileError) {
    try HLSFileSystem.replace(
      HLSFileSystem.join(directory, configuration.playlistName), with: playlist.rendered)
    try HLSFileSystem.syncDirectory(directory)
  }

  /// Stops writing after a failure; the `.part` file, the journal and the space reserve stay for
  /// recovery.
  public func close() {
    if fragments != nil {
      // The fragment being collected never reached the file.
      for (kind, count) in fragments!.discardFragment().enumerated() { lost[kind] += count }
    }
    try? current?.writer.close()
    // What the open segment's buffer still held is lost with it; what reached its `.part` stays
    // for recovery.
    lost = unstoredUnits ?? lost
    pending.removeAll(keepingCapacity: true)
    pendingHead = 0
    if let open = current { storedInSegments += open.writer.bytesStored }
    taken = storedInSegments
    current = nil
    reserve = nil
    journal?.close()
    journal = nil
    directoryLock?.release()
    directoryLock = nil
  }

  /// Completes the last segment, writes the playlist with `EXT-X-ENDLIST` and ends the journal.
  public func finish() throws(SinkError) {
    guard let journal else { return }
    do {
      if let open = current {
        try fragments?.write(to: open.writer, endingAt: nil, kind: nil)
        let lone: Int64 = timingKind == .video ? 3000 : 1920
        let tail = open.timingUnits > 1 ? open.lastDelta : lone
        try finishSegment(duration: open.lastDTS - open.startDTS + tail, next: nil)
      }
      playlist.isEnded = true
      try writePlaylist()
      try journal.append(HLSJournal.endLine)
    } catch {
      throw SinkError(file: error)
    }
    journal.close()
    self.journal = nil
    reserve?.remove()
    reserve = nil
    directoryLock?.release()
    directoryLock = nil
  }

  // MARK: fMP4 segments

  /// Takes one access unit into the fMP4 segments: cuts a segment at a keyframe (the same cut
  /// points as TS segments), writes a fragment into the open segment at every other keyframe,
  /// and collects the unit into the fragment. The collector is mutated in place: a copy would
  /// copy its buffers.
  private func writeFragmented(_ unit: OutgoingUnit, bytes: UnsafeRawBufferPointer)
    throws(SinkError) -> SinkWriteResult
  {
    guard fragments!.carries(unit.kind) else { return .discarded(.notCarried) }
    if unit.isDiscontinuity { discontinuityPending = true }
    if let format = unit.format {
      // A new format needs a new initialization section, so a new segment: at the next cut
      // point, with a discontinuity.
      fragments!.wait(for: format, kind: unit.kind)
      discontinuityPending = true
    }
    let isVideo = unit.kind == .video
    let cutPoint = timingKind == .video ? isVideo && unit.isKeyframe : unit.kind.isAudio
    if awaitingKeyframe && isVideo && !unit.isKeyframe { return .discarded(.awaitingKeyframe) }
    let cuts = cutPoint && cuts(at: unit)
    guard current != nil || cuts else {
      // Nothing before the first keyframe: a segment must start decodable.
      return .discarded(.awaitingKeyframe)
    }
    // A unit in a format whose initialization section is not written yet waits for the cut
    // (an audio track that changed mid-segment loses its frames until the next keyframe).
    if fragments!.isWaiting(unit.kind) && !cuts { return .discarded(.awaitingKeyframe) }
    guard let decodeTime = fragments!.clock.decodeTime(of: unit) else {
      return .discarded(.awaitingKeyframe)
    }
    do throws(FileError) {
      if cuts {
        if let open = current {
          try fragments!.write(to: open.writer, endingAt: decodeTime, kind: unit.kind)
          try finishSegment(duration: unit.dts - open.startDTS, next: unit)
        } else {
          try startSegment(unit, journalPrefix: "")
        }
      } else if isVideo && unit.isKeyframe, let open = current {
        // One fragment per GOP: the segment's file holds all but the GOP being collected.
        try fragments!.write(to: open.writer, endingAt: decodeTime, kind: unit.kind)
      }
      if !fragments!.append(unit, bytes: bytes, decodeTime: decodeTime) {
        try fragments!.write(to: current!.writer, endingAt: decodeTime, kind: unit.kind)
        guard fragments!.append(unit, bytes: bytes, decodeTime: decodeTime) else {
          // Larger than the whole buffer (the pipeline admitted more than the sink was sized
          // for): the frames after it may reference it.
          if isVideo { awaitingKeyframe = true }
          noteRefused(unit.kind, bytes: bytes.count)
          return .discarded(.tooLarge)
        }
      }
    } catch {
      for (kind, count) in fragments!.discardFragment().enumerated() { lost[kind] += count }
      throw SinkError(file: error)
    }
    if isVideo { awaitingKeyframe = false }
    return .written
  }

  /// Warns once about a unit too large for its fragment buffer, naming both sizes.
  private func noteRefused(_ kind: SampleKind, bytes: Int) {
    guard !refusedOversized else { return }
    refusedOversized = true
    warnings.append(
      "a \(kind) sample of \(bytes) bytes does not fit the "
        + "\(fragmentCapacity.mediaBytes(kind))-byte fragment buffer and was dropped"
        + (kind == .video ? ", with the video frames after it until the next keyframe" : ""))
  }

  /// Writes the initialization section for the next segment (`initNNNNN.mp4`: written aside,
  /// synced, renamed into place and the directory synced, so that a journal line naming it
  /// never names a file a crash could lose) and makes it the map of the segments from here on.
  /// - Returns: the journal line that records it, to go before the next segment's `open`.
  private func writeMap() throws(FileError) -> String {
    let bytes = fragments!.initSection()
    let name = HLSSegment.mapFileName(index: nextIndex)
    try HLSFileSystem.replace(HLSFileSystem.join(directory, name), with: bytes)
    try HLSFileSystem.syncDirectory(directory)
    let written = HLSMap(name: name, bytes: Int64(bytes.count))
    map = written
    return HLSJournal.mapLine(written)
  }
}

extension HLSSink {
  /// Sends a `segment` status event per completed segment and an `hlsRecovered` event when an
  /// unfinished recording was recovered.
  public func setStatusHandler(_ handler: @escaping @Sendable (String, JSONObject) -> Void) {
    onSegment = { segment in
      var object = JSONObject()
      object.add("name", segment.name)
      object.add("duration_s", MediaTicks(segment.duration).inSeconds)
      object.add("bytes", segment.bytes)
      object.add("discontinuity", segment.discontinuity)
      handler("segment", object)
    }
    onRecovery = { report in
      var object = JSONObject()
      object.add("segments", report.segments)
      object.add("partials", report.partials.count)
      object.add("lost", report.lost.count)
      object.add("detail", report.description)
      handler("hlsRecovered", object)
    }
  }
}
