/// Big-endian integers appended to a byte buffer: every multi-byte field of FLV, AMF0 and the
/// E-RTMP headers is big-endian.
extension Array where Element == UInt8 {
  /// Appends the low `count` bytes of `value`, most significant first.
  mutating func appendBigEndian(_ value: UInt64, count: Int) {
    for index in stride(from: count - 1, through: 0, by: -1) {
      append(UInt8(truncatingIfNeeded: value >> UInt64(8 * index)))
    }
  }

  /// Appends a signed 24-bit field (FLV's SI24, two's complement); `value` must fit in 24 bits.
  mutating func appendSigned24(_ value: Int32) {
    appendBigEndian(UInt64(UInt32(bitPattern: value) & 0xFF_FFFF), count: 3)
  }
}
