// The portable part of a Broadcast Upload Extension (docs/embedding.md): everything its
// SampleHandler does but the Apple framework calls, as the IngestEngine product an app adds.
// The page includes this file verbatim, and EmbeddingTests runs it on the live encoder's
// samples, so the page cannot drift from the API.
import IngestCore
import IngestHLS
import IngestPlatform

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The engine as an extension embeds it: one HLS recording (in the App Group container, for
/// the host app to upload), under the extension's memory budget, steering the encoder through
/// `EncoderRequest`s.
///
/// Threads: the capture thread (VideoToolbox's output callback, ReplayKit's audio callback)
/// calls `append` and `changeFormat`, which never block on I/O. The engine's own sender thread
/// pumps the ring into the sink and ticks the control loop, so `deliver` and `control.onEvent`
/// are called there. `finish` is called once, from `broadcastFinished`.
///
/// `@unchecked`: `pending`, `stopping`, `drainDeadline` and `failure` are guarded by `lock`;
/// the sender, the control loop and the sink are used by the sender thread alone until `finish`
/// has joined it.
public final class BroadcastEngine: @unchecked Sendable {
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
  /// The output's control plane; set its `onEvent` to log what it decides.
  public let control: ControlLoop
  private let sender: Sender
  private let clock = SystemClock()
  private let lock = ConditionLock()
  private var thread: pthread_t?
  private var pending = false
  private var stopping = false
  private var drainDeadline = Int64.max
  private var failure: SinkError?

  /// Builds the pipeline and starts the sender thread; the recording opens with the first pump.
  /// - Parameters:
  ///   - directory: the recording's directory (in the App Group container).
  ///   - tracks: the formats of every track the broadcast will carry.
  ///   - probe: the process's footprint, as the system charges the extension.
  ///   - configuration: the budget (the extension's limit) and the send buffer.
  ///   - deliver: hands a request to the encoder, on the sender thread; answers whether it took it.
  public init(
    directory: String, tracks: TrackFormats, probe: any ResidentMemoryProbe,
    configuration: PipelineConfiguration = PipelineConfiguration(), nominalFrameRate: Int = 30,
    deliver: @escaping (EncoderRequest) -> Bool
  ) throws(BudgetError) {
    var recording = HLSSink.Configuration(directory: directory)
    recording.targetDuration = 2
    let sink = HLSSink(configuration: recording)
    var budget = try MemoryBudget(
      budget: configuration.budgetBytes, overhead: configuration.overheadBytes)
    try budget.reserve("sink buffers", bytes: sink.bufferBytes)
    pipeline = try Pipeline(
      configuration: configuration, tracks: tracks, payloadFormat: sink.payloadFormat,
      budget: budget, clock: clock)
    sender = Sender(pipeline: pipeline, sink: sink, clock: clock)
    // A recording has no link to steer by: the memory ladder alone asks the encoder for less.
    var steering = ControlLoop.Configuration()
    steering.nominalFrameRate = nominalFrameRate
    control = ControlLoop(
      pipeline: pipeline, probe: probe, clock: clock, configuration: steering)
    control.attach(sink)
    control.deliver = deliver
    // Unretained: `finish` joins the thread before the engine can go.
    thread = SystemThread.start { [unowned(unsafe) self] in self.run() }
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
    lock.withLock {
      pending = true
      lock.signal()
    }
    return accepted
  }

  /// A new format for a track (VideoToolbox changed its parameter sets, say): the stream goes
  /// on at the next keyframe with it.
  public func changeFormat(_ format: FormatDescription, for kind: SampleKind) -> Bool {
    pipeline.changeFormat(format, for: kind)
  }

  /// Sends what the ring holds (for up to `drainNanoseconds`), stops the sender thread and
  /// finishes the recording (the last segment, the playlist's end).
  /// - Throws: what stopped the recording, when something did.
  public func finish(drainNanoseconds: Int64 = 2_000_000_000) throws(SinkError) {
    lock.withLock {
      stopping = true
      drainDeadline = clock.now() + drainNanoseconds
      lock.signal()
    }
    if let thread { pthread_join(thread, nil) }
    thread = nil
    if let failure = lock.withLock({ failure }) { throw failure }
    try sender.finish()
  }

  /// The sender thread: pump, tick the control loop, sleep until woken, the sink's retry time
  /// or 100 ms (the control loop reads the link every 200 ms and memory every second).
  private func run() {
    while true {
      let result = sender.pump(now: clock.now())
      let now = clock.now()
      control.tick(now: now)
      var wakeAt = now + 100_000_000
      switch result {
      case .failed(let error):
        lock.withLock { failure = error }
        return
      case .blocked(let until): wakeAt = min(wakeAt, until)
      case .idle: break
      }
      lock.lock()
      if stopping && (result == .idle || now >= drainDeadline) {
        lock.unlock()
        return
      }
      if !pending { lock.wait(until: stopping ? min(wakeAt, drainDeadline) : wakeAt) }
      pending = false
      lock.unlock()
    }
  }
}
