import IngestAudioMix
import IngestCore
import IngestPOSIX

/// One output of a run: its sink, and the pipeline (ring, drop policy, ladder), sender, control
/// loop and status reporter that serve it alone, so a slow or failed output drops or fails for itself.
///
/// Built by `RunBuilder`. The replay loop (or a benchmark's) appends every sample to each live
/// lane. A lane with a `thread` is sent from there; the others are stepped by the loop between
/// samples through the lane's `driver`.
public final class OutputLane {
  /// The output's place among the outputs, from 1.
  public let index: Int
  public let sink: any OutputSink
  public let pipeline: Pipeline
  public let sender: Sender
  /// The sender's own thread, when it has one (`SenderStrategy.threaded`).
  public let thread: SenderThread?
  public let control: ControlLoop
  public let reporter: StatusReporter
  /// Pumps the sender and ticks the control loop, then the reporter: stepped by the replay loop
  /// for a lane without a thread, by `thread` for the others.
  public let driver: OutputDriver
  /// The audio the output carries.
  let audio: OutputAudio
  /// The run's audio mix, when the output carries it: the lane takes the mixed track as app
  /// audio, and neither input track.
  let mix: AudioMixStage?
  /// The fatal error that stopped the output; the lane takes no more samples after it.
  private(set) var failure: SinkError?

  init(
    index: Int, sink: any OutputSink, pipeline: Pipeline, driver: OutputDriver,
    thread: SenderThread?, control: ControlLoop, reporter: StatusReporter,
    audio: OutputAudio = .none, mix: AudioMixStage? = nil
  ) {
    self.index = index
    self.sink = sink
    self.pipeline = pipeline
    self.sender = driver.sender
    self.thread = thread
    self.control = control
    self.reporter = reporter
    self.driver = driver
    self.audio = audio
    self.mix = mix
  }

  /// Whether the input's samples of `kind` go to this lane: video always; audio unless the
  /// lane carries the mix or its program left the track out.
  func carries(_ kind: SampleKind) -> Bool {
    kind == .video || (mix == nil && pipeline.tracks.contains(kind))
  }

  /// Ticks the control loop, then the reporter, for a lane without a thread (a threaded lane's
  /// thread ticks its own: neither is shared between threads).
  public func tick(now: MonotonicInstant, force: Bool = false) {
    driver.tick(now: now, force: force)
  }

  /// Whether the lane still takes samples.
  var isLive: Bool { failure == nil }

  /// Records the error that stopped the output (the first one counts).
  func fail(_ error: SinkError) {
    if failure == nil { failure = error }
  }

  /// The output's part of the summary.
  func summary(minimumDeliveredFraction: Double) -> OutputSummary {
    var snapshot = pipeline.snapshot()
    // Units the sink took but lost (a file's buffer on a full disk, what libsrt dropped as
    // too late) were not sent: they count as undelivered.
    let unstored = sink.unstoredUnits
    if let unstored {
      for kind in snapshot.sent.indices { snapshot.sent[kind] -= unstored[kind] }
    }
    var summary = OutputSummary(
      index: index, description: sink.redactedDescription, snapshot: snapshot,
      tierChanges: reporter.tierChanges)
    summary.lostUnits = unstored?.reduce(0, +) ?? 0
    summary.warnings = sink.warnings
    summary.sinkLine = sink.summaryLine
    summary.sinkFields = sink.summaryFields
    summary.sinkError = failure
    summary.acceptedBytes = sink.acceptedBytes
    summary.audio = audio
    if let mix {
      summary.mixLimitedFrames = mix.limitedFrames
      summary.mixFigures = (
        mix.encodedFrames, mix.resets(of: .audioApp), mix.resets(of: .audioMic)
      )
      if let error = mix.firstError {
        summary.warnings.append(
          "\(mix.failedFrames) audio frames left out of the mix (first: \(error))")
      }
    }
    summary.minimumDeliveredFraction = minimumDeliveredFraction
    return summary
  }
}

/// The pipelines of the live lanes that take a sample of `kind` (every live lane when
/// `everyLane`: a track refused before the run, which each pipeline refuses and counts), in lane
/// order: what the replay loop hands a sample to, through `Pipeline.append(to:...)`, without
/// building an array per sample.
struct LivePipelines: Sequence, IteratorProtocol {
  let lanes: [OutputLane]
  let kind: SampleKind
  let everyLane: Bool
  private var index = 0

  init(lanes: [OutputLane], kind: SampleKind, everyLane: Bool) {
    self.lanes = lanes
    self.kind = kind
    self.everyLane = everyLane
  }

  mutating func next() -> Pipeline? {
    while index < lanes.count {
      let lane = lanes[index]
      index += 1
      if lane.isLive && (everyLane || lane.carries(kind)) { return lane.pipeline }
    }
    return nil
  }
}
