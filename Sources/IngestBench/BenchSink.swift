import IngestCore

/// The benchmark's sink: discards what it takes at a simulated link's pace (like `NullSink`),
/// and notes when the first video keyframe is delivered after the link's outage ends.
final class BenchSink: OutputSink {
  let payloadFormat = PayloadFormat.transportStream
  private var shaper: LinkShaper
  private var origin: MonotonicInstant?
  /// Bytes taken so far.
  private(set) var bytesAccepted: Int64 = 0
  /// When the outage ended (pipeline clock), once it has.
  private(set) var outageEnd: MonotonicInstant?
  /// The time from the end of the outage to the first video keyframe delivered after it.
  private(set) var keyframeAfterOutage: TimeSpan?

  init(shaper: LinkShaper) { self.shaper = shaper }

  var bufferBytes: Int { 0 }
  var congestion: Double { 0 }
  var redactedDescription: String { "bench" }

  func open(tracks: TrackFormats) throws(SinkError) {}

  func write(_ unit: OutgoingUnit, bytes: UnsafeRawBufferPointer, now: MonotonicInstant)
    throws(SinkError)
    -> SinkWriteResult
  {
    let origin = self.origin ?? now
    self.origin = origin
    if let retry = shaper.admit(bytes: bytes.count, now: now) { return .wouldBlock(retryAt: retry) }
    bytesAccepted += Int64(bytes.count)
    if let start = shaper.stallStart, shaper.stallDuration > .zero {
      let end = origin + start + shaper.stallDuration
      if now >= end {
        outageEnd = end
        if keyframeAfterOutage == nil && unit.kind == .video && unit.isKeyframe {
          keyframeAfterOutage = now - end
        }
      }
    }
    return .written
  }

  func close() {}
  func finish() throws(SinkError) {}
}
