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

  /// Walks the access unit once: checks every length and records what later stages need.
  /// - Throws: `FormatError.nalLengthPastEnd` naming the offset of the bad length prefix.
  /// - Complexity: O(number of NAL units).
  public static func summarize(_ payload: UnsafeRawBufferPointer, lengthSize: Int)
    throws(FormatError) -> AVCCSummary
  {
    var nalCount = 0
    var annexBSize = 0
    var slices = 0
    var referenced = false
    var hasSPS = false
    var hasPPS = false
    var containsIDR = false
    try forEachNAL(in: payload, lengthSize: lengthSize) { offset, length in
      nalCount += 1
      let header = payload[offset]
      let type = header & 0x1F
      switch type {
      case AnnexB.audType: return
      case 7: hasSPS = true
      case 8: hasPPS = true
      case 1...5:
        slices += 1
        if header & 0x60 != 0 { referenced = true }
        if type == 5 { containsIDR = true }
      default: break
      }
      annexBSize += 4 + length
    }
    return AVCCSummary(
      payloadSize: payload.count, lengthSize: lengthSize, nalCount: nalCount,
      annexBSize: annexBSize, containsIDR: containsIDR, hasParameterSets: hasSPS && hasPPS,
      isDisposable: slices > 0 && !referenced)
  }
}
