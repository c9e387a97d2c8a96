import IngestAudioMix
import IngestCore
import IngestHLS
import IngestMP4
import IngestPOSIX
import IngestRTMP
import IngestSRT
import IngestSinks
import IngestWHIP

/// The one place a run is assembled: the budget planned for every output, and for each output
/// its sink, pipeline, sender (inline or on a thread of its own), control loop and status
/// reporter, wired together as an `OutputLane`. `ingest replay`, `ingest live` (through
/// `ReplaySession`) and every benchmark scenario build their outputs here, so what is measured
/// is what runs.
///
/// The clock and where senders run are parameters: nothing is inferred from the clock's type.
public struct RunBuilder {
  /// One output to build a lane for.
  public struct Output {
    public var sink: any OutputSink
    /// A live receiver (SRT, RTMP): its connects and sends block, so it needs a thread of its
    /// own under `SenderStrategy.threaded`.
    public var isNetwork: Bool
    /// The audio the output carries.
    public var audio: OutputAudio
    /// The tracks of the output's program when they are not the input's: a mix in place of the
    /// two audio tracks, or the one audio track chosen. Nil: the input's tracks.
    public var tracks: TrackFormats?
    /// The run's one audio mix, for an output whose audio is a mix.
    public var mix: AudioMixStage?

    public init(
      sink: any OutputSink, isNetwork: Bool, audio: OutputAudio = .none,
      tracks: TrackFormats? = nil, mix: AudioMixStage? = nil
    ) {
      self.sink = sink
      self.isNetwork = isNetwork
      self.audio = audio
      self.tracks = tracks
      self.mix = mix
    }
  }

  public let options: ReplayOptions
  /// The clock of the pipelines, the senders run inline and the control loops.
  public let clock: any PacingClock
  /// The end of the run's drain, which writes waiting on a reader give up after.
  public let drainDeadline = DrainDeadline()
  /// Where the senders run.
  public let senders: SenderStrategy

  public init(options: ReplayOptions, clock: any PacingClock, senders: SenderStrategy) {
    self.options = options
    self.clock = clock
    self.senders = senders
  }

  /// The outputs `options.targets` name, their sinks created; when one of them mixes its
  /// audio, the run's one `AudioMixStage` (libavcodec loaded then, not before).
  public func outputs(tracks: TrackFormats) throws(ReplayError) -> [Output] {
    let audio = options.targets.map {
      OutputAudio(
        selection: options.audio, target: $0, tracks: tracks, gains: options.mixGains,
        mixedByEncoder: options.mixedByEncoder)
    }
    var mix: AudioMixStage?
    if audio.contains(where: \.isMix), let app = tracks.audioApp, let mic = tracks.audioMic {
      do { mix = try AudioMixStage(app: app, mic: mic, gains: options.mixGains) } catch {
        throw .output(error.description)
      }
    }
    var outputs: [Output] = []
    for (target, audio) in zip(options.targets, audio) {
      let carried = Self.tracks(of: tracks, carrying: audio, to: target, mixed: mix?.format)
      outputs.append(
        Output(
          sink: try Self.makeSink(
            target, options: options, tracks: carried, drainDeadline: drainDeadline, clock: clock),
          isNetwork: target.isNetwork, audio: audio, tracks: carried,
          mix: audio.isMix ? mix : nil))
    }
    return outputs
  }

  /// The tracks of an output's program: the mixed track (as app audio) in place of both audio
  /// tracks, or only the audio track chosen. RTMP keeps both: FLV takes the one it carries and
  /// counts the other as not carried.
  static func tracks(
    of tracks: TrackFormats, carrying audio: OutputAudio, to target: OutputTarget,
    mixed: AACFormat?
  ) -> TrackFormats {
    switch audio {
    case .mix: return TrackFormats(video: tracks.video, audioApp: mixed)
    case .track(let kind):
      if case .rtmp = target { return tracks }
      return kind == .audioApp
        ? TrackFormats(video: tracks.video, audioApp: tracks.audioApp)
        : TrackFormats(video: tracks.video, audioMic: tracks.audioMic)
    case .none, .both, .encoderMix: return tracks
    }
  }

