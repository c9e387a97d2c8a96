import Foundation
import IngestCore
import IngestTestSupport
import Testing

/// `ingest-encode --codec hevc` (libx265) as a real process on the test pattern.
@Suite struct HEVCEncoderTests {
  static let pattern = ["testsrc", "--codec", "hevc", "--size", "640x360", "--fps", "30"]

  private func applied(_ encoder: EncoderProcess, _ request: String) throws -> [String: Any] {
    try encoder.waitForEvent("\(request) to be applied") {
      $0["event"] as? String == "applied" && $0["request"] as? String == request
    }
  }

  @Test func theDumpIsHEVCAndReplaysToATransportStreamBothDecodersTakeCleanly() throws {
    let encoder = try EncoderProcess(Self.pattern + ["--duration", "3"])
    #expect(try encoder.finish() == 0, "\(encoder.stderr)")
    let inspect = try CommandRunner.ingest(["inspect", encoder.dump.path])
    #expect(inspect.status == 0, "\(inspect.stderr)")
    #expect(inspect.stdout.contains("HEVC Main, Main tier"), "\(inspect.stdout)")
    #expect(inspect.stdout.contains("640x360"), "\(inspect.stdout)")
    #expect(inspect.stdout.contains("anomalies none"), "\(inspect.stdout)")
    // libx265 logs only errors: the encoder's standard error is its JSON lines alone.
    #expect(encoder.stderr.split(separator: "\n").allSatisfy { $0.hasPrefix("{") })
    let ts = encoder.directory.appending(path: "out.ts").path
    let replay = try CommandRunner.ingest([
      "replay", encoder.dump.path, "--to", ts, "--speed", "max",
    ])
    #expect(replay.status == 0, "\(replay.stderr)")
    let probe = try CommandRunner.run(
      "ffprobe",
      [
        "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=codec_name,width,height",
        "-of", "csv=p=0", ts,
      ])
    #expect(probe.stdout.split(separator: "\n").first == "hevc,640,360")
    #expect(try CommandRunner.decodeErrors(ts) == "")
    let gstreamer = try GStreamerDecode.decode(ts, codec: "hevc")
    #expect(gstreamer.problems == [])
    #expect(gstreamer.frames == 90)
  }

  @Test func keyframeRequestGivesAnIRAPPictureOnTheNextFrame() throws {
    let encoder = try EncoderProcess(Self.pattern + ["--gop", "600", "--duration", "4"])
    try encoder.waitForFrames(45)
    encoder.send(#"{"request":"keyframe"}"#)
    let event = try applied(encoder, "keyframe")
    #expect(try encoder.finish() == 0, "\(encoder.stderr)")
    let video = try encoder.samples().filter { $0.kind == .video }
    let frame = try #require(event["frame"] as? Int)
    #expect(video.indices.filter { video[$0].keyframe } == [0, frame])
  }

  /// libx265 takes a bitrate only when opened: the request waits for the next keyframe, says so
  /// once, and from that keyframe on the bitrate is the one asked for.
  @Test func bitrateRequestTakesEffectAtTheNextKeyframeAndIsHonouredThere() throws {
    let encoder = try EncoderProcess(
      Self.pattern + ["--bitrate", "2000000", "--gop", "30", "--duration", "8"])
    try encoder.waitForFrames(75)
    encoder.send(#"{"request":"bitrate","target_bps":1000000}"#)
    let event = try applied(encoder, "bitrate")
    #expect(try encoder.finish() == 0, "\(encoder.stderr)")
    let notices = encoder.events().filter { $0["event"] as? String == "notice" }
    #expect(notices.count == 1, "\(encoder.stderr)")
    #expect(notices.first?["request"] as? String == "bitrate")
    let samples = try encoder.samples()
    let video = samples.filter { $0.kind == .video }
    let frame = try #require(event["frame"] as? Int)
    #expect(video[frame].keyframe, "frame \(frame) is no keyframe")
    #expect(frame % 30 == 0)
    let at = video[frame].pts
    func bits(_ range: Range<Int64>) -> Double {
      Double(video.filter { range.contains($0.pts) }.reduce(0) { $0 + $1.size }) * 8
    }
    let before = bits(at - 2_000_000_000..<at) / 2
    let after = bits(at..<at + 2_000_000_000) / 2
    print("HEVC bitrate before \(Int(before)) b/s, after \(Int(after)) b/s")
    #expect(abs(after / before - 0.5) <= 0.12, "before \(before), after \(after)")
    #expect(abs(after - 1_000_000) <= 250_000)
  }
}
