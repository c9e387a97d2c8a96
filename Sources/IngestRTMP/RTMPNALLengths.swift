/// Rewrites AVCC access units whose NAL length prefixes are 1 or 2 bytes wide into the 4-byte form
/// that FLV players expect (and that the avcC record sent in the sequence header then announces).
enum RTMPNALLengths {
  /// Copies `input` into `output` with every length prefix widened to 4 bytes.
  ///
  /// - Returns: false when a prefix or a NAL unit runs past the end of `input` (output unspecified).
  /// - Complexity: O(n); `output` keeps its capacity between calls, so steady state does not allocate.
  static func widen(
    _ input: UnsafeRawBufferPointer, lengthSize: Int, into output: inout [UInt8]
  ) -> Bool {
    output.removeAll(keepingCapacity: true)
    var offset = 0
    while offset < input.count {
      guard input.count - offset >= lengthSize else { return false }
      var length = 0
      for index in 0..<lengthSize { length = length << 8 | Int(input[offset + index]) }
      offset += lengthSize
      guard length <= input.count - offset else { return false }
      output.append(UInt8(truncatingIfNeeded: length >> 24))
      output.append(UInt8(truncatingIfNeeded: length >> 16))
      output.append(UInt8(truncatingIfNeeded: length >> 8))
      output.append(UInt8(truncatingIfNeeded: length))
      output.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[offset..<offset + length]))
      offset += length
    }
    return true
  }
}
