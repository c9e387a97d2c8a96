import IngestAudioMix
import IngestCore
import IngestHLS
import IngestPOSIX
import IngestRTMP
import IngestSRT
import IngestSinks

/// Replays a dump (a file, a FIFO, standard input, a live encoder's output): scans its tracks,
/// builds the outputs with `RunBuilder` and runs the replay loop.
public enum ReplaySession {
  /// Bytes a dump read from a pipe or FIFO may keep for its track scan.
  public static let streamScanBytes = 1 << 20

  /// A track left out of the program because none of its samples can be carried.
  struct TrackRefusal {
    var kind: SampleKind
    /// The cause, as the reader or the ADTS check gave it.
    var reason: String

    /// One line for the status event, the summary and the terminal.
    var line: String { "\(kind) track refused, none of its samples sent: \(reason)" }
  }

  /// The track formats a dump announces near its start.
  ///
  /// A capture writes each track's format record just before that track's first sample, so the
  /// scan goes on past samples, until every kind has a format and a sample was seen, or
  /// `scanLimit` records were read.
  /// - Throws: `.empty` for a dump that ends without a sample, `.noTracks` for one without a
  ///   usable format record.
  /// The transport stream's PMT is built from this, so a track first announced later is refused.
  /// A track whose first sample cannot be carried at all is left out, since a program must not
  /// declare a stream it never sends: video in Annex B form (start codes instead of the length
  /// prefixes its format record announces), AAC behind ADTS headers that contradict the
  /// track's AudioSpecificConfig.
  public static func trackFormats(dumpPath: String, scanLimit: Int = 2000) throws(ReplayError)
    -> TrackFormats
  {
    try scanTracks(dumpPath: dumpPath, scanLimit: scanLimit).tracks
  }

  /// The tracks, and those left out with why.
  static func scanTracks(dumpPath: String, scanLimit: Int = 2000) throws(ReplayError)
    -> (tracks: TrackFormats, refusals: [TrackRefusal])
  {
    let source: FileByteSource
    do { source = try FileByteSource(path: dumpPath) } catch { throw .open(error) }
    var reader = DumpReader(source: source, checksum: .cpu)
    return try scanTracks(&reader, name: dumpPath, scanLimit: scanLimit)
  }

  static func scanTracks<Source: ByteSource>(
    _ reader: inout DumpReader<Source>, name: String, scanLimit: Int = 2000
  ) throws(ReplayError) -> (tracks: TrackFormats, refusals: [TrackRefusal]) {
    var tracks = TrackFormats()
    var records = 0
    var reachedEnd = false
    /// Kinds whose first sample was read (or refused by the reader).
    var sampled = Set<SampleKind>()
    var refusals: [TrackRefusal] = []
    var refusedVideoError: DumpError?
    /// Video without decode times (the DTS flag clear) is read on for `reorderCheckFrames`
    /// samples: a presentation time that steps back means reordered frames (B-frames) whose
    /// decode order the dump does not give, which no output can write in display order.
    var videoOrder = VideoOrderCheck()
    func refused(_ kind: SampleKind) -> Bool { refusals.contains { $0.kind == kind } }
    func refuse(_ kind: SampleKind, _ reason: String) {
      refusals.append(TrackRefusal(kind: kind, reason: reason))
      switch kind {
      case .video: tracks.video = nil
      case .audioApp: tracks.audioApp = nil
      case .audioMic: tracks.audioMic = nil
      }
    }
    // Also on to the first sample (a dump of format records alone is empty), and to the first
    // sample of each track, which tells whether the track can be carried at all.
    func complete() -> Bool {
      !sampled.isEmpty
        && SampleKind.allCases.allSatisfy { kind in
          refused(kind) || tracks.contains(kind) && sampled.contains(kind)
        }
        && (refused(.video) || videoOrder.isSettled)
    }
    while records < scanLimit && !complete() {
      let record: DumpRecord?
      do { record = try reader.next() } catch {
        if error.isRecoverable {
          if let kind = reader.refusedSampleKind, sampled.insert(kind).inserted,
            kind == .video, case .format(_, .annexBStartCodes) = error
          {
            refusedVideoError = error
            refuse(.video, error.description)
          }
          continue
        }
        if records > 0 { break }
        throw .dump(path: name, error)
      }
      guard let record else {
        reachedEnd = true
        break
      }
      records += 1
      switch record {
      case .format(.video, let format):
        if tracks.video == nil && !refused(.video) { tracks.video = format.video }
      case .format(.audioApp, .aac(let format)):
        if !refused(.audioApp) { tracks.audioApp = tracks.audioApp ?? format }
      case .format(.audioMic, .aac(let format)):
        if !refused(.audioMic) { tracks.audioMic = tracks.audioMic ?? format }
      case .sample(let header):
        if header.kind == .video && !refused(.video),
          let reason = videoOrder.check(pts: header.pts, hasDTS: header.dts != nil)
        {
          refuse(.video, reason)
        }
        guard sampled.insert(header.kind).inserted else { continue }
        if case .aac(let format)? = tracks.format(for: header.kind),
          let error = reader.withPayload({ adtsContradiction($0, format: format) })
        {
          refuse(header.kind, error.description)
        }
      case .format, .event: continue
      }
    }
    let sawSample = !sampled.isEmpty
    guard tracks.video != nil || tracks.audioApp != nil || tracks.audioMic != nil else {
      if let refusedVideoError { throw .dump(path: name, refusedVideoError) }
      if reachedEnd && !sawSample { throw .empty(path: name) }
      throw .noTracks(path: name)
    }
    if reachedEnd && !sawSample { throw .empty(path: name) }
    return (tracks, refusals)
  }

