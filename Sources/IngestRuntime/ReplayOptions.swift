import IngestCore
import IngestPOSIX
import IngestSinks

/// Everything `ingest replay` (and the benchmark) can set for one run.
public struct ReplayOptions: Sendable {
  /// Where the stream goes: one output or several (`--to` given more than once), each with its
  /// own ring and drop policy under the one budget.
  public var targets: [OutputTarget]
  /// Pacing as asked for; see `effectiveSpeed`.
  public var speed: ReplaySpeed = .factor(1)
  /// The smallest share of the appended video frames the output must accept for the run to
  /// succeed (see `ReplaySummary.succeeded`), 0...1.
  public var minimumDeliveredFraction = Self.defaultMinimumDeliveredFraction
  /// Ring, budget and ladder settings.
  public var pipeline = PipelineConfiguration()
  /// Receives status events as JSON lines; nil for none.
  public var statusLine: (@Sendable (String) -> Void)?
  /// Receives each output's figures once a second (`OutputFigures`), as values, on the
  /// output's sender thread; nil for none.
  public var outputFigures: (@Sendable (OutputFigures) -> Void)?
  /// Receives each output's warnings (a latency too short for the path) as they happen,
  /// labelled with the output in a run with several; nil for none.
  public var warningLine: (@Sendable (String) -> Void)?
  /// HLS: target segment duration in seconds (2 to 4).
  public var segmentSeconds = 2
  /// HLS: segments kept in the live playlist (0 keeps all, as an EVENT playlist).
  public var hlsWindow = 6
  /// The audio every output carries (`--audio`); nil: a mix for RTMP when the input has both
  /// tracks, both tracks elsewhere (see `OutputAudio`).
  public var audio: AudioSelection?
  /// The gains of a mix (`--mix-gain`).
  public var mixGains = AudioMixGains()
  /// Whether the gains were asked for (`--mix-gain`): a run in which nothing is mixed says
  /// on `warningLine` that they have no effect, rather than ignoring them without a word.
  public var mixGainsGiven = false
  /// The gains the input's encoder mixed app and mic with into its one audio track
  /// (`ingest live --encoder-mix`), for the summary; nil when it did not.
  public var mixedByEncoder: AudioMixGains?
  /// A live input (an encoder writing as it captures): samples are taken as they arrive, never
  /// paced by their timestamps, since the input already is.
  public var isLive = false
  /// Steer the encoder from the output's link (`RateController`); nil leaves the memory ladder
  /// alone in charge, as for a fixed dump.
  public var rateControl: RateController.Configuration?
  /// The encoder's frame rate: the ladder halves it under pressure and restores it after.
  public var nominalFrameRate = 30
  /// Where the run's encoder requests go (a live encoder's input), from every output's
  /// `ControlLoop`; answers whether the request got there. Nil: there is no encoder to ask (a
  /// dump replayed), and the requests are only reported.
  public var encoderRequests: (@Sendable (EncoderRequest) -> Bool)?
  /// Called once each output's status reporter exists, before the first sample: where a live
  /// input routes its own reports.
  public var prepareReporter: (@Sendable (StatusReporter) -> Void)?
  /// Extra members of the summary (the encoder child's exit and memory) and the input's own
  /// failure, if it failed; asked for once the replay loop has ended, before the `summary`
  /// event is written.
  public var summaryFields: (@Sendable () -> (fields: JSONObject, failure: String?))?
  /// Video frames the source had but never sent (a live encoder asked for a lower frame
  /// rate), asked for once the replay loop has ended: `--min-delivered` is measured against the
  /// source's frames, so a frame-rate cut counts as frames not delivered.
  public var skippedSourceVideoFrames: (@Sendable () -> Int)?
  /// RTMPS and WHIP over https: a PEM file of certificate authorities to trust instead of the
  /// system store.
  public var caFile: String?
  /// RTMPS: whether the server certificate is verified (off only with `--insecure`).
  public var rtmpsVerifyPeer = true
  /// Where resident memory is read (a test running in-process measures its own runner otherwise):
  /// the dirty footprint, as iOS charges an extension, not VmRSS (see `ProcFootprintProbe`).
  public var residentProbe: any ResidentMemoryProbe = ProcFootprintProbe()

  /// Below half of its video frames a stream is not watchable.
  public static let defaultMinimumDeliveredFraction = 0.5

  public init(target: OutputTarget) { targets = [target] }

  /// - Precondition: `targets` is not empty.
  public init(targets: [OutputTarget]) {
    precondition(!targets.isEmpty)
    self.targets = targets
  }

  /// The first output (the only one, in most runs).
  public var target: OutputTarget {
    get { targets[0] }
    set { targets[0] = newValue }
  }

  /// Whether an output is a live receiver (SRT, RTMP), which plays at real time.
  public var hasNetworkOutput: Bool {
    targets.contains(where: \.isNetwork)
  }

  /// The pacing used: `speed`, except that `.max` with a network output (SRT, RTMP) is real
  /// time, because a live receiver plays at real time and cannot take the stream any faster;
  /// the surplus would only fill the ring and be dropped. A live input is never paced: it
  /// arrives at real time already.
  public var effectiveSpeed: ReplaySpeed {
    if isLive { return .max }
    if case .max = speed, hasNetworkOutput { return .factor(1) }
    return speed
  }
}
