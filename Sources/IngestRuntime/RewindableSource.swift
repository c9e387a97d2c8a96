import IngestCore

/// A byte source that keeps the bytes a first look read, then serves them again before the rest:
/// how a pipe or FIFO (read once) gets its track scan without a second pass.
///
/// While recording, at most `limit` bytes are kept; past that the source reports the end, so the
/// scan ends there (a track announced later is refused, as for files). After `rewind()`, the
/// kept bytes come first, then the underlying source; the kept buffer is freed once served.
final class RewindableSource<Base: ByteSource>: ByteSource {
  private var base: Base
  private var kept: [UInt8] = []
  private var replayed: Int?
  /// Bytes the scan may keep (entered in the ledger by the owner).
  let limit: Int

  init(_ base: Base, limit: Int) {
    self.base = base
    self.limit = limit
  }

  /// Serves what was kept from its start, then the rest of the underlying source.
  func rewind() { replayed = 0 }

  func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
    guard !buffer.isEmpty else { return 0 }
    guard let offset = replayed else {
      let room = min(buffer.count, limit - kept.count)
      guard room > 0 else { return 0 }
      let count = try base.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<room]))
      kept.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[..<count]))
      return count
    }
    if offset < kept.count {
      let count = min(buffer.count, kept.count - offset)
      kept.withUnsafeBytes { bytes in
        buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count]))
      }
      replayed = offset + count
      if offset + count == kept.count { kept = [] }
      return count
    }
    return try base.read(into: buffer)
  }
}