  /// A lane for each of `outputs`, in order, under one budget. The status reporters write to
  /// `options.statusLine`; nothing is written yet, and no thread is started (the replay loop
  /// starts them).
  /// - Parameter scanBytes: bytes the input keeps for its track scan, reserved in the budget.
  public func lanes(for outputs: [Output], tracks: TrackFormats, scanBytes: Int = 0)
    throws(ReplayError) -> [OutputLane]
  {
    precondition(!outputs.isEmpty)
    let mix = outputs.lazy.compactMap(\.mix).first
    let pipelines = try Self.makePipelines(
      outputs.map(\.sink), tracks: tracks, carried: outputs.map { $0.tracks ?? tracks },
      mixBytes: mix?.ledgerBytes ?? 0, scanBytes: scanBytes, options: options, clock: clock)
    // Several outputs each get a thread when one of them is a network output: the replay runs
    // at real time then, and a local output's writes must not hold up the network one (nor
    // the other way round). Local outputs alone are pumped inline, losing nothing at any speed.
    let everyOutputThreaded = outputs.count > 1 && outputs.contains(where: \.isNetwork)
    // One encoder, steered from one link: the first network output's (or the only output's).
    let steering = outputs.firstIndex(where: \.isNetwork) ?? 0
    // Several outputs on threads of their own read the process's memory from one reading; on
    // a simulated clock (inline senders) each loop keeps its own, as the tests script them.
    var probe = options.residentProbe
    if outputs.count > 1, case .threaded(let threadClock) = senders {
      probe = SharedResidentProbe(probe, clock: threadClock)
    }
    // One voice towards the encoder for the whole run: every lane's loop wishes there.
    let runControl = RunControl(
      outputs: outputs.count, nominalFrameRate: options.nominalFrameRate,
      deliver: options.encoderRequests)
    var lanes: [OutputLane] = []
    for (offset, output) in outputs.enumerated() {
      let pipeline = pipelines[offset]
      let sink = output.sink
      let reporter = StatusReporter(
        pipeline: pipeline, clock: clock, writeLine: options.statusLine)
      if outputs.count > 1 { reporter.output = offset + 1 }
      reporter.attach(sink)
      reporter.onFigures = options.outputFigures
      if let warningLine = options.warningLine {
        let label =
          outputs.count > 1 ? "output \(offset + 1) (\(sink.redactedDescription)): " : ""
        reporter.onWarning = { warningLine(label + $0) }
      }
      // Every output's ladder may wish for what it needs; `runControl` merges the wishes.
      var configuration = ControlLoop.Configuration(
        rateControl: offset == steering ? options.rateControl : nil)
      configuration.nominalFrameRate = options.nominalFrameRate
      if let floor = options.rateControl?.floorBitsPerSecond {
        configuration.bitrateFloorBitsPerSecond = floor
      }
      let control = ControlLoop(
        pipeline: pipeline, probe: probe, clock: clock,
        configuration: configuration)
      control.attach(sink)
      control.runControl = runControl
      control.output = offset + 1
      control.onEvent = { reporter.report($0, now: $1) }
      let sender = Sender(pipeline: pipeline, sink: sink, clock: clock)
      sender.onEvent = { reporter.report($0) }
      let driver = OutputDriver(sender: sender, tickers: [control, reporter])
      var thread: SenderThread?
      if case .threaded(let threadClock) = senders, output.isNetwork || everyOutputThreaded {
        let made = SenderThread(driver: driver, clock: threadClock)
        // While a connect blocks the thread, its ticks read the sink through the gate.
        control.attach(made.sink)
        reporter.attach(made.sink)
        thread = made
      }
      lanes.append(
        OutputLane(
          index: offset + 1, sink: sink, pipeline: pipeline, driver: driver, thread: thread,
          control: control, reporter: reporter, audio: output.audio, mix: output.mix))
    }
    return lanes
  }

