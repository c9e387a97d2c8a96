/// The AMF0 values `onMetaData` needs (AMF 0 specification, 2.2-2.10), appended to a buffer.
///
/// ```
/// number      0x00, IEEE 754 double, big-endian
/// boolean     0x01, UI8 (0 false)
/// string      0x02, UI16 length, UTF-8 bytes
/// object      0x03, then properties, then the end marker
/// ECMA array  0x08, UI32 count of properties, then properties, then the end marker
/// property    UI16 name length, UTF-8 name, value
/// end marker  0x00 0x00 0x09
/// ```
struct AMF0Writer {
  /// What was written.
  private(set) var bytes: [UInt8] = []

  mutating func number(_ value: Double) {
    bytes.append(0x00)
    bytes.appendBigEndian(value.bitPattern, count: 8)
  }

  mutating func boolean(_ value: Bool) {
    bytes.append(0x01)
    bytes.append(value ? 1 : 0)
  }

  mutating func string(_ value: String) {
    bytes.append(0x02)
    name(value)
  }

  /// Starts an ECMA array of `count` properties; `end()` closes it.
  mutating func ecmaArray(count: Int) {
    bytes.append(0x08)
    bytes.appendBigEndian(UInt64(count), count: 4)
  }

  /// Starts an anonymous object; `end()` closes it.
  mutating func object() { bytes.append(0x03) }

  /// A property's name, before its value (inside an object or an ECMA array).
  mutating func name(_ name: String) {
    let utf8 = Array(name.utf8.prefix(0xFFFF))
    bytes.appendBigEndian(UInt64(utf8.count), count: 2)
    bytes.append(contentsOf: utf8)
  }

  /// Closes an object or an ECMA array.
  mutating func end() { bytes.append(contentsOf: [0, 0, 9]) }
}
