/// Builds one JSON object as text, in insertion order (status events are read by people too).
public struct JSONObject: Sendable {
  private var text = "{"
  private var empty = true

  public init() {}

  private mutating func key(_ name: String) {
    if !empty { text += "," }
    empty = false
    text += Self.quoted(name) + ":"
  }

  public mutating func add(_ name: String, _ value: String) {
    key(name)
    text += Self.quoted(value)
  }

  public mutating func add(_ name: String, _ value: Int) {
    key(name)
    text += String(value)
  }

  public mutating func add(_ name: String, _ value: Int64) {
    key(name)
    text += String(value)
  }

  public mutating func add(_ name: String, _ value: Bool) {
    key(name)
    text += value ? "true" : "false"
  }

  /// Adds a number with a fixed count of decimals (JSON has no NaN or infinity: those become null).
  public mutating func add(_ name: String, _ value: Double, decimals: Int = 3) {
    key(name)
    text += value.isFinite ? Self.fixed(value, decimals: decimals) : "null"
  }

  public mutating func add(_ name: String, _ value: JSONObject) {
    key(name)
    text += value.rendered
  }

  /// Adds JSON text made elsewhere (a line another process wrote) as the value, when it is an
  /// object; anything else goes in as a string, so the result stays valid JSON.
  public mutating func add(_ name: String, jsonObjectText text: String) {
    let trimmed = text.trimmingSpaces
    if trimmed.hasPrefix("{") && trimmed.hasSuffix("}") && !trimmed.contains("\n") {
      key(name)
      self.text += trimmed
    } else {
      add(name, text)
    }
  }

  public mutating func addNull(_ name: String) {
    key(name)
    text += "null"
  }

  /// Adds an array of already-built objects.
  public mutating func add(_ name: String, _ values: [JSONObject]) {
    key(name)
    text += "[" + values.map(\.rendered).joined(separator: ",") + "]"
  }

  /// Adds an array of strings.
  public mutating func add(_ name: String, _ values: [String]) {
    key(name)
    text += "[" + values.map(Self.quoted).joined(separator: ",") + "]"
  }

  /// Appends every member of `other`, in its order.
  public mutating func merge(_ other: JSONObject) {
    guard !other.empty else { return }
    if !empty { text += "," }
    empty = false
    text += other.text.dropFirst()
  }

  /// The object as JSON text.
  public var rendered: String { text + "}" }

  /// `value` rounded to `decimals` places, without exponent notation.
  public static func fixed(_ value: Double, decimals: Int) -> String {
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let scaled = (abs(value) * scale).rounded()
    guard scaled < 9e18 else { return String(value) }
    let whole = Int64(scaled)
    let unit = Int64(scale)
    var result = (value < 0 && whole != 0 ? "-" : "") + String(whole / unit)
    if decimals > 0 {
      let fraction = String(whole % unit)
      result += "." + String(repeating: "0", count: decimals - fraction.count) + fraction
    }
    return result
  }

  /// A JSON string literal with the required escapes.
  public static func quoted(_ value: String) -> String {
    var out = "\""
    for scalar in value.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      case _ where scalar.value < 0x20:
        let hex = String(scalar.value, radix: 16)
        out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: out.unicodeScalars.append(scalar)
      }
    }
    return out + "\""
  }
}

extension String {
  fileprivate var trimmingSpaces: Substring {
    var slice = self[...]
    while slice.first == " " || slice.first == "\r" { slice = slice.dropFirst() }
    while slice.last == " " || slice.last == "\r" { slice = slice.dropLast() }
    return slice
  }
}
