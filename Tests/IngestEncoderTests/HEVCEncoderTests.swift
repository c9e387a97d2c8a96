import Foundation
import IngestCore
import IngestTestSupport
import XCTest

/// `ingest-encode --codec hevc` (libx265) as a real process on the test pattern.
final class HEVCEncoderTests: XCTestCase {
  static let pattern = ["testsrc", "--codec", "hevc", "--size", "640x360", "--fps", "30"]

  private func applied(_ encoder: EncoderProcess, _ request: String) throws -> [String: Any] {
    try encoder.waitForEvent("\(request) to be applied") {
      $0["event"] as? String == "applied" && $0["request"] as? String == request
    }
  }

  func testTheDumpIsHEVCAndReplaysToATransportStreamBothDecodersTakeCleanly() throws {
    let encoder = try EncoderProcess(Self.pattern + ["--duration", "3"])
    XCTAssertEqual(try encoder.finish(), 0, encoder.stderr)
    let inspect = try CommandRunner.ingest(["inspect", encoder.dump.path])
    XCTAssertEqual(inspect.status, 0, inspect.stderr)
    XCTAssertTrue(inspect.stdout.contains("HEVC Main, Main tier"), inspect.stdout)
    XCTAssertTrue(inspect.stdout.contains("640x360"), inspect.stdout)
    XCTAssertTrue(inspect.stdout.contains("anomalies none"), inspect.stdout)
    // libx265 logs only errors: the encoder's standard error is its JSON lines alone.
    XCTAssertTrue(encoder.stderr.split(separator: "\n").allSatisfy { $0.hasPrefix("{") })
    let ts = encoder.directory.appending(path: "out.ts").path
    let replay = try CommandRunner.ingest([
      "replay", encoder.dump.path, "--to", ts, "--speed", "max",
    ])
    XCTAssertEqual(replay.status, 0, replay.stderr)
    let probe = try CommandRunner.run(
      "ffprobe",
      [
        "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=codec_name,width,height",
        "-of", "csv=p=0", ts,
      ])
    XCTAssertEqual(probe.stdout.split(separator: "\n").first, "hevc,640,360")
    XCTAssertEqual(try CommandRunner.decodeErrors(ts), "")
    let gstreamer = try GStreamerDecode.decode(ts, codec: "hevc")
    XCTAssertEqual(gstreamer.problems, [])
    XCTAssertEqual(gstreamer.frames, 90)
  }

  func testKeyframeRequestGivesAnIRAPPictureOnTheNextFrame() throws {
    let encoder = try EncoderProcess(Self.pattern + ["--gop", "600", "--duration", "4"])
    try encoder.waitForFrames(45)
    encoder.send(#"{"request":"keyframe"}"#)
    let event = try applied(encoder, "keyframe")
    XCTAssertEqual(try encoder.finish(), 0, encoder.stderr)
    let video = try encoder.samples().filter { $0.kind == .video }
    let frame = try XCTUnwrap(event["frame"] as? Int)
    XCTAssertEqual(video.indices.filter { video[$0].keyframe }, [0, frame])
  }

  /// libx265 takes a bitrate only when opened: the request waits for the next keyframe, says so
  /// once, and from that keyframe on the bitrate is the one asked for.
  func testBitrateRequestTakesEffectAtTheNextKeyframeAndIsHonouredThere() throws {
    let encoder = try EncoderProcess(
      Self.pattern + ["--bitrate", "2000000", "--gop", "30", "--duration", "8"])
    try encoder.waitForFrames(75)
    encoder.send(#"{"request":"bitrate","target_bps":1000000}"#)
    let event = try applied(encoder, "bitrate")
    XCTAssertEqual(try encoder.finish(), 0, encoder.stderr)
    let notices = encoder.events().filter { $0["event"] as? String == "notice" }
    XCTAssertEqual(notices.count, 1, encoder.stderr)
    XCTAssertEqual(notices.first?["request"] as? String, "bitrate")
    let samples = try encoder.samples()
    let video = samples.filter { $0.kind == .video }
    let frame = try XCTUnwrap(event["frame"] as? Int)
    XCTAssertTrue(video[frame].keyframe, "frame \(frame) is no keyframe")
    XCTAssertEqual(frame % 30, 0)
    let at = video[frame].pts
    func bits(_ range: Range<Int64>) -> Double {
      Double(video.filter { range.contains($0.pts) }.reduce(0) { $0 + $1.size }) * 8
    }
    let before = bits(at - 2_000_000_000..<at) / 2
    let after = bits(at..<at + 2_000_000_000) / 2
    print("HEVC bitrate before \(Int(before)) b/s, after \(Int(after)) b/s")
    XCTAssertEqual(after / before, 0.5, accuracy: 0.12, "before \(before), after \(after)")
    XCTAssertEqual(after, 1_000_000, accuracy: 250_000)
  }
}
