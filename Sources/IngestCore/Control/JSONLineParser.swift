/// Reads one JSON object from one line: the members at its top level, their scalar values kept
/// and nested objects and arrays checked and set aside. Enough for the encoder's requests,
/// which are flat, and for forwarded status lines, which may nest; IngestCore has no Foundation.
///
/// Follows RFC 8259's grammar (no comments, no trailing commas, no bare words). A member given
/// twice keeps its last value. Nesting is limited (`maximumDepth`), so a hostile line cannot
/// exhaust the stack. Works on a complete line only: `EncoderRequestDecoder` splits the stream.
struct JSONLineParser {
  /// A member's value.
  enum Value: Equatable {
    case string(String)
    case number(Double)
    case bool(Bool)
    case null
    /// An object or an array: valid, not kept.
    case nested
  }

  /// Deeper nesting than any status line has is refused.
  static let maximumDepth = 16

  private let bytes: [UInt8]
  private var index = 0

  private init(bytes: [UInt8]) { self.bytes = bytes }

  /// The top-level members of the object `line` holds (spaces around it allowed).
  /// - Throws: `.malformedJSON` naming what was expected where.
  static func members(of line: [UInt8]) throws(EncoderRequestError) -> [String: Value] {
    var parser = JSONLineParser(bytes: line)
    parser.skipSpace()
    guard parser.peek == UInt8(ascii: "{") else { throw parser.expected("an object") }
    let members = try parser.object(depth: 1)
    parser.skipSpace()
    guard parser.peek == nil else { throw parser.expected("the end of the line") }
    return members
  }

  private var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

  private func expected(_ what: String) -> EncoderRequestError {
    .malformedJSON(offset: index, expected: what)
  }

  private mutating func skipSpace() {
    while let byte = peek, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
      index += 1
    }
  }

  private mutating func consume(_ byte: UInt8, _ what: String) throws(EncoderRequestError) {
    guard peek == byte else { throw expected(what) }
    index += 1
  }

  /// An object, from its `{`.
  private mutating func object(depth: Int) throws(EncoderRequestError) -> [String: Value] {
    guard depth <= Self.maximumDepth else { throw expected("at most \(Self.maximumDepth) levels") }
    index += 1
    var members: [String: Value] = [:]
    skipSpace()
    if peek == UInt8(ascii: "}") {
      index += 1
      return members
    }
    while true {
      skipSpace()
      guard peek == UInt8(ascii: "\"") else { throw expected("a member name") }
      let key = try string()
      skipSpace()
      try consume(UInt8(ascii: ":"), "':'")
      skipSpace()
      members[key] = try value(depth: depth)
      skipSpace()
      if peek == UInt8(ascii: "}") {
        index += 1
        return members
      }
      try consume(UInt8(ascii: ","), "',' or '}'")
    }
  }

  /// An array, from its `[`; its elements are checked, not kept.
  private mutating func array(depth: Int) throws(EncoderRequestError) {
    guard depth <= Self.maximumDepth else { throw expected("at most \(Self.maximumDepth) levels") }
    index += 1
    skipSpace()
    if peek == UInt8(ascii: "]") {
      index += 1
      return
    }
    while true {
      skipSpace()
      _ = try value(depth: depth)
      skipSpace()
      if peek == UInt8(ascii: "]") {
        index += 1
        return
      }
      try consume(UInt8(ascii: ","), "',' or ']'")
    }
  }

  private mutating func value(depth: Int) throws(EncoderRequestError) -> Value {
    guard let byte = peek else { throw expected("a value") }
    switch byte {
    case UInt8(ascii: "{"):
      _ = try object(depth: depth + 1)
      return .nested
    case UInt8(ascii: "["):
      try array(depth: depth + 1)
      return .nested
    case UInt8(ascii: "\""): return .string(try string())
    case UInt8(ascii: "t"):
      try literal("true")
      return .bool(true)
    case UInt8(ascii: "f"):
      try literal("false")
      return .bool(false)
    case UInt8(ascii: "n"):
      try literal("null")
      return .null
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
    default: throw expected("a value")
    }
  }

  private mutating func literal(_ word: StaticString) throws(EncoderRequestError) {
    let start = index
    for byte in UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount) {
      guard peek == byte else {
        index = start
        throw expected("\(word)")
      }
      index += 1
    }
  }

  private mutating func digits() throws(EncoderRequestError) {
    guard let byte = peek, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else {
      throw expected("a digit")
    }
    while let byte = peek, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { index += 1 }
  }

  private mutating func number() throws(EncoderRequestError) -> Double {
    let start = index
    if peek == UInt8(ascii: "-") { index += 1 }
    // JSON allows no leading zeros: "0" alone, or a non-zero digit first.
    if peek == UInt8(ascii: "0") {
      index += 1
    } else {
      try digits()
    }
    if peek == UInt8(ascii: ".") {
      index += 1
      try digits()
    }
    if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
      index += 1
      if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
      try digits()
    }
    // The grammar above is a subset of what Double parses; a huge exponent reads as infinity,
    // which every range check refuses.
    guard let value = Double(String(decoding: bytes[start..<index], as: UTF8.self)) else {
      index = start
      throw expected("a number")
    }
    return value
  }

  /// A string, from its opening quote, with its escapes resolved.
  private mutating func string() throws(EncoderRequestError) -> String {
    index += 1
    var utf8: [UInt8] = []
    while true {
      guard let byte = peek else { throw expected("'\"'") }
      switch byte {
      case UInt8(ascii: "\""):
        index += 1
        return String(decoding: utf8, as: UTF8.self)
      case UInt8(ascii: "\\"):
        index += 1
        try escape(into: &utf8)
      case 0..<0x20:
        throw expected("no control character in a string")
      default:
        utf8.append(byte)
        index += 1
      }
    }
  }

  /// The escape after a backslash.
  private mutating func escape(into utf8: inout [UInt8]) throws(EncoderRequestError) {
    guard let byte = peek else { throw expected("an escape") }
    index += 1
    switch byte {
    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(byte)
    case UInt8(ascii: "b"): utf8.append(0x08)
    case UInt8(ascii: "f"): utf8.append(0x0C)
    case UInt8(ascii: "n"): utf8.append(0x0A)
    case UInt8(ascii: "r"): utf8.append(0x0D)
    case UInt8(ascii: "t"): utf8.append(0x09)
    case UInt8(ascii: "u"):
      var code = try hexQuad()
      if (0xD800..<0xDC00).contains(code) {
        // A high surrogate: its low half must follow.
        guard peek == UInt8(ascii: "\\"), index + 1 < bytes.count,
          bytes[index + 1] == UInt8(ascii: "u")
        else { throw expected("a low surrogate") }
        index += 2
        let low = try hexQuad()
        guard (0xDC00..<0xE000).contains(low) else { throw expected("a low surrogate") }
        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
      }
      guard let scalar = Unicode.Scalar(code) else { throw expected("a Unicode scalar") }
      utf8.append(contentsOf: String(Character(scalar)).utf8)
    default:
      index -= 1
      throw expected("an escape")
    }
  }

  private mutating func hexQuad() throws(EncoderRequestError) -> UInt32 {
    var code: UInt32 = 0
    for _ in 0..<4 {
      guard let byte = peek else { throw expected("four hex digits") }
      let digit: UInt8
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
      case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
      case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
      default: throw expected("four hex digits")
      }
      code = code << 4 | UInt32(digit)
      index += 1
    }
    return code
  }
}
