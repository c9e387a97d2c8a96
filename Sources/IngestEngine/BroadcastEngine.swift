// The portable part of a Broadcast Upload Extension (docs/embedding.md): everything its
// SampleHandler does but the Apple framework calls, as the IngestEngine product an app adds.
// The page includes this file verbatim, and EmbeddingTests runs it on the live encoder's
// samples, so the page cannot drift from the API.
import IngestCore
import IngestHLS
import IngestPlatform

/// The engine as an extension embeds it: one HLS recording (in the App Group container, for
/// the host app to upload), under the extension's memory budget, steering the encoder through
/// `EncoderRequest`s.
///
/// Threads: the capture thread (VideoToolbox's output callback, ReplayKit's audio callback)
/// calls `append` and `changeFormat`, which never block on I/O. The engine's sender thread (a
/// `SenderThread`, as a network output of the command line has) pumps the ring into the sink
/// and ticks the control loop, so `deliver` and `onEvent` are called there. `finish` is called
/// once, from `broadcastFinished`.
public final class BroadcastEngine: Sendable {
  /// A `CMTime` (value, timescale) as the core takes it: the same rational, converted to 90 kHz
  /// exactly by the pipeline's timeline.
  public static func mediaTime(value: Int64, timescale: Int32) -> MediaTime {
    MediaTime(value: value, timescale: timescale)
  }

  /// A video track's format from the atom its `CMVideoFormatDescription` carries (`avcC` for
  /// H.264, `hvcC` for HEVC).
  public static func videoFormat(atom: String, bytes: [UInt8]) throws(FormatError)
    -> FormatDescription
  {
    atom == "hvcC" ? .hevc(try HEVCFormat(hvcC: bytes)) : .h264(try H264Format(avcC: bytes))
  }

  /// An AAC track's format from its AudioSpecificConfig (the AAC converter's magic cookie).
  public static func audioFormat(audioSpecificConfig bytes: [UInt8]) throws(FormatError)
    -> FormatDescription
  {
    .aac(try AACFormat(audioSpecificConfig: bytes))
  }

  /// The engine's pipeline: its counters (`snapshot()`) for a status display.
  public let pipeline: Pipeline
  private let thread: SenderThread

  /// Builds the pipeline and starts the sender thread; the recording opens with the first pump.
  /// - Parameters:
  ///   - directory: the recording's directory (in the App Group container).
  ///   - tracks: the formats of every track the broadcast will carry.
  ///   - probe: the process's footprint, as the system charges the extension.
  ///   - configuration: the budget (the extension's limit) and the send buffer.
  ///   - deliver: hands a request to the encoder, on the sender thread; answers whether it took it.
  ///   - onEvent: what the control loop saw or decided (tier changes, requests), on the sender
  ///     thread, for a log.
  public init(
    directory: String, tracks: TrackFormats, probe: any ResidentMemoryProbe,
    configuration: PipelineConfiguration = PipelineConfiguration(), nominalFrameRate: Int = 30,
    deliver: @escaping (EncoderRequest) -> Bool,
    onEvent: ((ControlEvent, MonotonicInstant) -> Void)? = nil
  ) throws(BudgetError) {
    let clock = SystemClock()
    var recording = HLSSink.Configuration(directory: directory)
    recording.targetDuration = 2
    let sink = HLSSink(configuration: recording)
    var budget = try MemoryBudget(
      budget: configuration.budgetBytes, overhead: configuration.overheadBytes)
    try budget.reserve("sink buffers", bytes: sink.bufferBytes)
    // A recording the extension was stopped in the middle of goes on after its segments.
    pipeline = try Pipeline(
      configuration: configuration.timed(for: sink), tracks: tracks,
      payloadFormat: sink.payloadFormat,
      budget: budget, clock: clock)
    let sender = Sender(pipeline: pipeline, sink: sink, clock: clock)
    // A recording has no link to steer by: the memory ladder alone asks the encoder for less.
    var steering = ControlLoop.Configuration()
    steering.nominalFrameRate = nominalFrameRate
    let control = ControlLoop(
      pipeline: pipeline, probe: probe, clock: clock, configuration: steering)
    control.deliver = deliver
    control.onEvent = onEvent
    // From here the sender and the control loop belong to the thread.
    thread = SenderThread(
      driver: OutputDriver(sender: sender, tickers: [control]), clock: clock)
    control.attach(thread.sink)
    thread.start()
  }

  /// Takes one encoded sample on the capture thread; returns in microseconds.
  /// - Returns: whether it entered the ring (false: dropped or refused, and counted).
  @discardableResult
  public func append(
    _ kind: SampleKind, pts: MediaTime, dts: MediaTime?, isKeyframe: Bool,
    payload: UnsafeRawBufferPointer
  ) -> Bool {
    let accepted = pipeline.append(
      kind: kind, pts: pts, dts: dts, isKeyframe: isKeyframe, payload: payload)
    thread.wake()
    return accepted
  }

  /// A new format for a track (VideoToolbox changed its parameter sets, say): the stream goes
  /// on at the next keyframe with it.
  public func changeFormat(_ format: FormatDescription, for kind: SampleKind) -> Bool {
    pipeline.changeFormat(format, for: kind)
  }

  /// Sends what the ring holds (for up to `drainTimeout`), stops the sender thread and
  /// finishes the recording (the last segment, the playlist's end).
  /// - Throws: what stopped the recording, when something did.
  public func finish(drainTimeout: TimeSpan = .seconds(2)) throws(SinkError) {
    try thread.finish(drainingFor: drainTimeout)
  }
}
