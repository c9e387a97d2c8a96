import IngestCore
import IngestPOSIX

#if canImport(Glibc)
  import Glibc
#endif

/// The dump writer's sink on a pipe: collects one record's pieces and writes them with one
/// `writeAll` on `flush`, so a reader never waits on half a record and a record costs one syscall.
struct StandardOutputSink: ByteSink {
  private let output: FileDescriptor
  private var buffer: [UInt8] = []
  /// Set when the reader closed the pipe (EPIPE): the run is over, not failed.
  private(set) var readerGone = false

  init(output: FileDescriptor = .standardOutput) {
    self.output = output
    buffer.reserveCapacity(256 << 10)
  }

  mutating func write(_ bytes: UnsafeRawBufferPointer) throws {
    buffer.append(contentsOf: bytes)
  }

  /// Writes what was collected.
  /// - Throws: `Errno` for any failure but EPIPE, which sets `readerGone`.
  mutating func flush() throws(Errno) {
    defer { buffer.removeAll(keepingCapacity: true) }
    guard !readerGone, !buffer.isEmpty else { return }
    do {
      try buffer.withUnsafeBytes { raw in
        Result { () throws(Errno) in try output.writeAll(raw) }
      }.get()
    } catch  where error.code == EPIPE {
      readerGone = true
    }
  }
}
