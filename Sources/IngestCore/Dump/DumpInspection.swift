/// What a whole dump holds: its tracks, per-track sample statistics, events and timestamp
/// anomalies. Built by reading the dump once with bounded memory (`ingest inspect`).
public struct DumpInspection: Sendable {
  /// Statistics of one track.
  public struct Track: Sendable {
    public var kind: SampleKind
    /// The first format announced (and how many times it changed).
    public var format: FormatDescription?
    public var formatChanges = 0
    public var samples = 0
    public var keyframes = 0
    public var bytes = 0
    public var largestSample = 0
    /// First and last presentation time, 90 kHz ticks from the stream's raw clock.
    public var firstPTS: Int64?
    public var lastPTS: Int64?
    /// Longest gap between consecutive decode times, ticks.
    public var largestGap: Int64 = 0
    /// Decode times that did not increase (count), and B-frame style samples (DTS ≠ PTS).
    public var nonIncreasingDTS = 0
    public var reordered = 0
    /// Clock jumps: backwards, or forward beyond one second for audio.
    public var clockJumps: [Anomaly] = []
    /// Samples whose PTS lies before their DTS.
    public var ptsBeforeDTS = 0
    /// AAC samples opening with an ADTS header (which a replay removes), and those among them
    /// whose header contradicts the track's AudioSpecificConfig (refused), with the first
    /// contradiction.
    public var adtsHeaders = 0
    public var adtsMismatches = 0
    public var adtsMismatch: FormatError?
    /// Video samples in Annex B form (start codes instead of length prefixes): refused.
    public var annexBSamples = 0
    /// Samples above `DumpInspection.sampleLimit` (refused as too large), and the largest.
    public var oversizedSamples = 0
    /// AAC samples stamped on a clock coarser than one frame (one unit of the timescale is
    /// longer than 1024 samples, so many frames share a value: a mic in whole seconds), and the
    /// coarsest such timescale. A replay places them from the sample count and rate.
    public var coarseClockSamples = 0
    public var coarsestTimescale: Int32?
    /// Video samples that follow a format record (the first, or a changed one) before any
    /// keyframe in that format: a decoder cannot start on them, so a replay drops them
    /// (`awaitingKeyframe`). How many format records they follow, and the index (in the
    /// track's samples) of the first such sample.
    public var framesBeforeKeyframe = 0
    public var formatsBeforeNonKeyframe = 0
    public var firstFrameBeforeKeyframe: Int?
    fileprivate var lastDTS: Int64?
    /// A format record came, and no sample after it yet was a keyframe.
    fileprivate var awaitingKeyframe = false
    /// The format record in force is counted in `formatsBeforeNonKeyframe`.
    fileprivate var formatCounted = false

    /// Presentation span in ticks.
    public var duration: Int64 {
      guard let first = firstPTS, let last = lastPTS else { return 0 }
      // Timestamps from a dump can sit at both ends of the range: saturate, never trap.
      let (span, overflow) = last.subtractingReportingOverflow(first)
      return overflow ? .max : span
    }
  }

  /// A timestamp anomaly: where (sample index of its track, byte offset) and how big.
  public struct Anomaly: Sendable, Equatable {
    public var sample: Int
    public var offset: Int64
    /// DTS change in ticks (negative: backwards).
    public var jump: Int64
  }

  public var tracks: [Track] = SampleKind.allCases.map { Track(kind: $0) }
  public var events: [DumpEvent] = []
  /// Records the reader rejected but could skip, with their errors (first 20 kept).
  public var invalidRecords = 0
  public var invalidExamples: [DumpError] = []
  /// Records of unknown type skipped for forward compatibility.
  public var skippedRecords = 0
  /// The error that ended reading early, if any.
  public var fatalError: DumpError?
  /// Bytes read.
  public var bytes: Int64 = 0
  /// The largest sample counted as acceptable (`Track.oversizedSamples` are above it).
  public var sampleLimit: Int

