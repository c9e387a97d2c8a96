import Testing

@testable import IngestBench

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
    #expect(throws: JSONParseError.self) { try JSONValue(parsing: text) }
  }
}
