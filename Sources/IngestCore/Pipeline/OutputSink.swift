/// What the pipeline puts in the send ring for a sink, chosen by the sink.
public enum PayloadFormat: Sendable {
  /// MPEG-TS packets from our own writer (file, null, SRT, HLS).
  case transportStream
  /// Access units as the encoder produced them: AVCC video, raw AAC (RTMP/FLV).
  case accessUnits
}

/// One access unit leaving the send ring, as the sink receives it.
public struct OutgoingUnit: Sendable, Equatable {
  /// The track of the access unit.
  public var kind: SampleKind
  /// Presentation time, 90 kHz ticks on the shared timeline (not wrapped).
  public var pts: Int64
  /// Decode time, 90 kHz ticks on the shared timeline (not wrapped).
  public var dts: Int64
  /// An IDR frame (video) or any audio frame.
  public var isKeyframe: Bool
  /// The timeline was reset before this unit (clock reset or reconnect).
  public var isDiscontinuity: Bool
  /// For `.transportStream`: how many leading bytes are PAT/PMT/PCR packets written in front of
  /// the unit's own packets. Always 0 for `.accessUnits`.
  public var prefixLength: Int
  /// The track's format record when it differs from the one the sink last had for the track
  /// (from `open`, or from an earlier unit): the track changed format mid-stream (a device
  /// rotated) and this unit is the first in the new one. Nil otherwise. A sink that carries
  /// the format out of band (RTMP's sequence headers) sends it before this unit, and still
  /// takes it when it discards the unit; TS sinks ignore it, their packets carry the format.
  public var format: FormatDescription?
  /// An H.264 picture the producer flagged as a keyframe that is no IDR (an open GOP's
  /// recovery point), which `isKeyframe` leaves out: no place to resume or cut a segment.
  public var isRecoveryPoint: Bool

  public init(
    kind: SampleKind, pts: Int64, dts: Int64, isKeyframe: Bool, isDiscontinuity: Bool,
    prefixLength: Int, format: FormatDescription? = nil, isRecoveryPoint: Bool = false
  ) {
    self.kind = kind
    self.pts = pts
    self.dts = dts
    self.isKeyframe = isKeyframe
    self.isDiscontinuity = isDiscontinuity
    self.prefixLength = prefixLength
    self.format = format
    self.isRecoveryPoint = isRecoveryPoint
  }
}

/// How a sink answered a write.
public enum SinkWriteResult: Sendable, Equatable {
  /// The unit was taken whole.
  case written
  /// The unit was consumed but not sent, for `reason`: a track the output does not carry
  /// (`.notCarried`), a frame before the connection's first keyframe (`.awaitingKeyframe`), a
  /// malformed unit (`.invalid`). The run counts it as dropped, not as sent.
  case discarded(DropReason)
  /// The unit is not finished (a sink may have taken part of it): offer the same unit again at
  /// `retryAt` (on the pipeline clock). The unit in flight is never dropped meanwhile.
  case wouldBlock(retryAt: MonotonicInstant)
}

/// A destination for the pipeline's output, driven by the sender (never by the capture thread).
///
/// `write` may block up to the sink's own timeout (network sinks) but must never block forever.
/// Its link side (`congestion`, `linkEstimate`) is what the run's `ControlLoop` reads.
public protocol OutputSink: LinkEstimateSource {
  /// What the ring should hold for this sink.
  var payloadFormat: PayloadFormat { get }
  /// Bytes of buffers the sink holds (socket send buffers included), entered in the memory ledger.
  var bufferBytes: Int { get }
  /// Bytes of buffers the sink would hold for samples of up to `maximumSampleBytes` bytes: the
  /// same as `bufferBytes`, unless the sink keeps a whole sample (an MP4 fragment buffer). The
  /// run builder plans the run's sample limit with it before the sink opens, so that such a
  /// buffer is in the memory ledger and every output takes the same samples.
  func bufferBytes(forSamplesUpTo maximumSampleBytes: Int) -> Int
  /// Sizes the buffers that keep a whole sample to take samples of up to `maximumSampleBytes`
  /// bytes (the run's limit, planned with `bufferBytes(forSamplesUpTo:)`). Called before
  /// `open`; a sink without such buffers ignores it.
  func holdSamples(upTo maximumSampleBytes: Int)
  /// A one-line description safe to print (no secrets).
  var redactedDescription: String { get }
  /// Where this output's timeline must start (`Timeline.Configuration.startOffset`), read once
  /// before the pipeline is built; nil for the default. An HLS recording that goes on from an
  /// earlier run's segments starts after them, so its timestamps never step back.
  var timelineStart: Int64? { get }

