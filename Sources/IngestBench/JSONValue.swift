/// A parsed JSON document: enough of JSON for the benchmark's parent process to read what its
/// scenario processes print (objects, arrays, strings, numbers, booleans, null).
public enum JSONValue: Sendable, Equatable {
  case object([(String, JSONValue)])
  case array([JSONValue])
  case string(String)
  case number(Double)
  case bool(Bool)
  case null

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

  /// The member `key` of an object.
  public subscript(key: String) -> JSONValue? {
    guard case .object(let members) = self else { return nil }
    return members.first { $0.0 == key }?.1
  }

  public var double: Double? { if case .number(let value) = self { value } else { nil } }
  public var int: Int? { double.flatMap { $0.isFinite && abs($0) < 9e18 ? Int($0) : nil } }
  public var string: String? { if case .string(let value) = self { value } else { nil } }
  public var bool: Bool? { if case .bool(let value) = self { value } else { nil } }
  public var array: [JSONValue]? { if case .array(let values) = self { values } else { nil } }
  public var members: [(String, JSONValue)]? {
    if case .object(let members) = self { members } else { nil }
  }

  /// Parses one JSON document.
  /// - Throws: `JSONParseError` with the byte offset of the problem.
  public init(parsing text: String) throws(JSONParseError) {
    var parser = Parser(bytes: Array(text.utf8))
    self = try parser.value(depth: 0)
    parser.skipSpace()
    guard parser.position == parser.bytes.count else { throw .unexpected(offset: parser.position) }
  }

  private struct Parser {
    let bytes: [UInt8]
    var position = 0

    mutating func skipSpace() {
      while position < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[position]) {
        position += 1
      }
    }

    mutating func expect(_ literal: String) throws(JSONParseError) {
      for byte in literal.utf8 {
        guard position < bytes.count, bytes[position] == byte else {
          throw .unexpected(offset: position)
        }
        position += 1
      }
    }

    mutating func value(depth: Int) throws(JSONParseError) -> JSONValue {
      guard depth < 64 else { throw .tooDeep(offset: position) }
      skipSpace()
      guard position < bytes.count else { throw .unexpectedEnd }
      switch bytes[position] {
      case UInt8(ascii: "{"):
        position += 1
        var members: [(String, JSONValue)] = []
        skipSpace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
          position += 1
          return .object(members)
        }
        while true {
          skipSpace()
          let key = try string()
          skipSpace()
          try expect(":")
          members.append((key, try value(depth: depth + 1)))
          skipSpace()
          guard position < bytes.count else { throw .unexpectedEnd }
          if bytes[position] == UInt8(ascii: ",") {
            position += 1
            continue
          }
          try expect("}")
          return .object(members)
        }
      case UInt8(ascii: "["):
        position += 1
        var values: [JSONValue] = []
        skipSpace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
          position += 1
          return .array(values)
        }
        while true {
          values.append(try value(depth: depth + 1))
          skipSpace()
          guard position < bytes.count else { throw .unexpectedEnd }
          if bytes[position] == UInt8(ascii: ",") {
            position += 1
            continue
          }
          try expect("]")
          return .array(values)
        }
      case UInt8(ascii: "\""): return .string(try string())
      case UInt8(ascii: "t"):
        try expect("true")
        return .bool(true)
      case UInt8(ascii: "f"):
        try expect("false")
        return .bool(false)
      case UInt8(ascii: "n"):
        try expect("null")
        return .null
      default: return .number(try number())
      }
    }

    mutating func number() throws(JSONParseError) -> Double {
      let start = position
      while position < bytes.count,
        "+-0123456789.eE".utf8.contains(bytes[position])
      {
        position += 1
      }
      guard position > start,
        let value = Double(String(decoding: bytes[start..<position], as: UTF8.self))
      else { throw .unexpected(offset: start) }
      return value
    }

    mutating func string() throws(JSONParseError) -> String {
      try expect("\"")
      var scalars = String.UnicodeScalarView()
      var run: [UInt8] = []
      func flush() {
        scalars.append(contentsOf: String(decoding: run, as: UTF8.self).unicodeScalars)
        run.removeAll(keepingCapacity: true)
      }
      while true {
        guard position < bytes.count else { throw .unexpectedEnd }
        let byte = bytes[position]
        position += 1
        if byte == UInt8(ascii: "\"") { break }
        guard byte == UInt8(ascii: "\\") else {
          run.append(byte)
          continue
        }
        guard position < bytes.count else { throw .unexpectedEnd }
        let escape = bytes[position]
        position += 1
        switch escape {
        case UInt8(ascii: "n"): run.append(0x0A)
        case UInt8(ascii: "r"): run.append(0x0D)
        case UInt8(ascii: "t"): run.append(0x09)
        case UInt8(ascii: "b"): run.append(0x08)
        case UInt8(ascii: "f"): run.append(0x0C)
        case UInt8(ascii: "u"):
          guard position + 4 <= bytes.count,
            let code = UInt32(
              String(decoding: bytes[position..<position + 4], as: UTF8.self), radix: 16)
          else { throw .unexpected(offset: position) }
          position += 4
          flush()
          scalars.append(Unicode.Scalar(code) ?? "\u{FFFD}")
        default: run.append(escape)
        }
      }
      flush()
      return String(scalars)
    }
  }
}

/// Why a JSON document could not be parsed.
public enum JSONParseError: Error, Equatable, Sendable, CustomStringConvertible {
  case unexpected(offset: Int)
  case unexpectedEnd
  case tooDeep(offset: Int)

  public var description: String {
    switch self {
    case .unexpected(let offset): "unexpected character at byte \(offset)"
    case .unexpectedEnd: "unexpected end of input"
    case .tooDeep(let offset): "nesting too deep at byte \(offset)"
    }
  }
}
