/// A destination for a stream of bytes: a flat buffer, or the payloads of a run of TS packets.
///
/// Generic over this protocol, the Annex B converter writes straight into packets without an
/// intermediate copy of the access unit.
protocol PacketByteWriter {
  /// Appends `bytes`.
  mutating func write(_ bytes: UnsafeRawBufferPointer)
  /// Appends one byte.
  mutating func write(byte: UInt8)
}

extension PacketByteWriter {
  /// Appends an H.264 4-byte start code.
  mutating func writeStartCode() {
    write(byte: 0)
    write(byte: 0)
    write(byte: 0)
    write(byte: 1)
  }
}

/// Writes into one contiguous buffer that the caller sized beforehand.
struct FlatByteWriter: PacketByteWriter {
  let buffer: UnsafeMutableRawBufferPointer
  var position = 0

  init(_ buffer: UnsafeMutableRawBufferPointer) { self.buffer = buffer }

  mutating func write(_ bytes: UnsafeRawBufferPointer) {
    guard let base = bytes.baseAddress, bytes.count > 0 else { return }
    precondition(position + bytes.count <= buffer.count, "output buffer too small")
    (buffer.baseAddress! + position).copyMemory(from: base, byteCount: bytes.count)
    position += bytes.count
  }

  mutating func write(byte: UInt8) {
    precondition(position < buffer.count, "output buffer too small")
    buffer[position] = byte
    position += 1
  }
}