  /// Connects or creates the destination. Called again after a failure whose `isRetryable`.
  func open(tracks: TrackFormats) throws(SinkError)
  /// Hands one access unit to the sink.
  /// - Parameters:
  ///   - unit: what the bytes are.
  ///   - bytes: TS packets (prefix, then the unit's packets) or the raw access unit.
  ///   - now: the pipeline clock.
  func write(_ unit: OutgoingUnit, bytes: UnsafeRawBufferPointer, now: MonotonicInstant)
    throws(SinkError)
    -> SinkWriteResult
  /// Closes the connection after a failure, before a retry. Must not throw.
  func close()
  /// Ends the run cleanly: flushes and finalises (HLS writes EXT-X-ENDLIST).
  func finish() throws(SinkError)

  /// The sink's own figures for the periodic `status` event (SRT: send buffer, RTT, loss), or
  /// nil when it has none. Called from the status reporter's thread.
  func statusFields() -> JSONObject?
  /// The link's round trip and send buffer for the progress line, or nil when the sink does
  /// not read them. Called from the status reporter's thread, once a second.
  func linkReading() -> LinkReading?
  /// Where the sink sends events of its own (HLS: `segment`, `hlsRecovered`), as a name and the
  /// event's fields. Set by the run builder before `open`; a sink without events ignores it.
  func setStatusHandler(_ handler: @escaping @Sendable (String, JSONObject) -> Void)
  /// Bytes the destination itself took (a file: what reached it, not what waits in its write
  /// buffer), when the sink knows better than the count of units it was handed; nil otherwise.
  var acceptedBytes: Int64? { get }
  /// Units written to the sink whose bytes did not all reach the destination (a file's write
  /// buffer when the disk filled), by track (`SampleKind.rawValue`); nil when the sink loses
  /// nothing it took. The summary counts them as undelivered, not sent.
  var unstoredUnits: [Int]? { get }
  /// Whether the connection the last `open` made is up. A sink whose `open` returns before
  /// (WHIP: media must flow for the offer, ICE and DTLS come after) says so later; the sender
  /// reports `connected` only then. Default true.
  var isEstablished: Bool { get }
  /// What the sink warned about so far, each once (SRT: a latency too short for the round
  /// trip); also sent as a status event with a `warning` member when it happens.
  var warnings: [String] { get }
  /// The sink's own figures for the run's text summary, one line (WHIP: RTP packets sent and
  /// lost, round trip, keyframe requests), or nil. Read after `finish` or `close`.
  var summaryLine: String? { get }
  /// The same figures for the JSON summary (its output's `link` member), or nil.
  var summaryFields: JSONObject? { get }
}

extension OutputSink {
  public func bufferBytes(forSamplesUpTo maximumSampleBytes: Int) -> Int { bufferBytes }
  public func holdSamples(upTo maximumSampleBytes: Int) {}
  public var timelineStart: Int64? { nil }
  public func statusFields() -> JSONObject? { nil }
  public func linkReading() -> LinkReading? { nil }
  public func setStatusHandler(_ handler: @escaping @Sendable (String, JSONObject) -> Void) {}
  public func linkEstimate(now: MonotonicInstant) -> LinkEstimate? { nil }
  public var acceptedBytes: Int64? { nil }
  public var unstoredUnits: [Int]? { nil }
  public var isEstablished: Bool { true }
  public var warnings: [String] { [] }
  public var summaryLine: String? { nil }
  public var summaryFields: JSONObject? { nil }
}
