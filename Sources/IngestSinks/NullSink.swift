import IngestCore

/// Discards what it is given, optionally at a simulated link's pace: the benchmark's sink.
public final class NullSink: OutputSink {
  public let payloadFormat: PayloadFormat
  private var shaper: LinkShaper
  /// Bytes accepted so far.
  public private(set) var bytesAccepted: Int64 = 0

  public init(shaper: LinkShaper = LinkShaper(), payloadFormat: PayloadFormat = .transportStream) {
    self.shaper = shaper
    self.payloadFormat = payloadFormat
  }

  public var bufferBytes: Int { 0 }
  public var congestion: Double { 0 }
  public var redactedDescription: String { "null" }

  public func open(tracks: TrackFormats) throws(SinkError) {}

  public func write(_ unit: OutgoingUnit, bytes: UnsafeRawBufferPointer, now: MonotonicInstant)
    throws(SinkError)
    -> SinkWriteResult
  {
    if let retry = shaper.admit(bytes: bytes.count, now: now) { return .wouldBlock(retryAt: retry) }
    bytesAccepted += Int64(bytes.count)
    return .written
  }

  public func close() {}
  public func finish() throws(SinkError) {}
}
