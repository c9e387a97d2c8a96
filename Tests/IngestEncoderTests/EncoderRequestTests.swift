import IngestEncoder
import XCTest

final class EncoderRequestTests: XCTestCase {
  func testAcceptsWhatTheStatusReporterEmits() throws {
    XCTAssertEqual(
      try EncoderRequest(line: #"{"request":"bitrate","target_bps":1200000}"#), .bitrate(1_200_000))
    XCTAssertEqual(
      try EncoderRequest(line: #"{"request":"bitrate","restore":true}"#), .bitrate(nil))
    XCTAssertEqual(
      try EncoderRequest(line: #"{"request":"frameRate","target_fps":15}"#), .frameRate(15))
    XCTAssertEqual(
      try EncoderRequest(line: #"{"request":"frameRate","fps":12.5}"#), .frameRate(12.5))
    XCTAssertEqual(try EncoderRequest(line: #"{"request":"mic","enabled":false}"#), .mic(false))
    XCTAssertEqual(try EncoderRequest(line: #"{"request":"keyframe"}"#), .keyframe)
    XCTAssertEqual(
      try EncoderRequest(line: #"{"request":"keyframesOnly","enabled":true}"#), .keyframesOnly(true)
    )
    // A status event line forwarded whole: the extra members are ignored.
    XCTAssertEqual(
      try EncoderRequest(line: #"{"event":"encoder","t":1.5,"request":"keyframe"}"#), .keyframe)
  }

  func testRejectsMalformedLinesWithAReason() {
    let cases = [
      "not json", "[1,2]", #"{"target_bps":1}"#, #"{"request":"bitrate"}"#,
      #"{"request":"bitrate","target_bps":"fast"}"#, #"{"request":"bitrate","target_bps":5}"#,
      #"{"request":"mic","enabled":1}"#, #"{"request":"frameRate","target_fps":0}"#,
      #"{"request":"warp"}"#,
    ]
    for line in cases {
      XCTAssertThrowsError(try EncoderRequest(line: line), line) { error in
        XCTAssertFalse((error as? EncoderRequestError)?.reason.isEmpty ?? true, line)
      }
    }
  }
}