  /// Why an AAC sample's ADTS header cannot be removed: it announces another stream than
  /// `format`. Nil for a raw frame or a header that matches.
  private static func adtsContradiction(_ payload: UnsafeRawBufferPointer, format: AACFormat)
    -> FormatError?
  {
    guard let adts = ADTSPrefix(parsing: payload) else { return nil }
    do throws(FormatError) { try adts.validate(against: format) } catch { return error }
    return nil
  }

  /// Replays `dumpPath` (a file, a FIFO, or `-` for standard input) with `options` on `clock`.
  /// - Parameter onProgress: called about four times a second with the counters.
  /// - Parameters:
  ///   - clock: the clock the run is paced, timed and sent on.
  ///   - senders: where the outputs' senders run (`.threaded` for a command-line run).
  public static func run(
    dumpPath: String, options: ReplayOptions, clock: any PacingClock, senders: SenderStrategy,
    onProgress: ((PipelineSnapshot, TimeSpan) -> Void)? = nil
  ) throws(ReplayError) -> ReplaySummary {
    for target in options.targets { try refuseOverwritingInput(dumpPath, target: target) }
    let source: FileByteSource
    do { source = try FileByteSource(path: dumpPath) } catch { throw .open(error) }
    source.interrupted = { StopSignal.requested != nil }
    return try run(
      source: source, name: dumpPath, options: options, clock: clock, senders: senders,
      onProgress: onProgress)
  }

  /// Replays the dump that `source` reads. A regular file is scanned for its tracks with a
  /// second reader; anything else (a pipe from an encoder, a FIFO) is read once, the scan kept
  /// in a bounded buffer and replayed.
  public static func run(
    source: FileByteSource, name: String, options: ReplayOptions, clock: any PacingClock,
    senders: SenderStrategy, onProgress: ((PipelineSnapshot, TimeSpan) -> Void)? = nil
  ) throws(ReplayError) -> ReplaySummary {
    if source.isRegularFile {
      let scan = try scanTracks(dumpPath: source.path)
      return try run(
        reader: DumpReader(source: source, checksum: .cpu), tracks: scan.tracks,
        refusals: scan.refusals, scanBytes: 0, name: name, options: options,
        clock: clock, senders: senders, onProgress: onProgress)
    }
    let rewindable = RewindableSource(source, limit: streamScanBytes)
    var reader = DumpReader(source: rewindable, checksum: .cpu)
    let scan: (tracks: TrackFormats, refusals: [TrackRefusal])
    do { scan = try scanTracks(&reader, name: name) } catch {
      // The stop ended the wait for input, which the scan read as a short dump.
      if let signal = StopSignal.requested {
        throw .stoppedBeforeInput(path: name, signal: signal)
      }
      throw error
    }
    rewindable.rewind()
    return try run(
      reader: DumpReader(source: rewindable, checksum: .cpu), tracks: scan.tracks,
      refusals: scan.refusals, scanBytes: streamScanBytes, name: name, options: options,
      clock: clock, senders: senders, onProgress: onProgress)
  }

