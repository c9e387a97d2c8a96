import IngestCore
import Synchronization

/// The sink as the status reporter sees it when ticks can come from two threads: the sender
/// thread, and the thread that keeps status flowing while the sender thread is blocked in a
/// connection attempt.
///
/// While an attempt is in progress the sink is busy on the sender thread (libsrt and libavformat
/// connects block for their whole timeout) and has no connection to report on, so the gate
/// answers for it: no figures, no link, no congestion. Every tick runs under `tickLock`, and the
/// flag only changes under it, so a tick never sees the attempt end half-way through. Everything
/// else is passed on to the sink.
///
/// Like the sink it wraps, it is not `Sendable`: it belongs to a `SenderThread`, whose two
/// threads share it by that type's rule (`sink` is called from ticks only while no attempt is
/// in progress, and ticks are serialised by `tickLock`; the flag is atomic).
final class ConnectingSinkGate: OutputSink {
  let sink: any OutputSink
  /// Held for each status tick and for each change of the flag.
  let tickLock = HandOverLock()
  private let connecting = Atomic<Bool>(false)

  init(sink: any OutputSink) { self.sink = sink }

  /// Whether the sender thread is inside a connection attempt.
  var isConnecting: Bool { connecting.load(ordering: .acquiring) }

  /// Marks the start or the end of an attempt (sender thread), after any tick in progress.
  func setConnecting(_ value: Bool) {
    tickLock.withLock { connecting.store(value, ordering: .releasing) }
  }

  var payloadFormat: PayloadFormat { sink.payloadFormat }
  var bufferBytes: Int { sink.bufferBytes }
  func bufferBytes(forSamplesUpTo maximumSampleBytes: Int) -> Int {
    sink.bufferBytes(forSamplesUpTo: maximumSampleBytes)
  }
  func holdSamples(upTo maximumSampleBytes: Int) { sink.holdSamples(upTo: maximumSampleBytes) }
  var congestion: Double { isConnecting ? 0 : sink.congestion }
  var redactedDescription: String { sink.redactedDescription }

  func open(tracks: TrackFormats) throws(SinkError) { try sink.open(tracks: tracks) }

  func write(_ unit: OutgoingUnit, bytes: UnsafeRawBufferPointer, now: MonotonicInstant)
    throws(SinkError)
    -> SinkWriteResult
  {
    try sink.write(unit, bytes: bytes, now: now)
  }

  func close() { sink.close() }
  func finish() throws(SinkError) { try sink.finish() }

  func statusFields() -> JSONObject? { isConnecting ? nil : sink.statusFields() }
  func linkReading() -> LinkReading? { isConnecting ? nil : sink.linkReading() }

  func setStatusHandler(_ handler: @escaping @Sendable (String, JSONObject) -> Void) {
    sink.setStatusHandler(handler)
  }

  func linkEstimate(now: MonotonicInstant) -> LinkEstimate? {
    isConnecting ? nil : sink.linkEstimate(now: now)
  }

  func takeKeyframeRequest(now: MonotonicInstant) -> Bool {
    isConnecting ? false : sink.takeKeyframeRequest(now: now)
  }

  func takeProfileRequest() -> H264Profile? { isConnecting ? nil : sink.takeProfileRequest() }

  var isEstablished: Bool { isConnecting ? false : sink.isEstablished }
  var unstoredUnits: [Int]? { sink.unstoredUnits }
  var acceptedBytes: Int64? { sink.acceptedBytes }

  var summaryLine: String? { sink.summaryLine }
  var summaryFields: JSONObject? { sink.summaryFields }

  /// Not while connecting: `open` (on the sender thread) may be adding one.
  var warnings: [String] { isConnecting ? [] : sink.warnings }
}
