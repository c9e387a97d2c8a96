import Foundation
import IngestCore
import IngestTestSupport
import Testing

/// `ingest-encode` as a real process on the test pattern: each request changes what comes out,
/// checked on the dump it wrote. Runs are bounded by `--duration`; no assertion is on wall time.
@Suite struct EncoderProcessTests {
  /// Small pictures keep two shared cores ahead of real time.
  static let pattern = ["testsrc", "--size", "640x360", "--fps", "30"]

  /// The `applied` event for `request`, once the encoder has echoed it.
  private func applied(_ encoder: EncoderProcess, _ request: String) throws -> [String: Any] {
    try encoder.waitForEvent("\(request) to be applied") {
      $0["event"] as? String == "applied" && $0["request"] as? String == request
    }
  }

  private func bits(
    _ samples: [(kind: SampleKind, pts: Int64, size: Int, keyframe: Bool)], _ range: Range<Int64>
  ) -> Double {
    Double(
      samples.filter { $0.kind == .video && range.contains($0.pts) }.reduce(0) { $0 + $1.size })
      * 8
  }

  @Test func bitrateRequestHalvesTheBitrateOfTheFollowingTwoSeconds() throws {
    let encoder = try EncoderProcess(Self.pattern + ["--bitrate", "2000000", "--duration", "7"])
    try encoder.waitForFrames(90)
    encoder.send(#"{"request":"bitrate","target_bps":1000000}"#)
    let event = try applied(encoder, "bitrate")
    #expect(try encoder.finish() == 0, "\(encoder.stderr)")
    let at = try #require(event["pts_ns"] as? Int64)
    let samples = try encoder.samples()
    let before = bits(samples, at - 2_000_000_000..<at) / 2
    let after = bits(samples, at..<at + 2_000_000_000) / 2
    print("bitrate before \(Int(before)) b/s, after \(Int(after)) b/s")
    #expect(abs(after / before - 0.5) <= 0.1, "before \(before), after \(after)")
    #expect(abs(after - 1_000_000) <= 200_000)
    // The request took effect on the frame it names: the first encoded after it arrived.
    let first = try #require(samples.filter { $0.kind == .video }.firstIndex { $0.pts == at })
    #expect(first == event["frame"] as? Int)
  }

  @Test func frameRateRequestHalvesTheFrameCountAndKeepsTimestampsTrue() throws {
    let encoder = try EncoderProcess(Self.pattern + ["--duration", "6"])
    try encoder.waitForFrames(60)
    encoder.send(#"{"request":"frameRate","target_fps":15}"#)
    let at = try #require(applied(encoder, "frameRate")["pts_ns"] as? Int64)
    #expect(try encoder.finish() == 0, "\(encoder.stderr)")
    let video = try encoder.samples().filter { $0.kind == .video }
    let before = video.filter { (at - 2_000_000_000..<at).contains($0.pts) }.count
    let after = video.filter { (at..<at + 2_000_000_000).contains($0.pts) }.count
    #expect(before == 60)
    #expect(abs(after - 30) <= 1)
    // Kept frames keep the source's times: two source frame intervals apart.
    let kept = video.filter { $0.pts >= at }.map(\.pts)
    for (earlier, later) in zip(kept, kept.dropFirst()) {
      #expect(abs(Double(later - earlier) - 2e9 / 30) <= 2e6)
    }
  }

  @Test func keyframeRequestGivesAnIDROnTheNextFrame() throws {
    // A GOP longer than the run: the only IDRs are the first frame and the requested one.
    let encoder = try EncoderProcess(Self.pattern + ["--gop", "600", "--duration", "4"])
    try encoder.waitForFrames(45)
    encoder.send(#"{"request":"keyframe"}"#)
    let event = try applied(encoder, "keyframe")
    #expect(try encoder.finish() == 0, "\(encoder.stderr)")
    let video = try encoder.samples().filter { $0.kind == .video }
    let frame = try #require(event["frame"] as? Int)
    #expect(video.indices.filter { video[$0].keyframe } == [0, frame])
    // Within one frame of the request's arrival.
    let received = try #require(event["received_ns"] as? Int64)
    let previous = video[frame - 1].pts
    #expect(previous <= received + 1_000_000_000 / 30)
  }

  /// `--profile high`, then a profile request and a keyframe request: libx264 reopens in
  /// Constrained Baseline on that keyframe, whose format record (the new SPS) comes first.
  @Test func profileRequestReopensTheEncoderInTheProfileAtTheKeyframe() throws {
    let encoder = try EncoderProcess(
      Self.pattern + ["--profile", "high", "--gop", "600", "--duration", "3"])
    try encoder.waitForFrames(30)
    encoder.send(#"{"request":"profile","profile":"baseline"}"#)
    encoder.send(#"{"request":"keyframe"}"#)
    let event = try applied(encoder, "profile")
    #expect(try encoder.finish() == 0, "\(encoder.stderr)")
    let frame = try #require(event["frame"] as? Int)
    #expect(event["profile"] as? String == "baseline")
    let formats = try encoder.videoFormats()
    #expect(formats.map { H264ProfileLevelID($0.format).profile } == [.high, .constrainedBaseline])
    #expect(formats.last?.samplesBefore == frame)
    let video = try encoder.samples().filter { $0.kind == .video }
    #expect(video.indices.filter { video[$0].keyframe } == [0, frame])
  }

  @Test func micOffKeepsTheMicTrackAliveAndTheDumpReplaysCleanly() throws {
    let encoder = try EncoderProcess(Self.pattern + ["--duration", "5"])
    try encoder.waitForFrames(60)
    encoder.send(#"{"request":"mic","enabled":false}"#)
    let at = try #require(applied(encoder, "mic")["pts_ns"] as? Int64)
    #expect(try encoder.finish() == 0, "\(encoder.stderr)")
    let samples = try encoder.samples()
    let video = samples.filter { $0.kind == .video }
    let mic = samples.filter { $0.kind == .audioMic }.map(\.pts)
    // Silence keeps the track's clock running to the end, with no hole.
    #expect(mic.filter { $0 > at }.count > 100)
    let (lastMic, lastVideo) = (try #require(mic.last), try #require(video.last?.pts))
    #expect(lastMic >= lastVideo - 50_000_000)
    for (earlier, later) in zip(mic, mic.dropFirst()) {
      #expect(abs(Double(later - earlier) - 1024e9 / 48000) <= 1)
    }

    let inspect = try CommandRunner.ingest(["inspect", encoder.dump.path])
    #expect(inspect.status == 0, "\(inspect.stderr)")
    #expect(inspect.stdout.contains("audioMic"), "\(inspect.stdout)")
    #expect(inspect.stdout.contains("anomalies none"), "\(inspect.stdout)")
    let ts = encoder.directory.appending(path: "out.ts").path
    let replay = try CommandRunner.ingest([
      "replay", encoder.dump.path, "--to", ts, "--speed", "max",
    ])
    #expect(replay.status == 0, "\(replay.stderr)")
    #expect(try CommandRunner.decodeErrors(ts) == "")
    #expect(try CommandRunner.streams(ts) == ["h264", "aac,48000,2", "aac,48000,1"])
  }

  @Test func malformedRequestsAreReportedAndTheRunGoesOn() throws {
    let encoder = try EncoderProcess(Self.pattern + ["--duration", "3"])
    try encoder.waitForFrames(30)
    encoder.send("{not json")
    encoder.send(#"{"request":"bitrate","target_bps":"lots"}"#)
    try encoder.waitForEvent("two rejections") { _ in
      encoder.events().filter { $0["event"] as? String == "rejected" }.count == 2
    }
    #expect(try encoder.finish() == 0, "\(encoder.stderr)")
    #expect(encoder.events().last?["reason"] as? String == "duration")
  }

  @Test func badSourcesExitOneWithAClearMessage() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let audioOnly = directory.appending(path: "tone.wav").path
    let made = try CommandRunner.run(
      "ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "sine", "-t", "1", audioOnly])
    #expect(made.status == 0, "\(made.stderr)")
    let cases = [
      (directory.appending(path: "missing.mp4").path, "no such file"),
      (audioOnly, "has no video stream"),
      ("x11::4711", "cannot open X11 display :4711"),
    ]
    for (source, message) in cases {
      let result = try CommandRunner.run(CommandRunner.encoder, [source], timeout: 30)
      #expect(result.status == 1, "\(source)")
      #expect(result.stderr.contains(message), "\(result.stderr)")
      #expect(result.stdout == "", "\(source)")
    }
    let usage = try CommandRunner.run(CommandRunner.encoder, ["testsrc", "--fps", "zero"])
    #expect(usage.status == 2)
    #expect(usage.stderr.contains("--fps"), "\(usage.stderr)")
  }

  @Test func readerGoingAwayEndsTheEncoderCleanly() throws {
    // `head` closes the pipe after 64 KiB: the next write gets EPIPE, and the encoder stops.
    let result = try CommandRunner.run(
      "sh", ["-c", "'\(CommandRunner.encoder)' testsrc --size 320x240 | head -c 65536 >/dev/null"],
      timeout: 30)
    #expect(!result.timedOut)
    #expect(result.stderr.contains(#""reason":"reader""#), "\(result.stderr)")
  }

  @Test func x11DisplayUnderXvfbIsEncoded() throws {
    // A visible skip here; where CI is set, a test that cannot run is a failure.
    guard CommandRunner.has("Xvfb") else {
      let ci = !(ProcessInfo.processInfo.environment["CI"] ?? "").isEmpty
      if ci { Issue.record("Xvfb is not installed") } else { print("skipped: no Xvfb") }
      return
    }
    let display = 90 + Int(getpid() % 100)
    let server = Process()
    server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    server.arguments = ["Xvfb", ":\(display)", "-screen", "0", "640x360x24", "-nolisten", "tcp"]
    server.standardOutput = FileHandle.nullDevice
    server.standardError = FileHandle.nullDevice
    try server.run()
    defer { kill(server.processIdentifier, SIGTERM) }
    try LoopbackServers.waitUntil("Xvfb's socket") {
      FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(display)")
    }
    let encoder = try EncoderProcess(["x11::\(display)", "--size", "640x360", "--duration", "2"])
    #expect(try encoder.finish() == 0, "\(encoder.stderr)")
    let video = try encoder.samples().filter { $0.kind == .video }
    #expect(video.count > 10)
    #expect(video.first?.keyframe == true)
  }
}
