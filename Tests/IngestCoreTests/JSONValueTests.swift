import Testing

@testable import IngestCore

@Suite struct JSONValueTests {
  @Test func parsesNestedValues() throws {
    let value = try JSONValue(
      parsing: #" {"a": [1, -2.5e2, true, false, null], "b": {"c": "x\"\u00e9\n"}, "d": 0} "#)
    #expect(value["a"]?.array?.count == 5)
    #expect(value["a"]?.array?[1].double == -250)
    #expect(value["a"]?.array?[2].bool == true)
    #expect(value["a"]?.array?[4] == .null)
    #expect(value["b"]?["c"]?.string == "x\"é\n")
    #expect(value["d"]?.int == 0)
    #expect(value.members?.map(\.0) == ["a", "b", "d"])
    #expect(value["missing"] == nil)
  }

  @Test func objectsCompareInOrder() throws {
    #expect(try JSONValue(parsing: #"{"a":1,"b":2}"#) == JSONValue(parsing: #"{"a":1,"b":2}"#))
    #expect(try JSONValue(parsing: #"{"a":1,"b":2}"#) != JSONValue(parsing: #"{"b":2,"a":1}"#))
  }

  @Test func intIsNilForHugeOrFractionalOutOfRange() throws {
    #expect(try JSONValue(parsing: "1e300").int == nil)
    #expect(try JSONValue(parsing: "42").int == 42)
  }

  @Test(arguments: ["", "{", "[1,", #"{"a" 1}"#, "tru", #""unterminated"#, "[1] x", "01x"])
  func malformedInputIsRefused(text: String) {
    #expect(throws: JSONParseError.self) { try JSONValue(parsing: text) }
  }

  @Test func deepNestingIsRefused() {
    let text = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
    #expect(throws: JSONParseError(offset: 64, expected: "at most 64 levels")) {
      try JSONValue(parsing: text)
    }
    #expect(throws: Never.self) { try JSONValue(parsing: "[[1]]", maximumDepth: 2) }
    #expect(throws: JSONParseError(offset: 1, expected: "at most 1 levels")) {
      try JSONValue(parsing: "[[1]]", maximumDepth: 1)
    }
  }

  @Test func errorsNameTheByteAndWhatWasExpected() {
    #expect(throws: JSONParseError(offset: 4, expected: "the end of the input")) {
      try JSONValue(parsing: "[1] x")
    }
    #expect(
      JSONParseError(offset: 3, expected: "a value").description == "expected a value at byte 3")
  }

  @Test func escapesResolveSurrogatePairs() throws {
    #expect(try JSONValue(parsing: #""\ud83c\udfa5 \u00e9\/""#).string == "\u{1F3A5} é/")
    #expect(throws: JSONParseError(offset: 7, expected: "a low surrogate")) {
      try JSONValue(parsing: #""\ud83c""#)
    }
  }

  /// Every member is kept in order; lookup finds the first of a name given twice.
  @Test func duplicateMembersAreKept() throws {
    let value = try JSONValue(parsing: #"{"a":1,"a":2}"#)
    #expect(value.members?.count == 2)
    #expect(value["a"]?.int == 1)
  }
}
