/// The framing of one FLV tag: the 11 bytes in front of its body and the 4 after it.
///
/// ```
/// UI8  TagType (8 audio, 9 video, 18 script; filter and reserved bits 0)
/// UI24 DataSize: the body's bytes
/// UI24 Timestamp: milliseconds, low 24 bits
/// UI8  TimestampExtended: bits 24-31
/// UI24 StreamID: always 0
///      body
/// UI32 PreviousTagSize: 11 + DataSize
/// ```
enum FLVTagHeader {
  /// Bytes in front of a tag's body.
  static let size = 11
  /// The largest body: DataSize is 24 bits.
  static let maximumBodySize = 0xFF_FFFF

  /// Appends the 11 header bytes of a tag of `type` whose body is `bodySize` bytes.
  /// - Parameter timestamp: milliseconds; FLV keeps 32 bits, so it wraps after 49.7 days.
  static func append(
    type: FLVTagType, bodySize: Int, timestamp: UInt32, to bytes: inout [UInt8]
  ) {
    precondition((0...maximumBodySize).contains(bodySize), "FLV tag body too large")
    bytes.append(type.rawValue)
    bytes.appendBigEndian(UInt64(bodySize), count: 3)
    bytes.appendBigEndian(UInt64(timestamp & 0xFF_FFFF), count: 3)
    bytes.append(UInt8(truncatingIfNeeded: timestamp >> 24))
    bytes.appendBigEndian(0, count: 3)
  }

  /// Appends the PreviousTagSize that follows a tag whose body is `bodySize` bytes.
  static func appendTrailer(bodySize: Int, to bytes: inout [UInt8]) {
    bytes.appendBigEndian(UInt64(size + bodySize), count: 4)
  }

  /// The FLV file header and the PreviousTagSize 0 that follows it: 13 bytes, which libavformat's
  /// rtmp protocol reads past before the first tag.
  static func fileHeader(audio: Bool, video: Bool) -> [UInt8] {
    var bytes: [UInt8] = [0x46, 0x4C, 0x56, 1, (audio ? 0x04 : 0) | (video ? 0x01 : 0)]
    bytes.appendBigEndian(9, count: 4)
    bytes.appendBigEndian(0, count: 4)
    return bytes
  }
}
