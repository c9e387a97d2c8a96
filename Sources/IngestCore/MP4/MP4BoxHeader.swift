/// The header of one box as it sits in a file (ISO/IEC 14496-12, 4.2): what a reader needs to
/// step from box to box without reading payloads (recovering a file cut short, checking one).
///
/// ```
/// u32 size | type          size >= 8: the box, header included
///                          size == 1: u64 largesize follows the type (16-byte header)
///                          size == 0: the box runs to the end of the file
/// ```
public struct MP4BoxHeader: Hashable, Sendable {
  /// The box type as its four bytes, big-endian (`moof` is 0x6D6F6F66).
  public var type: UInt32
  /// The whole box in bytes, header included; nil for a box that runs to the end of the file.
  public var size: Int64?
  /// Bytes of the header: 8, or 16 with a 64-bit size.
  public var headerSize: Int

  /// The largest header: with a 64-bit size.
  public static let maximumSize = 16

  /// Reads a header from the start of `bytes`.
  /// - Returns: nil when `bytes` is too short to hold the header (need more).
  /// - Throws: `MP4Error.boxSize` for a size smaller than its own header.
  public init?(_ bytes: UnsafeRawBufferPointer, offset: Int64) throws(MP4Error) {
    guard bytes.count >= 8 else { return nil }
    func u32(_ at: Int) -> UInt32 {
      UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8
        | UInt32(bytes[at + 3])
    }
    type = u32(4)
    switch u32(0) {
    case 0:
      size = nil
      headerSize = 8
    case 1:
      guard bytes.count >= 16 else { return nil }
      let large = UInt64(u32(8)) << 32 | UInt64(u32(12))
      guard large >= 16, large <= UInt64(Int64.max) else {
        throw .boxSize(offset: offset, size: Int64(truncatingIfNeeded: large))
      }
      size = Int64(large)
      headerSize = 16
    case let small:
      guard small >= 8 else { throw .boxSize(offset: offset, size: Int64(small)) }
      size = Int64(small)
      headerSize = 8
    }
  }

  /// The four-character code of `type`, e.g. "moof".
  public var typeName: String { Self.name(of: type) }

  /// The four-character code of a box type or brand, e.g. "moof".
  public static func name(of type: UInt32) -> String {
    String(
      decoding: [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: type >> UInt32($0)) },
      as: UTF8.self)
  }

  /// The four-byte code of `name` (four ASCII characters).
  public static func code(_ name: StaticString) -> UInt32 {
    precondition(name.utf8CodeUnitCount == 4)
    return name.withUTF8Buffer { $0.reduce(0) { $0 << 8 | UInt32($1) } }
  }
}