  private static func run<Source: ByteSource>(
    reader: DumpReader<Source>, tracks: TrackFormats, refusals: [TrackRefusal], scanBytes: Int,
    name dumpPath: String, options: ReplayOptions, clock: any PacingClock,
    senders: SenderStrategy, onProgress: ((PipelineSnapshot, TimeSpan) -> Void)?
  ) throws(ReplayError) -> ReplaySummary {
    if let unused = unusedGainsWarning(tracks: tracks, options: options) {
      options.warningLine?(unused)
    }
    let builder = RunBuilder(options: options, clock: clock, senders: senders)
    let outputs = try builder.outputs(tracks: tracks)
    let lanes = try builder.lanes(for: outputs, tracks: tracks, scanBytes: scanBytes)
    emitStart(
      lanes[0].reporter, pipeline: lanes[0].pipeline, dumpPath: dumpPath,
      sinks: outputs.map(\.sink), options: options)
    // After `start`: a live input's reports (its encoder's `started`) come after it.
    for lane in lanes { options.prepareReporter?(lane.reporter) }
    let replayer = Replayer(
      reader: reader, lanes: lanes, clock: clock, speed: options.effectiveSpeed,
      drainDeadline: builder.drainDeadline)
    replayer.onProgress = onProgress
    replayer.onOutputFailed = options.warningLine
    replayer.refusedKinds = Set(refusals.map(\.kind))
    for refusal in refusals {
      replayer.runReporter.emit("trackRefused") {
        $0.add("kind", refusal.kind.description)
        $0.add("reason", refusal.line)
      }
    }
    var summary = replayer.run()
    summary.minimumDeliveredFraction = options.minimumDeliveredFraction
    if let input = options.summaryFields?() {
      summary.extraFields = input.fields
      summary.inputFailure = input.failure
    }
    // A run without the video it announced did not deliver it; the input's own failure (an
    // encoder that died) comes first. A refused audio track is a warning of every output.
    let videoRefusal = refusals.first { $0.kind == .video }?.line
    summary.inputFailure = summary.inputFailure ?? videoRefusal
    for index in summary.outputs.indices {
      summary.outputs[index].warnings +=
        refusals.filter(\.kind.isAudio).map(\.line) + summary.outputs[index].producerNotes
    }
    if let skipped = options.skippedSourceVideoFrames?() {
      for index in summary.outputs.indices {
        summary.outputs[index].skippedSourceVideoFrames = skipped
      }
    }
    replayer.runReporter.emit("summary") { object in
      summary.fill(&object)
    }
    return summary
  }

  /// Why `--mix-gain` changes nothing in a run of `tracks` into `options.targets`: no output
  /// mixes, and the encoder did not either. Nil when the gains are used, or were not given.
  static func unusedGainsWarning(tracks: TrackFormats, options: ReplayOptions) -> String? {
    guard options.mixGainsGiven, options.mixedByEncoder == nil else { return nil }
    let mixes = options.targets.contains { target in
      OutputAudio(
        selection: options.audio, target: target, tracks: tracks, gains: options.mixGains
      ).isMix
    }
    guard !mixes else { return nil }
    let why =
      tracks.audioApp == nil || tracks.audioMic == nil
      ? "the input does not have both app and mic audio"
      : "no output mixes app and mic audio"
        + (options.audio.map { " (--audio \($0.rawValue))" } ?? "")
    return "--mix-gain has no effect: \(why)"
  }

  /// The largest sample payload a replay of a dump with `tracks` into `options.targets` takes:
  /// what the format allows, or what the reader and the rings hold at the budget, whichever is
  /// smaller (`ingest inspect` names the samples above it).
  public static func maximumSampleBytes(tracks: TrackFormats, options: ReplayOptions)
    throws(ReplayError) -> Int
  {
    let sinks = try options.targets.map { target throws(ReplayError) in
      try RunBuilder.makeSink(target, options: options, tracks: tracks)
    }
    // The mix's reservation, as the replay makes it, without loading libavcodec.
    var mixBytes = 0
    let mixes = options.targets.contains { target in
      OutputAudio(
        selection: options.audio, target: target, tracks: tracks, gains: options.mixGains,
        mixedByEncoder: options.mixedByEncoder
      ).isMix
    }
    if mixes, let app = tracks.audioApp, let mic = tracks.audioMic {
      mixBytes = AudioMixStage.ledgerBytes(app: app, mic: mic)
    }
    do {
      return try RunBuilder.plan(
        sinks, tracks: tracks, scanBytes: 0, mixBytes: mixBytes, options: options
      )
      .configuration
      .maximumSampleBytes
    } catch {
      throw .budget(error)
    }
  }

  private static func emitStart(
    _ reporter: StatusReporter, pipeline: Pipeline, dumpPath: String, sinks: [any OutputSink],
    options: ReplayOptions
  ) {
    reporter.emit("start") { object in
      object.add("dump", dumpPath)
      object.add("output", sinks[0].redactedDescription)
      if sinks.count > 1 {
        object.add(
          "outputs",
          sinks.enumerated().map { offset, sink in
            var output = JSONObject()
            output.add("output", offset + 1)
            output.add("to", sink.redactedDescription)
            return output
          })
      }
      object.add("speed", options.effectiveSpeed.description)
      object.add("buffer_ms", options.pipeline.bufferMilliseconds)
      object.add("max_sample_bytes", pipeline.maximumSampleBytes)
      object.add("budget", pipeline.budget.budget)
      object.add("overhead", pipeline.budget.overhead)
      object.add("ledger_fixed", pipeline.budget.fixedBytes)
      object.add(
        "tracks",
        SampleKind.allCases.filter { pipeline.tracks.contains($0) }.map { kind in
          var track = JSONObject()
          track.add("kind", kind.description)
          return track
        })
    }
  }
}