  /// libsrt's send buffer, entered in the ledger: a twelfth of what the budget leaves after the
  /// modelled overhead (2.5 MB by default, about 10 s of a 2 Mb/s stream), within 256 KiB...4 MiB.
  public static func srtSendBufferBytes(_ configuration: PipelineConfiguration) -> Int {
    let share = (configuration.budgetBytes - configuration.overheadBytes) / 12
    return min(4 << 20, max(256 << 10, share))
  }

  /// `ingest-whip`'s retransmission history, entered in the ledger: a 48th of what the budget
  /// leaves after the modelled overhead (about 1 MB by default: its time bound, a second, is
  /// reached first up to some 8 Mb/s), within 256 KiB...2 MiB.
  public static func whipRetransmissionHistoryBytes(_ configuration: PipelineConfiguration) -> Int {
    let share = (configuration.budgetBytes - configuration.overheadBytes) / 48
    return min(2 << 20, max(256 << 10, share))
  }

  /// Creates the sink for `target` (a network output when `target.isNetwork`).
  /// - Parameters:
  ///   - drainDeadline: the run's, which a file output's write that waits on a reader gives up
  ///     after.
  ///   - clock: the run's, which a network output measures its link and times its waits on.
  public static func makeSink(
    _ target: OutputTarget, options: ReplayOptions, tracks: TrackFormats,
    drainDeadline: DrainDeadline = DrainDeadline(), clock: any PacingClock = SystemClock()
  ) throws(ReplayError) -> any OutputSink {
    switch target {
    case .file(let path, let shaper):
      // A pipe whose reader stopped reading must not hold a stopped run past its drain.
      return FileSink(path: path, shaper: shaper, abandoned: { drainDeadline.isOver })
    case .null(let shaper): return NullSink(shaper: shaper)
    case .srt(let url):
      let srt: SRTOptions
      do { srt = try SRTOptions(parsing: url) } catch { throw .usage("--to: \(error)") }
      return SRTSink(
        options: srt, sendBufferBytes: srtSendBufferBytes(options.pipeline), clock: clock)
    case .rtmp(let url):
      let target: RTMPTarget
      do { target = try RTMPTarget(url: url) } catch { throw .usage("--to: \(error)") }
      // The tracks FLV carries: the one chosen, app audio (a mix is carried as app audio), or
      // both (the mic as an E-RTMP multitrack track).
      var audio = [SampleKind.audioApp]
      switch OutputAudio(
        selection: options.audio, target: .rtmp(url: url), tracks: tracks, gains: options.mixGains,
        mixedByEncoder: options.mixedByEncoder)
      {
      case .track(let kind): audio = [kind]
      case .both: audio = [.audioApp, .audioMic]
      default: break
      }
      let tls = RTMPSink.Options(
        verifyTLSPeer: options.rtmpsVerifyPeer, caFile: options.caFile)
      return RTMPSink(target: target, audioTracks: audio, options: tls, clock: clock)
    case .whip(let url):
      let target: WHIPTarget
      do { target = try WHIPTarget(parsing: url) } catch { throw .usage("--to: \(error)") }
      // Refused before anything starts: a WebRTC session here always carries video.
      guard tracks.video != nil else {
        throw .output("WHIP needs a video track; the input has none")
      }
      // A live encoder can make any of the profiles, so the answer chooses among them; a dump
      // has its own, which is all a replay can offer.
      guard options.isLive || target.profiles == nil else {
        throw .usage(
          "--to: the WHIP option 'profiles' applies to ingest live: a replay offers the dump's own H.264 profile"
        )
      }
      let profiles =
        options.isLive && tracks.video?.h264 != nil
        ? target.profiles ?? H264Profile.defaultPreference : nil
      return WHIPSink(
        target: target, clock: clock, offerProfiles: profiles, caFile: options.caFile,
        retransmissionHistoryBytes: whipRetransmissionHistoryBytes(options.pipeline))
    case .hls(let directory, let playlist, let container, let audio):
      var configuration = HLSSink.Configuration(directory: directory)
      configuration.playlistName = playlist
      configuration.targetDuration = options.segmentSeconds
      configuration.window = options.hlsWindow
      configuration.container = container ?? .preferred(for: tracks)
      // Both audio tracks asked for: alternate renditions, not two tracks in the video's
      // segments, which players at their defaults refuse or ignore.
      if (audio ?? options.audio) == .both, HLSRenditionSink.applies(to: tracks) {
        return HLSRenditionSink(configuration: configuration, tracks: tracks)
      }
      return HLSSink(configuration: configuration, tracks: tracks)
    case .mp4(let path, let quickTime):
      return MP4FileSink(path: path, tracks: tracks, brand: quickTime ? .quickTime : .iso)
    }
  }

