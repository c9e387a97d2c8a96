import IngestCore
import IngestPOSIX

/// Writes the transport stream to a plain `.ts` file, optionally through a simulated link so the
/// bytes that got through can be checked.
///
/// The bytes go through a `BackgroundFileWriter`: write(2) runs on the writer's own thread, so
/// the kernel's copy into the page cache overlaps with the replay's reading and packetizing.
public final class FileSink: OutputSink {
  public let payloadFormat = PayloadFormat.transportStream
  public let path: String
  private var shaper: LinkShaper
  private var writer: BackgroundFileWriter?
  private var stored: Int64 = 0
  private let bufferCapacity: Int
  private let bufferCount: Int
  /// Units the open writer took whose bytes may still be in its buffers: their track and where
  /// they end in what it took, oldest first from `pendingHead`. At most the buffers' worth of
  /// 188-byte units, twice over before it is compacted.
  private var pending: [(kind: Int, end: Int64)] = []
  private var pendingHead = 0
  /// Bytes the open writer took.
  private var taken: Int64 = 0
  /// Units of earlier writers that never reached the file, by track.
  private var lost = [Int](repeating: 0, count: SampleKind.allCases.count)

  /// - Parameters:
  ///   - path: the file to create (truncated if present).
  ///   - shaper: a simulated link (`?rate=`, `?stall=`), inactive by default.
  ///   - bufferCapacity: bytes of each of the writer's `bufferCount` buffers.
  /// Asked while a write waits for a reader that takes nothing (`--to -` into a pipe nobody
  /// reads): true gives the write up (`BackgroundFileWriter`'s `abandoned`).
  private let abandoned: @Sendable () -> Bool

  public init(
    path: String, shaper: LinkShaper = LinkShaper(), bufferCapacity: Int = 1 << 20,
    bufferCount: Int = 2, abandoned: @escaping @Sendable () -> Bool = { false }
  ) {
    self.abandoned = abandoned
    self.path = path
    self.shaper = shaper
    self.bufferCapacity = bufferCapacity
    self.bufferCount = bufferCount
  }

  /// Most units whose bytes may wait in the writer's buffers, twice (see `notePending`).
  private var pendingCapacity: Int { 2 * (bufferCapacity * bufferCount / 188 + 1) }

  /// The writer's buffers and the table of units waiting in them.
  public var bufferBytes: Int {
    bufferCapacity * bufferCount + pendingCapacity * MemoryLayout<(Int, Int64)>.stride
  }
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
    do {
      writer = try BackgroundFileWriter(
        path: path, bufferCapacity: bufferCapacity, bufferCount: bufferCount,
        abandoned: abandoned)
    } catch {
      throw SinkError(file: error)
    }
    pending.reserveCapacity(pendingCapacity)
  }

  public func write(_ unit: OutgoingUnit, bytes: UnsafeRawBufferPointer, now: MonotonicInstant)
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
