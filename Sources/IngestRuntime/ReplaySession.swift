import IngestCore
import IngestHLS
import IngestPOSIX
import IngestRTMP
import IngestSRT
import IngestSinks

/// Sets up a whole run from options: reader, budget, sink, pipeline, sender, status, and replays.
public enum ReplaySession {
  /// libsrt's send buffer, entered in the ledger: a twelfth of what the budget leaves after the
  /// modelled overhead (2.5 MB by default, about 10 s of a 2 Mb/s stream), within 256 KiB...4 MiB.
  package static func srtSendBufferBytes(_ configuration: PipelineConfiguration) -> Int {
    let share = (configuration.budgetBytes - configuration.overheadBytes) / 12
    return min(4 << 20, max(256 << 10, share))
  }

  /// Bytes a dump read from a pipe or FIFO may keep for its track scan.
  public static let streamScanBytes = 1 << 20

  /// The track formats a dump announces near its start.
  ///
  /// A capture writes each track's format record just before that track's first sample, so the
  /// scan goes on past samples, until every kind has a format and a sample was seen, or
  /// `scanLimit` records were read.
  /// - Throws: `.empty` for a dump that ends without a sample, `.noTracks` for one without a
  ///   usable format record.
  /// The transport stream's PMT is built from this, so a track first announced later is refused.
  public static func trackFormats(dumpPath: String, scanLimit: Int = 2000) throws(ReplayError)
    -> TrackFormats
  {
    let source: FileByteSource
    do { source = try FileByteSource(path: dumpPath) } catch { throw .open(error) }
    var reader = DumpReader(source: source, checksum: .cpu)
    return try trackFormats(&reader, name: dumpPath, scanLimit: scanLimit)
  }

  static func trackFormats<Source: ByteSource>(
    _ reader: inout DumpReader<Source>, name: String, scanLimit: Int = 2000
  ) throws(ReplayError) -> TrackFormats {
    var tracks = TrackFormats()
    var records = 0
    var sawSample = false
    var reachedEnd = false
    // Also on to the first sample: a dump of format records alone is empty.
    while records < scanLimit && !(sawSample && SampleKind.allCases.allSatisfy(tracks.contains)) {
      let record: DumpRecord?
      do { record = try reader.next() } catch {
        if error.isRecoverable { continue }
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
        if tracks.video == nil { tracks.video = format.video }
      case .format(.audioApp, .aac(let format)): tracks.audioApp = tracks.audioApp ?? format
      case .format(.audioMic, .aac(let format)): tracks.audioMic = tracks.audioMic ?? format
      case .sample: sawSample = true
      case .format, .event: continue
      }
    }
    if reachedEnd && !sawSample { throw .empty(path: name) }
    guard tracks.video != nil || tracks.audioApp != nil || tracks.audioMic != nil else {
      throw .noTracks(path: name)
    }
    return tracks
  }

  /// The audio track an RTMP output carries: the one asked for, else app audio when the dump
  /// has it, else the mic.
  static func rtmpAudio(_ options: ReplayOptions, tracks: TrackFormats) -> SampleKind {
    options.rtmpAudio ?? (tracks.audioApp != nil ? .audioApp : .audioMic)
  }

