import IngestCore
import IngestPOSIX

/// Writes the transport stream to a plain `.ts` file, optionally through a simulated link so the
/// bytes that got through can be checked.
public final class FileSink: OutputSink {
  public let payloadFormat = PayloadFormat.transportStream
  public let path: String
  private var shaper: LinkShaper
  private var writer: FileWriter?
  private var stored: Int64 = 0
  private let bufferCapacity: Int

  /// - Parameters:
  ///   - path: the file to create (truncated if present).
  ///   - shaper: a simulated link (`?rate=`, `?stall=`), inactive by default.
  public init(path: String, shaper: LinkShaper = LinkShaper(), bufferCapacity: Int = 64 << 10) {
    self.path = path
    self.shaper = shaper
    self.bufferCapacity = bufferCapacity
  }

  public var bufferBytes: Int { bufferCapacity }
  public var congestion: Double { 0 }
  public var redactedDescription: String { path }
  /// What reached the file, so a full disk does not count buffered bytes as sent.
  public var acceptedBytes: Int64? { stored + (writer?.bytesStored ?? 0) }

  public func open(tracks: TrackFormats) throws(SinkError) {
    do { writer = try FileWriter(path: path, bufferCapacity: bufferCapacity) } catch {
      throw SinkError(file: error)
    }
  }

  public func write(_ unit: OutgoingUnit, bytes: UnsafeRawBufferPointer, now: Int64)
    throws(SinkError)
    -> SinkWriteResult
  {
    if let retry = shaper.admit(bytes: bytes.count, now: now) { return .wouldBlock(retryAt: retry) }
    do { try writer?.write(bytes) } catch { throw SinkError(file: error) }
    return .written
  }

  public func close() {
    try? writer?.close()
    stored += writer?.bytesStored ?? 0
    writer = nil
  }

  public func finish() throws(SinkError) {
    defer {
      stored += writer?.bytesStored ?? 0
      writer = nil
    }
    do { try writer?.close() } catch { throw SinkError(file: error) }
  }
}