  /// The outputs' pipelines under one budget: the reader's buffers, the audio mix and every
  /// output's fixed buffers are reserved first, and what is left is split equally between the
  /// outputs' rings. The ledger each pipeline reports counts all the rings (`RingShare`).
  /// - Parameters:
  ///   - carried: each output's program (`tracks(of:carrying:to:mixed:)`).
  ///   - mixBytes: what the run's audio mix holds (`AudioMixStage.ledgerBytes`), 0 for none.
  static func makePipelines(
    _ sinks: [any OutputSink], tracks: TrackFormats, carried: [TrackFormats], mixBytes: Int,
    scanBytes: Int, options: ReplayOptions, clock: any PacingClock
  ) throws(ReplayError) -> [Pipeline] {
    do {
      let (budget, configuration) = try plan(
        sinks, tracks: tracks, scanBytes: scanBytes, mixBytes: mixBytes, options: options)
      // The buffers that keep a whole sample take the run's largest, as planned.
      for sink in sinks { sink.holdSamples(upTo: configuration.maximumSampleBytes) }
      // Each output's pipeline has its own timeline: one that continues a recording starts
      // after it, and the others keep the default.
      if sinks.count == 1 {
        return [
          try Pipeline(
            configuration: configuration.timed(for: sinks[0]), tracks: carried[0],
            payloadFormat: sinks[0].payloadFormat, budget: budget, clock: clock,
            pageRelease: AnonymousPageRelease())
        ]
      }
      let ledger = RingLedger()
      let share = RingShare(ledger: ledger, arenaBytes: budget.available / sinks.count)
      var pipelines: [Pipeline] = []
      for (sink, tracks) in zip(sinks, carried) {
        pipelines.append(
          try Pipeline(
            configuration: configuration.timed(for: sink), tracks: tracks,
            payloadFormat: sink.payloadFormat, budget: budget, clock: clock, share: share,
            pageRelease: AnonymousPageRelease()))
      }
      return pipelines
    } catch {
      throw .budget(error)
    }
  }

  /// The budget with the reader's buffers and every output's fixed buffers reserved (a single
  /// output's pipeline reserves its ring records itself), and the configuration with the
  /// largest sample both the reader and the rings hold in what is left.
  static func plan(
    _ sinks: [any OutputSink], tracks: TrackFormats, scanBytes: Int, mixBytes: Int = 0,
    options: ReplayOptions
  ) throws(BudgetError) -> (budget: MemoryBudget, configuration: PipelineConfiguration) {
    let planned = try planAnyRoom(
      sinks, tracks: tracks, scanBytes: scanBytes, mixBytes: mixBytes, options: options)
    let limit = planned.configuration.maximumSampleBytes
    guard limit < min(SampleSizeLimit.minimumUseful, options.pipeline.maximumSampleBytes) else {
      return planned
    }
    // The smallest budget, in whole megabytes up to ten times the one given, that holds one
    // (more budget never leaves less room: a binary search).
    func holds(_ megabytes: Int) -> Bool {
      var larger = options
      larger.pipeline.budgetBytes = megabytes * 1_000_000
      let room = try? planAnyRoom(
        sinks, tracks: tracks, scanBytes: scanBytes, mixBytes: mixBytes, options: larger)
      return (room?.configuration.maximumSampleBytes ?? 0) >= SampleSizeLimit.minimumUseful
    }
    var low = options.pipeline.budgetBytes / 1_000_000
    var high = max(10 * low, 1)
    var needed: Int?
    if holds(high) {
      while high - low > 1 {
        let middle = (low + high) / 2
        if holds(middle) { high = middle } else { low = middle }
      }
      needed = high * 1_000_000
    }
    throw .tooLittleForASample(outputs: sinks.count, sampleBytes: limit, budgetNeeded: needed)
  }