  /// Creates the sink for `target`; `threaded` says whether it must be sent from its own
  /// thread (a network output, whose connects and sends block).
  public static func makeSink(
    _ target: OutputTarget, options: ReplayOptions, tracks: TrackFormats
  ) throws(ReplayError) -> (sink: any OutputSink, threaded: Bool) {
    switch target {
    case .file(let path, let shaper): return (FileSink(path: path, shaper: shaper), false)
    case .null(let shaper): return (NullSink(shaper: shaper), false)
    case .srt(let url):
      let srt: SRTOptions
      do { srt = try SRTOptions(parsing: url) } catch { throw .usage("--to: \(error)") }
      return (SRTSink(options: srt, sendBufferBytes: srtSendBufferBytes(options.pipeline)), true)
    case .rtmp(let url):
      let target: RTMPTarget
      do { target = try RTMPTarget(url: url) } catch { throw .usage("--to: \(error)") }
      if let reason = RTMPSink.refusal(of: tracks, target: target) { throw .output(reason) }
      let audio = rtmpAudio(options, tracks: tracks)
      let tls = RTMPSink.Options(
        verifyTLSPeer: options.rtmpsVerifyPeer, caFile: options.rtmpsCAFile)
      return (RTMPSink(target: target, audio: audio, options: tls), true)
    case .hls(let directory, let playlist):
      var configuration = HLSSink.Configuration(directory: directory)
      configuration.playlistName = playlist
      configuration.targetDuration = options.segmentSeconds
      configuration.window = options.hlsWindow
      return (HLSSink(configuration: configuration), false)
    }
  }

  /// Replays `dumpPath` (a file, a FIFO, or `-` for standard input) with `options` on `clock`.
  /// - Parameter onProgress: called about four times a second with the counters.
  public static func run(
    dumpPath: String, options: ReplayOptions, clock: any PacingClock,
    onProgress: ((PipelineSnapshot, Int64) -> Void)? = nil
  ) throws(ReplayError) -> ReplaySummary {
    for target in options.targets { try refuseOverwritingInput(dumpPath, target: target) }
    let source: FileByteSource
    do { source = try FileByteSource(path: dumpPath) } catch { throw .open(error) }
    return try run(
      source: source, name: dumpPath, options: options, clock: clock, onProgress: onProgress)
  }

  /// Replays the dump that `source` reads. A regular file is scanned for its tracks with a
  /// second reader; anything else (a pipe from an encoder, a FIFO) is read once, the scan kept
  /// in a bounded buffer and replayed.
  public static func run(
    source: FileByteSource, name: String, options: ReplayOptions, clock: any PacingClock,
    onProgress: ((PipelineSnapshot, Int64) -> Void)? = nil
  ) throws(ReplayError) -> ReplaySummary {
    if source.isRegularFile {
      let tracks = try trackFormats(dumpPath: source.path)
      return try run(
        reader: DumpReader(source: source, checksum: .cpu), tracks: tracks, scanBytes: 0,
        name: name,
        options: options, clock: clock, onProgress: onProgress)
    }
    let rewindable = RewindableSource(source, limit: streamScanBytes)
    var scan = DumpReader(source: rewindable, checksum: .cpu)
    let tracks = try trackFormats(&scan, name: name)
    rewindable.rewind()
    return try run(
      reader: DumpReader(source: rewindable, checksum: .cpu), tracks: tracks,
      scanBytes: streamScanBytes,
      name: name, options: options, clock: clock, onProgress: onProgress)
  }

