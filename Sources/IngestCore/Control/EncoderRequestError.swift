/// Why a line on the encoder's input is not a request. The reader reports it and goes on with
/// the next line: one bad line never stops the encoder.
public enum EncoderRequestError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The line is not one JSON object: what was `expected` at byte `offset` of the line.
  case malformedJSON(offset: Int, expected: String)
  /// A member the request needs is absent.
  case missingMember(String)
  /// A member holds another kind of value than the request needs.
  case wrongType(member: String, expected: String)
  /// A number outside what the encoder takes.
  case outOfRange(member: String, value: Double, allowed: String)
  /// A string member holds a value the request does not know.
  case unknownValue(member: String, value: String, allowed: String)
  /// A `request` the encoder does not know.
  case unknownRequest(String)
  /// The line is longer than any request (`EncoderRequestDecoder.maximumLineBytes`); it is
  /// skipped whole.
  case lineTooLong(limit: Int)

  public var description: String {
    switch self {
    case .malformedJSON(let offset, let expected):
      "not a JSON object: expected \(expected) at byte \(offset)"
    case .missingMember(let member): "no \"\(member)\""
    case .wrongType(let member, let expected): "\"\(member)\" must be \(expected)"
    case .outOfRange(let member, let value, let allowed):
      "\(member) \(JSONObject.fixed(value, decimals: 3)) is out of \(allowed)"
    case .unknownValue(let member, let value, let allowed):
      "\"\(member)\" \(JSONObject.quoted(String(value.prefix(40)))) is not \(allowed)"
    case .unknownRequest(let name): "unknown request \(JSONObject.quoted(name))"
    case .lineTooLong(let limit): "a line longer than \(limit) bytes"
    }
  }
}