  /// Reads every record of a dump.
  /// - Parameter sampleLimit: the largest sample a replay takes (`Pipeline.maximumSampleBytes`
  ///   at the budget in question); larger ones are counted as oversized.
  public init<Source: ByteSource>(
    reading source: Source, sampleLimit: Int = SampleSizeLimit.format
  ) {
    self.sampleLimit = sampleLimit
    var reader = DumpReader(source: source)
    var formats = TrackFormats()
    while true {
      let record: DumpRecord?
      do { record = try reader.next() } catch {
        if error.isRecoverable {
          invalidRecords += 1
          if invalidExamples.count < 20 { invalidExamples.append(error) }
          if let kind = reader.refusedSampleKind, case .format(_, .annexBStartCodes) = error {
            tracks[Int(kind.rawValue)].annexBSamples += 1
          }
          continue
        }
        fatalError = error
        break
      }
      guard let record else { break }
      switch record {
      case .format(let kind, let format):
        let index = Int(kind.rawValue)
        if let existing = tracks[index].format, existing != format {
          tracks[index].formatChanges += 1
        }
        // As a replay does: the first format, or one that differs from the one in force,
        // starts at a keyframe.
        if kind == .video, formats.format(for: kind) != format {
          tracks[index].awaitingKeyframe = true
          tracks[index].formatCounted = false
        }
        if tracks[index].format == nil { tracks[index].format = format }
        formats.set(format, for: kind)
      case .event(let event):
        events.append(event)
      case .sample(let header):
        note(header, offset: reader.offset)
        if case .aac(let aac)? = formats.format(for: header.kind) {
          reader.withPayload { noteADTS($0, kind: header.kind, format: aac) }
          noteCoarseClock(header.pts.timescale, kind: header.kind, format: aac)
        }
      }
    }
    skippedRecords = reader.skippedRecords
    bytes = reader.offset
  }

  private mutating func noteADTS(
    _ payload: UnsafeRawBufferPointer, kind: SampleKind, format: AACFormat
  ) {
    guard let adts = ADTSPrefix(parsing: payload) else { return }
    let index = Int(kind.rawValue)
    tracks[index].adtsHeaders += 1
    do throws(FormatError) { try adts.validate(against: format) } catch {
      tracks[index].adtsMismatches += 1
      if tracks[index].adtsMismatch == nil { tracks[index].adtsMismatch = error }
    }
  }

  private mutating func noteCoarseClock(_ timescale: Int32, kind: SampleKind, format: AACFormat) {
    guard timescale > 0, Int64(timescale) * 1024 < Int64(format.sampleRate) else { return }
    let index = Int(kind.rawValue)
    tracks[index].coarseClockSamples += 1
    tracks[index].coarsestTimescale = min(tracks[index].coarsestTimescale ?? timescale, timescale)
  }

  private mutating func note(_ header: DumpSampleHeader, offset: Int64) {
    var track = tracks[Int(header.kind.rawValue)]
    defer { tracks[Int(header.kind.rawValue)] = track }
    track.samples += 1
    if header.payloadSize > sampleLimit { track.oversizedSamples += 1 }
    track.bytes += header.payloadSize
    track.largestSample = max(track.largestSample, header.payloadSize)
    if header.isKeyframe { track.keyframes += 1 }
    if track.awaitingKeyframe {
      if header.isKeyframe {
        track.awaitingKeyframe = false
      } else {
        if track.framesBeforeKeyframe == 0 { track.firstFrameBeforeKeyframe = track.samples - 1 }
        if !track.formatCounted { track.formatsBeforeNonKeyframe += 1 }
        track.formatCounted = true
        track.framesBeforeKeyframe += 1
      }
    }
    guard let pts = TimeConversion.ticks90k(header.pts),
      let dts = TimeConversion.ticks90k(header.dts ?? header.pts)
    else { return }
    if dts != pts { track.reordered += 1 }
    if pts < dts { track.ptsBeforeDTS += 1 }
    track.firstPTS = min(track.firstPTS ?? pts, pts)
    track.lastPTS = max(track.lastPTS ?? pts, pts)
    if let last = track.lastDTS {
      let delta = dts &- last
      if delta <= 0 { track.nonIncreasingDTS += 1 }
      let jumped =
        delta < -MediaTicks.perSecond / 10
        || (header.kind.isAudio && delta > MediaTicks.perSecond)
      if jumped {
        track.clockJumps.append(Anomaly(sample: track.samples - 1, offset: offset, jump: delta))
      } else {
        track.largestGap = max(track.largestGap, delta)
      }
    }
    track.lastDTS = dts
  }
}
