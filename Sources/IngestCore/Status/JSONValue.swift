/// A parsed JSON value: the reader for what `JSONObject` writes (status lines, benchmark
/// results) and for the encoder's requests; IngestCore has no Foundation.
///
/// Follows RFC 8259's grammar (no comments, no trailing commas, no bare words, no leading zeros,
/// no raw control characters in strings). An object keeps its members in order, a member given
/// twice included. Nesting is limited, so hostile input cannot exhaust the stack.
public enum JSONValue: Sendable, Equatable {
  /// An object's members in the order written, a name given twice kept twice.
  case object([(String, JSONValue)])
  case array([JSONValue])
  case string(String)
  /// Any number; one too large for a Double reads as infinity.
  case number(Double)
  case bool(Bool)
  case null

  /// Equal values; objects compare member by member, in order (tuples are not `Equatable`,
  /// hence no synthesized conformance).
  public static func == (a: JSONValue, b: JSONValue) -> Bool {
    switch (a, b) {
    case (.object(let x), .object(let y)):
      x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
    case (.array(let x), .array(let y)): x == y
    case (.string(let x), .string(let y)): x == y
    case (.number(let x), .number(let y)): x == y
    case (.bool(let x), .bool(let y)): x == y
    case (.null, .null): true
    default: false
    }
  }

  /// The first member named `key` of an object; nil for a missing member or another kind of
  /// value.
  public subscript(key: String) -> JSONValue? {
    guard case .object(let members) = self else { return nil }
    return members.first { $0.0 == key }?.1
  }

  /// The number, if this is one.
  public var double: Double? { if case .number(let value) = self { value } else { nil } }
  /// The number as an integer (fraction dropped), if this is one that fits.
  public var int: Int? { double.flatMap { $0.isFinite && abs($0) < 9e18 ? Int($0) : nil } }
  /// The string, if this is one.
  public var string: String? { if case .string(let value) = self { value } else { nil } }
  /// The boolean, if this is one.
  public var bool: Bool? { if case .bool(let value) = self { value } else { nil } }
  /// The elements, if this is an array.
  public var array: [JSONValue]? { if case .array(let values) = self { values } else { nil } }
  /// The members in order, if this is an object.
  public var members: [(String, JSONValue)]? {
    if case .object(let members) = self { members } else { nil }
  }

  /// Parses one JSON text: one value, spaces around it allowed.
  /// - Parameter maximumDepth: how many levels of objects and arrays are taken.
  /// - Throws: `JSONParseError` naming what was expected at which byte.
  public init(parsing text: String, maximumDepth: Int = 64) throws(JSONParseError) {
    var parser = Parser(bytes: Array(text.utf8), maximumDepth: maximumDepth)
    parser.skipSpace()
    self = try parser.value(depth: 0)
    try parser.end("the end of the input")
  }

  /// The members of the object `line` holds (spaces around it allowed), in order: a line of a
  /// JSON-lines protocol such as the encoder's requests, where anything but an object is refused
  /// at its first byte.
  /// - Throws: `JSONParseError` naming what was expected at which byte.
  static func members(ofLine line: [UInt8], maximumDepth: Int) throws(JSONParseError)
    -> [(String, JSONValue)]
  {
    var parser = Parser(bytes: line, maximumDepth: maximumDepth)
    parser.skipSpace()
    guard parser.peek == UInt8(ascii: "{") else { throw parser.expected("an object") }
    let members = try parser.object(depth: 1)
    try parser.end("the end of the line")
    return members
  }

  private struct Parser {
    let bytes: [UInt8]
    let maximumDepth: Int
    var index = 0

    var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    func expected(_ what: String) -> JSONParseError {
      JSONParseError(offset: index, expected: what)
    }

    mutating func skipSpace() {
      while let byte = peek, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
        index += 1
      }
    }

    /// Nothing but spaces left; `what` names the end in the error.
    mutating func end(_ what: String) throws(JSONParseError) {
      skipSpace()
      guard peek == nil else { throw expected(what) }
    }

    mutating func consume(_ byte: UInt8, _ what: String) throws(JSONParseError) {
      guard peek == byte else { throw expected(what) }
      index += 1
    }

    /// A value at `depth` levels of objects and arrays, from its first byte.
    mutating func value(depth: Int) throws(JSONParseError) -> JSONValue {
      guard let byte = peek else { throw expected("a value") }
      switch byte {
      case UInt8(ascii: "{"): return .object(try object(depth: depth + 1))
      case UInt8(ascii: "["): return .array(try array(depth: depth + 1))
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

    /// An object, from its `{`; `depth` counts it.
    mutating func object(depth: Int) throws(JSONParseError) -> [(String, JSONValue)] {
      guard depth <= maximumDepth else { throw expected("at most \(maximumDepth) levels") }
      index += 1
      var members: [(String, JSONValue)] = []
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
        members.append((key, try value(depth: depth)))
        skipSpace()
        if peek == UInt8(ascii: "}") {
          index += 1
          return members
        }
        try consume(UInt8(ascii: ","), "',' or '}'")
      }
    }

    /// An array, from its `[`; `depth` counts it.
    mutating func array(depth: Int) throws(JSONParseError) -> [JSONValue] {
      guard depth <= maximumDepth else { throw expected("at most \(maximumDepth) levels") }
      index += 1
      var values: [JSONValue] = []
      skipSpace()
      if peek == UInt8(ascii: "]") {
        index += 1
        return values
      }
      while true {
        skipSpace()
        values.append(try value(depth: depth))
        skipSpace()
        if peek == UInt8(ascii: "]") {
          index += 1
          return values
        }
        try consume(UInt8(ascii: ","), "',' or ']'")
      }
    }

    mutating func literal(_ word: StaticString) throws(JSONParseError) {
      let start = index
      for byte in UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount) {
        guard peek == byte else {
          index = start
          throw expected("\(word)")
        }
        index += 1
      }
    }

    mutating func digits() throws(JSONParseError) {
      guard let byte = peek, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else {
        throw expected("a digit")
      }
      while let byte = peek, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { index += 1 }
    }

    mutating func number() throws(JSONParseError) -> Double {
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
      // The grammar above is a subset of what Double parses; a huge exponent reads as
      // infinity, which every range check refuses.
      guard let value = Double(String(decoding: bytes[start..<index], as: UTF8.self)) else {
        index = start
        throw expected("a number")
      }
      return value
    }

    /// A string, from its opening quote, with its escapes resolved.
    mutating func string() throws(JSONParseError) -> String {
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
    mutating func escape(into utf8: inout [UInt8]) throws(JSONParseError) {
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

    mutating func hexQuad() throws(JSONParseError) -> UInt32 {
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
}

/// Why a JSON text could not be parsed: what was `expected` at byte `offset` of it.
public struct JSONParseError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The byte of the text where the parser stopped.
  public let offset: Int
  /// What would have been valid there, in words ("a value", "',' or '}'").
  public let expected: String

  public var description: String { "expected \(expected) at byte \(offset)" }
}
