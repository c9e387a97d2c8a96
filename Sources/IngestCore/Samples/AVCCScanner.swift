/// Walks the NAL units of an AVCC access unit (length-prefixed NAL units) without copying.
public enum AVCCScanner {
  /// Calls `body` with each NAL unit's offset and length, after checking every length against
  /// the buffer.
  /// - Throws: `FormatError.nalLengthPastEnd` naming the offset of the bad length prefix.
  @inlinable
  public static func forEachNAL(
    in payload: UnsafeRawBufferPointer, lengthSize: Int,
    _ body: (_ offset: Int, _ length: Int) -> Void
  ) throws(FormatError) {
    var offset = 0
    while offset < payload.count {
      guard offset + lengthSize <= payload.count else {
        throw .nalLengthPastEnd(offset: offset, length: lengthSize)
      }
      var length = 0
      for index in 0..<lengthSize { length = length << 8 | Int(payload[offset + index]) }
      guard length <= payload.count - offset - lengthSize else {
        throw .nalLengthPastEnd(offset: offset, length: length)
      }
      if length > 0 { body(offset + lengthSize, length) }
      offset += lengthSize + length
    }
  }

  /// Whether nothing references this access unit: every slice NAL (types 1-5) has nal_ref_idc 0.
  /// An access unit without slices is not disposable.
  public static func isDisposable(_ payload: UnsafeRawBufferPointer, lengthSize: Int)
    throws(FormatError)
    -> Bool
  {
    var slices = 0
    var referenced = false
    try forEachNAL(in: payload, lengthSize: lengthSize) { offset, _ in
      let header = payload[offset]
      let type = header & 0x1F
      if (1...5).contains(type) {
        slices += 1
        if header & 0x60 != 0 { referenced = true }
      }
    }
    return slices > 0 && !referenced
  }
}
