import Testing

@testable import IngestCore

@Suite struct EncoderRequestTests {
  /// Every request, and the line `ingest-encode` has always read for it.
  static let wire: [(EncoderRequest, String)] = [
    (.bitrate(1_200_000), #"{"request":"bitrate","target_bps":1200000}"#),
    (.bitrate(nil), #"{"request":"bitrate","restore":true}"#),
    (.frameRate(15), #"{"request":"frameRate","target_fps":15}"#),
    (.frameRate(12.5), #"{"request":"frameRate","target_fps":12.500"#),
    (.mic(false), #"{"request":"mic","enabled":false}"#),
    (.mic(true), #"{"request":"mic","enabled":true}"#),
    (.keyframe, #"{"request":"keyframe"}"#),
    (.keyframesOnly(true), #"{"request":"keyframesOnly","enabled":true}"#),
    (.keyframesOnly(false), #"{"request":"keyframesOnly","enabled":false}"#),
    (.profile(.constrainedBaseline), #"{"request":"profile","profile":"baseline"}"#),
    (.profile(.main), #"{"request":"profile","profile":"main"}"#),
    (.profile(.high), #"{"request":"profile","profile":"high"}"#),
  ]

  @Test func everyRequestIsWrittenInTheWireFormAndReadBack() throws {
    for (request, line) in Self.wire {
      #expect(request.line.hasPrefix(line), "\(request)")
      #expect(try EncoderRequest(line: request.line) == request, "\(request.line)")
    }
    #expect(try EncoderRequest(line: EncoderRequest.frameRate(29.97).line) == .frameRate(29.97))
  }

  @Test func readsTheFormsOtherWritersUse() throws {
    #expect(try EncoderRequest(line: #"{"request":"frameRate","fps":12.5}"#) == .frameRate(12.5))
    #expect(try EncoderRequest(line: #" { "request" : "keyframe" } "#) == .keyframe)
    #expect(
      try EncoderRequest(line: #"{"request":"bitrate","target_bps":1.2e6}"#) == .bitrate(1_200_000))
    #expect(
      try EncoderRequest(line: #"{"request":"bitrate","restore":false,"target_bps":50000}"#)
        == .bitrate(50_000))
    #expect(try EncoderRequest(line: #"{"request":"\u006beyframe"}"#) == .keyframe)
    // A status event line forwarded whole: the other members, nested ones too, are ignored.
    let event =
      #"{"event":"encoder","t":1.5,"output":2,"note":"a \"quoted\" \ud83c\udfa5","#
      + #""link":{"queue_ms":[1,2,{"x":null}]},"request":"mic","enabled":true}"#
    #expect(try EncoderRequest(line: event) == .mic(true))
  }

  @Test func malformedLinesThrowWhatIsWrong() {
    let cases: [(String, EncoderRequestError)] = [
      ("not json", .malformedJSON(offset: 0, expected: "an object")),
      ("[1,2]", .malformedJSON(offset: 0, expected: "an object")),
      ("", .malformedJSON(offset: 0, expected: "an object")),
      (#"{"request":"keyframe""#, .malformedJSON(offset: 21, expected: "',' or '}'")),
      (#"{"request":"keyframe"} x"#, .malformedJSON(offset: 23, expected: "the end of the line")),
      (#"{"request":"keyframe",}"#, .malformedJSON(offset: 22, expected: "a member name")),
      (#"{"request" "keyframe"}"#, .malformedJSON(offset: 11, expected: "':'")),
      (#"{"request":keyframe}"#, .malformedJSON(offset: 11, expected: "a value")),
      (#"{"request":tru}"#, .malformedJSON(offset: 11, expected: "true")),
      (#"{"a":01}"#, .malformedJSON(offset: 6, expected: "',' or '}'")),
      (#"{"a":1.}"#, .malformedJSON(offset: 7, expected: "a digit")),
      (#"{"a":"\x"}"#, .malformedJSON(offset: 7, expected: "an escape")),
      (#"{"a":"\ud83c"}"#, .malformedJSON(offset: 12, expected: "a low surrogate")),
      (
        "{\"a\":\"\u{1}\"}", .malformedJSON(offset: 6, expected: "no control character in a string")
      ),
      (
        String(repeating: "[", count: 20).replacingFirst("[", with: #"{"a":"#),
        .malformedJSON(offset: 20, expected: "at most 16 levels")
      ),
      (#"{"target_bps":1}"#, .missingMember("request")),
      (#"{"request":7}"#, .wrongType(member: "request", expected: "a string")),
      (#"{"request":"bitrate"}"#, .missingMember("target_bps")),
      (
        #"{"request":"bitrate","target_bps":"fast"}"#,
        .wrongType(member: "target_bps", expected: "a number")
      ),
      (
        #"{"request":"bitrate","target_bps":5}"#,
        .outOfRange(member: "target_bps", value: 5, allowed: "10000...200000000")
      ),
      (
        #"{"request":"bitrate","restore":1}"#,
        .wrongType(member: "restore", expected: "true or false")
      ),
      (#"{"request":"mic"}"#, .missingMember("enabled")),
      (#"{"request":"mic","enabled":1}"#, .wrongType(member: "enabled", expected: "true or false")),
      (
        #"{"request":"frameRate","target_fps":0}"#,
        .outOfRange(member: "target_fps", value: 0, allowed: "(0, 240]")
      ),
      (
        #"{"request":"frameRate","fps":1e999}"#,
        .outOfRange(member: "fps", value: .infinity, allowed: "(0, 240]")
      ),
      (#"{"request":"frameRate"}"#, .missingMember("target_fps")),
      (#"{"request":"warp"}"#, .unknownRequest("warp")),
      (#"{"request":"profile"}"#, .missingMember("profile")),
      (
        #"{"request":"profile","profile":"high10"}"#,
        .unknownValue(member: "profile", value: "high10", allowed: "baseline, main or high")
      ),
    ]
    for (line, expected) in cases {
      #expect(throws: expected, "\(line)") { try EncoderRequest(line: line) }
    }
    #expect(EncoderRequestError.unknownRequest("warp").description == #"unknown request "warp""#)
    #expect(
      EncoderRequestError.malformedJSON(offset: 3, expected: "a value").description
        == "not a JSON object: expected a value at byte 3")
  }

  /// What the decoder gives for `stream`, read to its end: requests and errors in order.
  private static func decode(_ pieces: [ArraySlice<UInt8>]) -> [Result<
    EncoderRequest, EncoderRequestError
  >] {
    var decoder = EncoderRequestDecoder()
    var results: [Result<EncoderRequest, EncoderRequestError>] = []
    func drain() {
      while true {
        do {
          guard let request = try decoder.next() else { return }
          results.append(.success(request))
        } catch {
          results.append(.failure(error))
        }
      }
    }
    for piece in pieces {
      decoder.append(piece)
      drain()
    }
    decoder.finish()
    drain()
    return results
  }

  @Test func aStreamReadsTheSameInEverySplit() {
    let text =
      Self.wire.map(\.0.line).joined(separator: "\n") + "\n\n  \r\n{\"request\":\"warp\"}\r\n"
      + EncoderRequest.keyframe.line
    let bytes = Array(text.utf8)
    let expected =
      Self.wire.map { Result<EncoderRequest, EncoderRequestError>.success($0.0) } + [
        .failure(.unknownRequest("warp")), .success(.keyframe),
      ]
    #expect(Self.decode([bytes[...]]) == expected)
    for cut in 0...bytes.count {
      #expect(Self.decode([bytes[..<cut], bytes[cut...]]) == expected, "cut at \(cut)")
    }
    #expect(Self.decode(bytes.indices.map { bytes[$0...$0] }) == expected)
  }

  @Test func aShortLineIsNotReadUntilItEnds() throws {
    var decoder = EncoderRequestDecoder()
    decoder.append(#"{"request":"key"#.utf8)
    #expect(try decoder.next() == nil)
    decoder.append(#"frame"}"#.utf8)
    #expect(try decoder.next() == nil)
    decoder.append([0x0A])
    #expect(try decoder.next() == .keyframe)
    #expect(try decoder.next() == nil)
  }

  @Test func anOverlongLineIsSkippedWholeAndReportedOnce() throws {
    var decoder = EncoderRequestDecoder()
    let long = #"{"request":"keyframe","pad":""# + String(repeating: "x", count: 10_000) + "\"}\n"
    decoder.append(long.utf8)
    decoder.append((EncoderRequest.mic(false).line + "\n").utf8)
    #expect(throws: EncoderRequestError.lineTooLong(limit: 4096)) { try decoder.next() }
    #expect(try decoder.next() == .mic(false))
    #expect(try decoder.next() == nil)
  }

  @Test func aRejectedLineIsKeptForItsReport() throws {
    var decoder = EncoderRequestDecoder()
    decoder.append("{not json\n".utf8)
    #expect(throws: EncoderRequestError.self) { try decoder.next() }
    #expect(decoder.lastRejectedLine == "{not json")
  }
}

extension String {
  fileprivate func replacingFirst(_ target: Character, with replacement: String) -> String {
    guard let index = firstIndex(of: target) else { return self }
    return String(self[..<index]) + replacement + String(self[self.index(after: index)...])
  }
}