  private static func run<Source: ByteSource>(
    reader: DumpReader<Source>, tracks: TrackFormats, scanBytes: Int, name dumpPath: String,
    options: ReplayOptions, clock: any PacingClock,
    onProgress: ((PipelineSnapshot, Int64) -> Void)?
  ) throws(ReplayError) -> ReplaySummary {
    let sinks = try options.targets.map { target throws(ReplayError) in
      try makeSink(target, options: options, tracks: tracks)
    }
    let pipelines = try makePipelines(
      sinks.map(\.sink), tracks: tracks, scanBytes: scanBytes, options: options, clock: clock)
    // Several outputs each get a thread when one of them is a network output: the replay runs
    // at real time then, and a local output's writes must not hold up the network one (nor
    // the other way round). Local outputs alone are pumped inline, losing nothing at any speed.
    let ownThreads = sinks.count > 1 && options.hasNetworkOutput
    let systemClock = clock as? SystemClock
    // One encoder, steered from one link: the first network output's (or the only output's).
    let steering = options.targets.firstIndex(where: \.isNetwork) ?? 0
    var lanes: [OutputLane] = []
    for (offset, (sink, threaded)) in sinks.enumerated() {
      let pipeline = pipelines[offset]
      let reporter = StatusReporter(
        pipeline: pipeline, clock: clock, probe: options.residentProbe,
        writeLine: options.statusLine)
      if sinks.count > 1 { reporter.output = offset + 1 }
      if offset == 0 {
        emitStart(
          reporter, pipeline: pipeline, dumpPath: dumpPath, sinks: sinks.map(\.sink),
          options: options)
      }
      reporter.attach(sink)
      if let warningLine = options.warningLine {
        let label = sinks.count > 1 ? "output \(offset + 1) (\(sink.redactedDescription)): " : ""
        reporter.onWarning = { warningLine(label + $0) }
      }
      if let configuration = options.rateControl, offset == steering {
        reporter.rateControl = RateControlLoop(configuration: configuration)
      }
      options.prepareReporter?(reporter)
      let sender = Sender(pipeline: pipeline, sink: sink, clock: clock)
      sender.onEvent = { reporter.report($0) }
      var thread: SenderThread?
      if threaded || ownThreads, let systemClock {
        thread = SenderThread(sender: sender, clock: systemClock, reporter: reporter)
      }
      var audio: SampleKind?
      if case .rtmp = options.targets[offset] { audio = rtmpAudio(options, tracks: tracks) }
      lanes.append(
        OutputLane(
          index: offset + 1, sink: sink, pipeline: pipeline, sender: sender, thread: thread,
          reporter: reporter, rtmpAudio: audio))
    }
    let replayer = Replayer(
      reader: reader, lanes: lanes, clock: clock, speed: options.effectiveSpeed)
    replayer.onProgress = onProgress
    var summary = replayer.run()
    summary.minimumDeliveredFraction = options.minimumDeliveredFraction
    if let input = options.summaryFields?() {
      summary.extraFields = input.fields
      summary.inputFailure = input.failure
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

  /// The outputs' pipelines under one budget: the reader's buffers and every output's fixed
  /// buffers are reserved first, and what is left is split equally between the outputs' rings.
  /// The ledger each pipeline reports counts all the rings (`RingShare`).
  private static func makePipelines(
    _ sinks: [any OutputSink], tracks: TrackFormats, scanBytes: Int, options: ReplayOptions,
    clock: any PacingClock
  ) throws(ReplayError) -> [Pipeline] {
    do {
      var budget = try MemoryBudget(
        budget: options.pipeline.budgetBytes, overhead: options.pipeline.overheadBytes)
      // The reader's one buffer holds the largest record it accepts.
      try budget.reserve(
        "dump reader",
        bytes: options.pipeline.maximumSampleBytes + DumpReader<FileByteSource>.readChunk)
      if scanBytes > 0 { try budget.reserve("dump scan", bytes: scanBytes) }
      if sinks.count == 1 {
        try budget.reserve("sink buffers", bytes: sinks[0].bufferBytes)
        return [
          try Pipeline(
            configuration: options.pipeline, tracks: tracks, payloadFormat: sinks[0].payloadFormat,
            budget: budget, clock: clock)
        ]
      }
      let records = SendRing.recordTableBytes(capacity: options.pipeline.recordCapacity)
      for (offset, sink) in sinks.enumerated() {
        try budget.reserve("output \(offset + 1) sink buffers", bytes: sink.bufferBytes)
        try budget.reserve("output \(offset + 1) ring records", bytes: records)
      }
      let ledger = RingLedger()
      let share = RingShare(ledger: ledger, arenaBytes: budget.available / sinks.count)
      var pipelines: [Pipeline] = []
      for sink in sinks {
        pipelines.append(
          try Pipeline(
            configuration: options.pipeline, tracks: tracks, payloadFormat: sink.payloadFormat,
            budget: budget, clock: clock, share: share))
      }
      return pipelines
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