  /// `plan` without its check that the room for a sample is useful.
  private static func planAnyRoom(
    _ sinks: [any OutputSink], tracks: TrackFormats, scanBytes: Int, mixBytes: Int,
    options: ReplayOptions
  ) throws(BudgetError) -> (budget: MemoryBudget, configuration: PipelineConfiguration) {
    var budget = try MemoryBudget(
      budget: options.pipeline.budgetBytes, overhead: options.pipeline.overheadBytes)
    if scanBytes > 0 { try budget.reserve("dump scan", bytes: scanBytes) }
    if mixBytes > 0 { try budget.reserve("audio mix", bytes: mixBytes) }
    var configuration = options.pipeline
    let records = SendRing.recordTableBytes(capacity: configuration.recordCapacity)
    if sinks.count == 1 {
      try budget.reserve("sink buffers", bytes: sinks[0].bufferBytes(forSamplesUpTo: 0))
      try reserveReader(
        &budget, &configuration, rings: 1, tracks: tracks, sinks: sinks, later: records)
      return (budget, configuration)
    }
    for (offset, sink) in sinks.enumerated() {
      try budget.reserve(
        "output \(offset + 1) sink buffers", bytes: sink.bufferBytes(forSamplesUpTo: 0))
      try budget.reserve("output \(offset + 1) ring records", bytes: records)
    }
    try reserveReader(&budget, &configuration, rings: sinks.count, tracks: tracks, sinks: sinks)
    return (budget, configuration)
  }

  /// Reserves the dump reader's buffer, which holds the largest record it passes on, and sets
  /// `configuration.maximumSampleBytes` to the largest sample that it, each of `rings` rings
  /// and every sink buffer that keeps a whole sample (an MP4 fragment buffer, beyond the fixed
  /// buffers reserved already; reserved here) hold below the ladder's first threshold (less
  /// `later` bytes still to be reserved), so that the largest sample alone never degrades the
  /// stream and every output takes it: up to what the format allows, less at a small budget. A
  /// larger budget raises the limit.
  private static func reserveReader(
    _ budget: inout MemoryBudget, _ configuration: inout PipelineConfiguration, rings: Int,
    tracks: TrackFormats, sinks: [any OutputSink], later: Int = 0
  ) throws(BudgetError) {
    let headroom =
      sinks.contains { $0.payloadFormat == .transportStream } ? TSOutputStream.maximumPrefixSize : 0
    let chunk = DumpReader<FileByteSource>.readChunk
    let threshold = configuration.ladder.thresholds.first ?? 1
    let room = Int(Double(budget.budget) * threshold) - budget.overhead - budget.fixedBytes - later
    // What each sink holds for a sample of `size` beyond its fixed buffers.
    func sampleBuffer(_ sink: any OutputSink, _ size: Int) -> Int {
      sink.bufferBytes(forSamplesUpTo: size) - sink.bufferBytes(forSamplesUpTo: 0)
    }
    var largest = configuration.maximumSampleBytes
    for payloadFormat in Set(sinks.map(\.payloadFormat)) {
      largest = SampleSizeLimit.largest(
        cap: largest, availableBytes: room, readerExtra: chunk,
        rings: rings, headroom: headroom, tracks: tracks, payloadFormat: payloadFormat,
        sinkBytes: { size in sinks.reduce(0) { $0 + sampleBuffer($1, size) } })
    }
    configuration.maximumSampleBytes = largest
    try budget.reserve("dump reader", bytes: largest + chunk)
    for (offset, sink) in sinks.enumerated() {
      let bytes = sampleBuffer(sink, largest)
      guard bytes > 0 else { continue }
      try budget.reserve(
        sinks.count == 1 ? "sink sample buffer" : "output \(offset + 1) sample buffer",
        bytes: bytes)
    }
  }
}
