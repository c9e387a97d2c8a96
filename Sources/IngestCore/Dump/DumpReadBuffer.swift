/// The dump reader's one buffer: raw memory that blocks are read into and records decoded from
/// in place.
///
/// A class over allocated memory rather than an array, so the reader reaches its bytes without
/// `withUnsafeBytes` closures: in the generic reader those looked its type metadata up at run
/// time for every record. Every access is checked against the buffer's size, as an array's is.
/// The reader stays a value: it copies the buffer before changing one it shares
/// (`isKnownUniquelyReferenced`).
final class DumpReadBuffer {
  private(set) var bytes: UnsafeMutableRawBufferPointer

  init(capacity: Int = 0) {
    bytes = .allocate(byteCount: capacity, alignment: 16)
  }

  deinit { bytes.deallocate() }

  /// Bytes of memory held.
  var capacity: Int { bytes.count }

  subscript(index: Int) -> UInt8 {
    precondition(index >= 0 && index < bytes.count, "dump buffer index out of range")
    return bytes[index]
  }

  /// The bytes in `range`, valid until the buffer changes or goes.
  func span(_ range: Range<Int>) -> UnsafeRawBufferPointer {
    precondition(range.lowerBound >= 0 && range.upperBound <= bytes.count, "dump buffer range")
    return UnsafeRawBufferPointer(rebasing: bytes[range])
  }

  /// The free memory from `offset` to the end, to read into.
  func free(from offset: Int) -> UnsafeMutableRawBufferPointer {
    precondition(offset >= 0 && offset <= bytes.count, "dump buffer offset")
    return UnsafeMutableRawBufferPointer(rebasing: bytes[offset...])
  }

  /// A little-endian integer at `offset`.
  func load<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
    precondition(offset >= 0 && offset + MemoryLayout<T>.size <= bytes.count, "dump buffer load")
    return T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
  }

  /// Moves `count` bytes from `offset` to the front.
  func moveToFront(from offset: Int, count: Int) {
    precondition(offset >= 0 && count >= 0 && offset + count <= bytes.count)
    guard count > 0 else { return }
    bytes.baseAddress!.copyMemory(from: bytes.baseAddress! + offset, byteCount: count)
  }

  /// Grows the memory to `capacity` bytes, keeping the first `kept`.
  func grow(to capacity: Int, keeping kept: Int) {
    precondition(capacity >= bytes.count && kept <= bytes.count)
    let grown = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 16)
    if kept > 0 { grown.baseAddress!.copyMemory(from: bytes.baseAddress!, byteCount: kept) }
    bytes.deallocate()
    bytes = grown
  }

  /// A buffer of the same size holding the first `kept` bytes.
  func copy(keeping kept: Int) -> DumpReadBuffer {
    let copy = DumpReadBuffer(capacity: bytes.count)
    if kept > 0 { copy.bytes.baseAddress!.copyMemory(from: bytes.baseAddress!, byteCount: kept) }
    return copy
  }
}
