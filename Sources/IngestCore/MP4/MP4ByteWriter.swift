/// Writes ISO base media file format boxes (ISO/IEC 14496-12, 4.2) into a growable byte array.
///
/// ```
/// box:      u32 size (header included) | 4 ASCII bytes type | payload
/// full box: u32 size | type | u8 version | u24 flags | payload
/// ```
///
/// `begin` writes a box header with a placeholder size and returns where it starts; `end` writes
/// the size once the payload is known, so nested boxes need no size computed in advance. All
/// integers are big-endian. The array is reused between fragments (`removeAll(keepingCapacity:)`),
/// so a writer whose array already grew to a fragment's size allocates nothing.
public struct MP4ByteWriter {
  /// The bytes written so far.
  public var bytes: [UInt8]

  /// - Parameter capacity: bytes reserved up front.
  public init(capacity: Int = 0) {
    bytes = []
    bytes.reserveCapacity(capacity)
  }

  /// Forgets what was written, keeping the storage.
  public mutating func reset() { bytes.removeAll(keepingCapacity: true) }

  /// Starts a box of `type` (four ASCII characters) and returns its offset for `end`.
  public mutating func begin(_ type: StaticString) -> Int {
    let start = bytes.count
    u32(0)
    fourCC(type)
    return start
  }

  /// Starts a full box: a box whose payload begins with a version and 24 bits of flags.
  public mutating func begin(_ type: StaticString, version: UInt8, flags: UInt32) -> Int {
    let start = begin(type)
    u8(version)
    u24(flags)
    return start
  }

  /// Ends the box started at `start`, writing its size.
  public mutating func end(_ start: Int) {
    let size = UInt32(bytes.count - start)
    bytes[start] = UInt8(truncatingIfNeeded: size >> 24)
    bytes[start + 1] = UInt8(truncatingIfNeeded: size >> 16)
    bytes[start + 2] = UInt8(truncatingIfNeeded: size >> 8)
    bytes[start + 3] = UInt8(truncatingIfNeeded: size)
  }

  /// Overwrites the big-endian 32-bit value at `offset` (a field known only later, such as a
  /// data offset).
  public mutating func patch(u32 value: UInt32, at offset: Int) {
    bytes[offset] = UInt8(truncatingIfNeeded: value >> 24)
    bytes[offset + 1] = UInt8(truncatingIfNeeded: value >> 16)
    bytes[offset + 2] = UInt8(truncatingIfNeeded: value >> 8)
    bytes[offset + 3] = UInt8(truncatingIfNeeded: value)
  }

  /// Appends four ASCII characters.
  public mutating func fourCC(_ code: StaticString) {
    precondition(code.utf8CodeUnitCount == 4, "a box type is four characters")
    code.withUTF8Buffer { bytes.append(contentsOf: $0) }
  }

  public mutating func u8(_ value: UInt8) { bytes.append(value) }

  public mutating func u16(_ value: UInt16) {
    bytes.append(UInt8(truncatingIfNeeded: value >> 8))
    bytes.append(UInt8(truncatingIfNeeded: value))
  }

  public mutating func u24(_ value: UInt32) {
    bytes.append(UInt8(truncatingIfNeeded: value >> 16))
    bytes.append(UInt8(truncatingIfNeeded: value >> 8))
    bytes.append(UInt8(truncatingIfNeeded: value))
  }

  public mutating func u32(_ value: UInt32) {
    u16(UInt16(truncatingIfNeeded: value >> 16))
    u16(UInt16(truncatingIfNeeded: value))
  }

  public mutating func u64(_ value: UInt64) {
    u32(UInt32(truncatingIfNeeded: value >> 32))
    u32(UInt32(truncatingIfNeeded: value))
  }

  /// Appends `count` zero bytes (reserved fields).
  public mutating func zeros(_ count: Int) {
    for _ in 0..<count { bytes.append(0) }
  }

  /// Appends raw bytes (a format record, a string).
  public mutating func append(_ data: some Sequence<UInt8>) { bytes.append(contentsOf: data) }

  /// The unity transformation matrix of `mvhd` and `tkhd` (16.16 and 2.30 fixed point).
  public mutating func unityMatrix() {
    for value: UInt32 in [0x0001_0000, 0, 0, 0, 0x0001_0000, 0, 0, 0, 0x4000_0000] { u32(value) }
  }
}
