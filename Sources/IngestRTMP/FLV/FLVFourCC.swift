/// A four-character code as E-RTMP puts it on the wire: the four ASCII bytes as a big-endian
/// UI32 (`hvc1` is 0x68766331).
struct FLVFourCC: Equatable, Sendable {
  /// The code as a big-endian number.
  let value: UInt32

  /// The code of four ASCII characters.
  init(_ text: StaticString) {
    precondition(text.utf8CodeUnitCount == 4, "a FourCC has four characters")
    var value: UInt32 = 0
    text.withUTF8Buffer { for byte in $0 { value = value << 8 | UInt32(byte) } }
    self.value = value
  }

  /// HEVC with its parameter sets in an hvcC record (ISO/IEC 14496-15).
  static let hevc = FLVFourCC("hvc1")
  /// AAC with an AudioSpecificConfig (ISO/IEC 14496-3).
  static let aac = FLVFourCC("mp4a")

  /// The code as `onMetaData` gives a codec id: the number the four bytes make.
  var number: Double { Double(value) }
}
