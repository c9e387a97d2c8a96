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
      let scan = try scanTracks(dumpPath: source.path)
      return try run(
        reader: DumpReader(source: source, checksum: .cpu), tracks: scan.tracks,
        refusals: scan.refusals, scanBytes: 0, name: name, options: options,
        clock: clock, onProgress: onProgress)
    }
    let rewindable = RewindableSource(source, limit: streamScanBytes)
    var reader = DumpReader(source: rewindable, checksum: .cpu)
    let scan = try scanTracks(&reader, name: name)
    rewindable.rewind()
    return try run(
      reader: DumpReader(source: rewindable, checksum: .cpu), tracks: scan.tracks,
      refusals: scan.refusals, scanBytes: streamScanBytes, name: name, options: options,
      clock: clock, onProgress: onProgress)
  }

  private static func run<Source: ByteSource>(
    reader: DumpReader<Source>, tracks: TrackFormats, refusals: [TrackRefusal], scanBytes: Int,
    name dumpPath: String, options: ReplayOptions, clock: any PacingClock,
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
        pipeline: pipeline, clock: clock, writeLine: options.statusLine)
      if sinks.count > 1 { reporter.output = offset + 1 }
      if offset == 0 {
        emitStart(
          reporter, pipeline: pipeline, dumpPath: dumpPath, sinks: sinks.map(\.sink),
          options: options)
      }
      reporter.attach(sink)
      // One encoder, steered from one link; every output's ladder may ask it for the rest.
      var control = ControlLoop.Configuration(
        rateControl: offset == steering ? options.rateControl : nil)
      control.nominalFrameRate = options.nominalFrameRate
      let loop = ControlLoop(
        pipeline: pipeline, probe: options.residentProbe, clock: clock, configuration: control)
      loop.attach(sink)
      loop.deliver = options.encoderRequests
      loop.onEvent = { reporter.report($0, now: $1) }
      if let warningLine = options.warningLine {
        let label = sinks.count > 1 ? "output \(offset + 1) (\(sink.redactedDescription)): " : ""
        reporter.onWarning = { warningLine(label + $0) }
      }
      options.prepareReporter?(reporter)
      let sender = Sender(pipeline: pipeline, sink: sink, clock: clock)
      sender.onEvent = { reporter.report($0) }
      var thread: SenderThread?
      if threaded || ownThreads, let systemClock {
        thread = SenderThread(
          sender: sender, clock: systemClock, control: loop, reporter: reporter)
      }
      var audio: SampleKind?
      if case .rtmp = options.targets[offset] { audio = rtmpAudio(options, tracks: tracks) }
      lanes.append(
        OutputLane(
          index: offset + 1, sink: sink, pipeline: pipeline, sender: sender, thread: thread,
          control: loop, reporter: reporter, rtmpAudio: audio))
    }
    let replayer = Replayer(
      reader: reader, lanes: lanes, clock: clock, speed: options.effectiveSpeed)
    replayer.onProgress = onProgress
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

  /// The outputs' pipelines under one budget: the reader's buffers and every output's fixed
  /// buffers are reserved first, and what is left is split equally between the outputs' rings.
  /// The ledger each pipeline reports counts all the rings (`RingShare`).
  private static func makePipelines(
    _ sinks: [any OutputSink], tracks: TrackFormats, scanBytes: Int, options: ReplayOptions,
    clock: any PacingClock
  ) throws(ReplayError) -> [Pipeline] {
    do {
      let (budget, configuration) = try plan(
        sinks, tracks: tracks, scanBytes: scanBytes, options: options)
      if sinks.count == 1 {
        return [
          try Pipeline(
            configuration: configuration, tracks: tracks, payloadFormat: sinks[0].payloadFormat,
            budget: budget, clock: clock)
        ]
      }
      let ledger = RingLedger()
      let share = RingShare(ledger: ledger, arenaBytes: budget.available / sinks.count)
      var pipelines: [Pipeline] = []
      for sink in sinks {
        pipelines.append(
          try Pipeline(
            configuration: configuration, tracks: tracks, payloadFormat: sink.payloadFormat,
            budget: budget, clock: clock, share: share))
      }
      return pipelines
    } catch {
      throw .budget(error)
    }
  }

  /// The largest sample payload a replay of a dump with `tracks` into `options.targets` takes:
  /// what the format allows, or what the reader and the rings hold at the budget, whichever is
  /// smaller (`ingest inspect` names the samples above it).
  public static func maximumSampleBytes(tracks: TrackFormats, options: ReplayOptions)
    throws(ReplayError) -> Int
  {
    let sinks = try options.targets.map { target throws(ReplayError) in
      try makeSink(target, options: options, tracks: tracks).sink
    }
    do {
      return try plan(sinks, tracks: tracks, scanBytes: 0, options: options).configuration
        .maximumSampleBytes
    } catch {
      throw .budget(error)
    }
  }

  /// The budget with the reader's buffers and every output's fixed buffers reserved (a single
  /// output's pipeline reserves its ring records itself), and the configuration with the
  /// largest sample both the reader and the rings hold in what is left.
  private static func plan(
    _ sinks: [any OutputSink], tracks: TrackFormats, scanBytes: Int, options: ReplayOptions
  ) throws(BudgetError) -> (budget: MemoryBudget, configuration: PipelineConfiguration) {
    var budget = try MemoryBudget(
      budget: options.pipeline.budgetBytes, overhead: options.pipeline.overheadBytes)
    if scanBytes > 0 { try budget.reserve("dump scan", bytes: scanBytes) }
    var configuration = options.pipeline
    let records = SendRing.recordTableBytes(capacity: configuration.recordCapacity)
    if sinks.count == 1 {
      try budget.reserve("sink buffers", bytes: sinks[0].bufferBytes)
      try reserveReader(
        &budget, &configuration, rings: 1, tracks: tracks, sinks: sinks, later: records)
      return (budget, configuration)
    }
    for (offset, sink) in sinks.enumerated() {
      try budget.reserve("output \(offset + 1) sink buffers", bytes: sink.bufferBytes)
      try budget.reserve("output \(offset + 1) ring records", bytes: records)
    }
    try reserveReader(&budget, &configuration, rings: sinks.count, tracks: tracks, sinks: sinks)
    return (budget, configuration)
  }

  /// Reserves the dump reader's buffer, which holds the largest record it passes on, and sets
  /// `configuration.maximumSampleBytes` to the largest sample both it and each of `rings`
  /// rings hold below the ladder's first threshold (less `later` bytes still to be reserved),
  /// so that the largest sample alone never degrades the stream: up to what the format allows,
  /// less at a small budget. A larger budget raises the limit.
  private static func reserveReader(
    _ budget: inout MemoryBudget, _ configuration: inout PipelineConfiguration, rings: Int,
    tracks: TrackFormats, sinks: [any OutputSink], later: Int = 0
  ) throws(BudgetError) {
    let headroom =
      sinks.contains { $0.payloadFormat == .transportStream } ? TSOutputStream.maximumPrefixSize : 0
    let chunk = DumpReader<FileByteSource>.readChunk
    let threshold = configuration.ladder.thresholds.first ?? 1
    let room = Int(Double(budget.budget) * threshold) - budget.overhead - budget.fixedBytes - later
    var largest = configuration.maximumSampleBytes
    for payloadFormat in Set(sinks.map(\.payloadFormat)) {
      largest = SampleSizeLimit.largest(
        cap: largest, availableBytes: room, readerExtra: chunk,
        rings: rings, headroom: headroom, tracks: tracks, payloadFormat: payloadFormat)
    }
    configuration.maximumSampleBytes = largest
    try budget.reserve("dump reader", bytes: largest + chunk)
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
