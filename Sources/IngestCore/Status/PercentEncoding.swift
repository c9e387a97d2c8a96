/// `%XX` escapes in a URL's query value, decoded as bytes (RFC 3986, 2.1), for the outputs'
/// URL parsers: a value may name a path holding bytes a URL cannot carry (`%20`, `%26`).
public enum PercentEncoding {
  /// The bytes of `value` with every `%XX` replaced by its byte, or the offset of the first
  /// `%` that is not followed by two hex digits.
  public static func decode<Bytes: Collection<UInt8>>(_ value: Bytes) -> Result<[UInt8], Malformed>
  {
    let bytes = Array(value)
    var decoded: [UInt8] = []
    decoded.reserveCapacity(bytes.count)
    var index = 0
    while index < bytes.count {
      guard bytes[index] == UInt8(ascii: "%") else {
        decoded.append(bytes[index])
        index += 1
        continue
      }
      guard index + 2 < bytes.count, let high = hexValue(bytes[index + 1]),
        let low = hexValue(bytes[index + 2])
      else { return .failure(Malformed(offset: index)) }
      decoded.append(high << 4 | low)
      index += 3
    }
    return .success(decoded)
  }

  /// A `%` at `offset` (in bytes) without two hex digits after it.
  public struct Malformed: Error, Equatable, Sendable {
    public var offset: Int
  }

  private static func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
  }
}
