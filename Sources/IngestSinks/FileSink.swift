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
  /// Units the open writer took whose bytes may still be in its buffer: their track and where
  /// they end in what it took, oldest first from `pendingHead`. At most a buffer of 188-byte
  /// units.
  private var pending: [(kind: Int, end: Int64)] = []
  private var pendingHead = 0
  /// Bytes the open writer took.
  private var taken: Int64 = 0
  /// Units of earlier writers that never reached the file, by track.
  private var lost = [Int](repeating: 0, count: SampleKind.allCases.count)

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

  /// The units whose bytes did not all reach the file, by track.
  public var unstoredUnits: [Int]? {
    var counts = lost
    let reached = writer?.bytesStored ?? 0
    for unit in pending[pendingHead...] where unit.end > reached { counts[unit.kind] += 1 }
    return counts
  }

  public func open(tracks: TrackFormats) throws(SinkError) {
    do { writer = try FileWriter(path: path, bufferCapacity: bufferCapacity) } catch {
      throw SinkError(file: error)
    }
    pending.reserveCapacity(2 * (bufferCapacity / 188 + 1))
  }

  public func write(_ unit: OutgoingUnit, bytes: UnsafeRawBufferPointer, now: Int64)
    throws(SinkError)
    -> SinkWriteResult
  {
    if let retry = shaper.admit(bytes: bytes.count, now: now) { return .wouldBlock(retryAt: retry) }
    do { try writer?.write(bytes) } catch { throw SinkError(file: error) }
    taken += Int64(bytes.count)
    notePending(kind: Int(unit.kind.rawValue))
    return .written
  }

  /// Enters the unit just written and forgets those that reached the file, without allocating:
  /// the array is compacted in place once half of it is behind `pendingHead`.
  private func notePending(kind: Int) {
    let reached = writer?.bytesStored ?? 0
    while pendingHead < pending.count && pending[pendingHead].end <= reached { pendingHead += 1 }
    if pendingHead > 0 && pendingHead * 2 >= pending.count {
      pending.removeFirst(pendingHead)
      pendingHead = 0
    }
    pending.append((kind, taken))
  }

  /// Ends the writer's accounts: what it took but never stored is lost.
  private func retireWriter() {
    lost = unstoredUnits ?? lost
    pending.removeAll(keepingCapacity: true)
    pendingHead = 0
    taken = 0
    stored += writer?.bytesStored ?? 0
    writer = nil
  }

  public func close() {
    try? writer?.close()
    retireWriter()
  }

  public func finish() throws(SinkError) {
    defer { retireWriter() }
    do { try writer?.close() } catch { throw SinkError(file: error) }
  }
}
