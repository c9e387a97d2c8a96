/// File names on Linux are bytes, not text, but a Swift `String` holds only valid Unicode:
/// `CommandLine.arguments` replaces every byte that is not UTF-8 with U+FFFD, and a file named
/// with byte 0xFF could not be opened by the name the user typed.
///
/// A path string made by `string(decoding:)` keeps every byte: valid UTF-8 is decoded as usual,
/// and each other byte b (always 0x80 or above) becomes the private-use scalar U+F700 + b. A
/// scalar of that range that was itself encoded in the input is taken apart byte by byte the same
/// way, so the mapping is reversible for any bytes. Every system call of this module that takes
/// a path gives the kernel `withCString`'s bytes, the original ones; messages show `display`.
public enum SystemPath {
  /// The scalars that stand for single bytes 0x80...0xFF.
  private static let escapes: ClosedRange<UInt32> = 0xF780...0xF7FF

  /// The path string for `bytes` (an argument as the kernel passed it, without its NUL).
  public static func string(decoding bytes: some Collection<UInt8>) -> String {
    let bytes = Array(bytes)
    if let text = String(validating: bytes, as: UTF8.self),
      !text.unicodeScalars.contains(where: { escapes.contains($0.value) })
    {
      return text
    }
    var scalars = String.UnicodeScalarView()
    var index = 0
    while index < bytes.count {
      let length = sequenceLength(bytes[index])
      if index + length <= bytes.count,
        let text = String(validating: bytes[index..<index + length], as: UTF8.self),
        let scalar = text.unicodeScalars.first, !escapes.contains(scalar.value)
      {
        scalars.append(scalar)
        index += length
      } else {
        scalars.append(Unicode.Scalar(escapes.lowerBound - 0x80 + UInt32(bytes[index]))!)
        index += 1
      }
    }
    return String(scalars)
  }

  /// The bytes `path` stands for: its UTF-8, with each escape scalar turned back into its byte.
  public static func bytes(_ path: String) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(path.utf8.count)
    for scalar in path.unicodeScalars {
      if escapes.contains(scalar.value) {
        bytes.append(UInt8(scalar.value - (escapes.lowerBound - 0x80)))
      } else {
        bytes.append(contentsOf: String(scalar).utf8)
      }
    }
    return bytes
  }

  /// Calls `body` with `path` as the NUL-terminated bytes the kernel is to see.
  public static func withCString<Result>(
    _ path: String, _ body: (UnsafePointer<CChar>) throws -> Result
  ) rethrows -> Result {
    guard path.unicodeScalars.contains(where: { escapes.contains($0.value) }) else {
      return try path.withCString(body)
    }
    let bytes = Self.bytes(path).map { CChar(bitPattern: $0) } + [0]
    return try bytes.withUnsafeBufferPointer { try body($0.baseAddress!) }
  }

  /// `path` for a message: each byte that is not UTF-8 written as `\xFF`.
  public static func display(_ path: String) -> String {
    guard path.unicodeScalars.contains(where: { escapes.contains($0.value) }) else { return path }
    var text = ""
    for scalar in path.unicodeScalars {
      if escapes.contains(scalar.value) {
        let byte = scalar.value - (escapes.lowerBound - 0x80)
        text += "\\x" + String(byte, radix: 16, uppercase: true)
      } else {
        text.unicodeScalars.append(scalar)
      }
    }
    return text
  }

  /// The length of the UTF-8 sequence that `lead` starts (1 for a byte that starts none).
  private static func sequenceLength(_ lead: UInt8) -> Int {
    switch lead {
    case 0xC2...0xDF: 2
    case 0xE0...0xEF: 3
    case 0xF0...0xF4: 4
    default: 1
    }
  }
}
