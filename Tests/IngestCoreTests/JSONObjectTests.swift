import Testing

@testable import IngestCore

@Suite struct JSONObjectTests {
  @Test func membersKeepTheirOrderAndTypes() {
    var inner = JSONObject()
    inner.add("kind", "video")
    var object = JSONObject()
    object.add("event", "start")
    object.add("count", 3)
    object.add("bytes", Int64(1) << 40)
    object.add("ok", false)
    object.add("t", 1.23456)
    object.add("track", inner)
    object.add("tracks", [inner, inner])
    object.addNull("missing")
    #expect(
      object.rendered
        == #"{"event":"start","count":3,"bytes":1099511627776,"ok":false,"t":1.235,"#
        + #""track":{"kind":"video"},"tracks":[{"kind":"video"},{"kind":"video"}],"missing":null}"#)
  }

  @Test func emptyObjectIsBraces() {
    #expect(JSONObject().rendered == "{}")
  }

  @Test func stringsAreEscaped() {
    var object = JSONObject()
    object.add("text", "a\"b\\c\nd\u{1}é")
    #expect(object.rendered == #"{"text":"a\"b\\c\nd\u0001é"}"#)
  }

  @Test func nonFiniteNumbersBecomeNull() {
    var object = JSONObject()
    object.add("nan", Double.nan)
    object.add("inf", Double.infinity)
    #expect(object.rendered == #"{"nan":null,"inf":null}"#)
  }

  @Test(arguments: [
    (0.0, 3, "0.000"), (-0.0004, 3, "0.000"), (-1.5, 1, "-1.5"), (2.0 / 3, 2, "0.67"),
    (1234.5, 0, "1235"),
  ])
  func fixedDecimals(value: Double, decimals: Int, expected: String) {
    #expect(JSONObject.fixed(value, decimals: decimals) == expected)
  }

  @Test func mergeAppendsMembers() {
    var first = JSONObject()
    first.add("a", 1)
    var second = JSONObject()
    second.add("b", 2)
    second.add("c", "x")
    first.merge(second)
    first.merge(JSONObject())
    #expect(first.rendered == #"{"a":1,"b":2,"c":"x"}"#)
    var empty = JSONObject()
    empty.merge(second)
    #expect(empty.rendered == #"{"b":2,"c":"x"}"#)
  }
}
