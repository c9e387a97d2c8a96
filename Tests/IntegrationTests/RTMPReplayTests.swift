import Foundation
import Testing
import IngestBench
import IngestTestSupport

/// `ingest replay --to rtmp://...` against a private nginx-rtmp per test that records each
/// publish; the checks are on nginx's recording. The stream key never shows in what ingest prints.
@Suite(.serialized) struct RTMPReplayTests {
  static let key = "rtmp-K3Y-secret"

  /// Fixtures with video (FLV needs it here), their length in seconds and the codecs recorded:
  /// FLV carries one audio track, the app audio.
  static let fixtures: [(String, Double, [String])] = [
    ("screen.dump", 10, ["h264", "aac"]),
    ("bframes.dump", 4, ["h264", "aac"]),
    ("mic-clock-reset.dump", 8, ["h264", "aac"]),
    ("static-screen.dump", 12, ["h264", "aac"]),
    ("video-only.dump", 4, ["h264"]),
  ]
  /// The fixtures' keyframe interval, in seconds.
  static let gop = 2.0

  @Test(arguments: fixtures)
  func publishedFixtureIsRecordedClean(fixture: String, seconds: Double, codecs: [String]) throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let server = try NginxRTMP(
      port: try LoopbackServers.freePort(SOCK_STREAM), directory: directory.appending(path: "nginx")
    )
    defer { server.kill() }
    let status = directory.appending(path: "status.jsonl")
    let result = try CommandRunner.ingest(
      [
        "replay", CommandRunner.fixture(fixture), "--to",
        "rtmp://127.0.0.1:\(server.port)/live/\(Self.key)", "--speed", "4", "--json", "--status",
        status.path,
      ], timeout: 60)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(!result.timedOut)
    try server.waitForSessionEnd()
    server.kill()

    let recording = try FLVReport(server.recording(key: Self.key).path)
    #expect(recording.decodeErrors == "")
    #expect(recording.codecs == codecs)
    #expect(abs(recording.duration - seconds) <= Self.gop, "duration \(recording.duration)")
    #expect(recording.firstVideoIsKeyframe)
    Self.expectKeySecret(result, status: status)
  }

  /// nginx is SIGKILLed once the recording grows and a new one takes its port: the broken TCP
  /// connection shows at the next write, the sender reconnects, and the second recording is clean.
  @Test func serverRestartedMidStreamGetsACleanSecondRecording() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let port = try LoopbackServers.freePort(SOCK_STREAM)
    let first = try NginxRTMP(port: port, directory: directory.appending(path: "first"))
    defer { first.kill() }
    let status = directory.appending(path: "status.jsonl")
    let replay = try ChildProcess(
      CommandRunner.ingest,
      [
        "replay", CommandRunner.fixture("screen.dump"), "--to",
        "rtmp://127.0.0.1:\(port)/live/\(Self.key)", "--speed", "4", "--json", "--status",
        status.path,
      ], directory: directory, name: "replay")
    defer { replay.kill() }

    try LoopbackServers.waitUntil("the first recording to grow") {
      LoopbackServers.size(of: first.recording(key: Self.key)) >= 100_000
    }
    first.kill()
    let second = try NginxRTMP(port: port, directory: directory.appending(path: "second"))
    defer { second.kill() }
    #expect(replay.wait(timeout: 60))
    #expect(replay.process.terminationStatus == 0, "\(replay.stderr)")
    try second.waitForSessionEnd()
    second.kill()

    let names = JSONLines.events(in: status).compactMap { $0["event"] as? String }
      .filter { ["connected", "disconnected", "retry", "failed"].contains($0) }
    #expect(Array(names.prefix(3)) == ["connected", "disconnected", "retry"])
    #expect(names.last == "connected")
    #expect(!names.contains("failed"))

    let recording = try FLVReport(second.recording(key: Self.key).path)
    #expect(recording.decodeErrors == "")
    #expect(recording.codecs == ["h264", "aac"])
    #expect(recording.firstVideoIsKeyframe)
    #expect(recording.duration > Self.gop)
    let result = CommandRunner.Result(
      status: replay.process.terminationStatus, stdout: replay.stdout, stderr: replay.stderr,
      timedOut: false)
    Self.expectKeySecret(result, status: status)
  }

  @Test func rtmpsToNoServerFailsCleanly() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    // A port the kernel just handed out and took back: nothing listens there.
    let port = try LoopbackServers.freePort(SOCK_STREAM)
    let status = directory.appending(path: "status.jsonl")
    let result = try CommandRunner.ingest(
      [
        "replay", CommandRunner.fixture("video-only.dump"), "--to",
        "rtmps://127.0.0.1:\(port)/live/\(Self.key)", "--speed", "4", "--status", status.path,
      ], timeout: 60)
    #expect(!result.timedOut)
    #expect(result.status == 1)
    #expect(result.stderr.contains("output failed"), "\(result.stderr)")
    #expect(result.stderr.contains("rtmps://127.0.0.1:\(port)/live/***"))
    #expect(result.stderr.contains("cannot connect"))
    #expect(JSONLines.events(in: status).contains { $0["event"] as? String == "retry" })
    Self.expectKeySecret(result, status: status)
  }

  @Test(arguments: [
    "rtmp://127.0.0.1/\(key)",  // no application
    "rtmp://127.0.0.1:99999/live/\(key)",  // port out of range
    "rtmp://127.0.0.1/live/ \(key)",  // a space
  ])
  func badURLIsAUsageError(url: String) throws {
    let result = try CommandRunner.ingest(
      ["replay", CommandRunner.fixture("video-only.dump"), "--to", url, "--speed", "4"], timeout: 30
    )
    #expect(result.status == 2, "\(result.stderr)")
    #expect(result.stderr.contains("--to"))
    Self.expectKeySecret(result, status: nil)
  }

  static func expectKeySecret(_ result: CommandRunner.Result, status: URL?) {
    #expect(!result.stdout.contains(key))
    #expect(!result.stderr.contains(key))
    if let status { #expect(!LoopbackServers.text(of: status).contains(key)) }
  }
}

/// What ffmpeg and ffprobe say about an FLV recording.
struct FLVReport {
  var decodeErrors: String
  var codecs: [String]
  var duration: Double
  var firstVideoIsKeyframe: Bool

  init(_ path: String) throws {
    decodeErrors = try CommandRunner.decodeErrors(path)
    let probe = try CommandRunner.run(
      "ffprobe",
      [
        "-v", "error", "-show_entries", "stream=index,codec_name:format=duration", "-show_entries",
        "packet=stream_index,flags", "-of", "json", path,
      ])
    guard
      let json = try JSONSerialization.jsonObject(with: Data(probe.stdout.utf8)) as? [String: Any],
      let streams = json["streams"] as? [[String: Any]],
      let format = json["format"] as? [String: Any]
    else { throw LoopbackServers.Failure("ffprobe \(path): \(probe.stderr)") }
    codecs = streams.compactMap { $0["codec_name"] as? String }
    duration = Double(format["duration"] as? String ?? "") ?? -1
    let video = streams.first { $0["codec_name"] as? String == "h264" }?["index"] as? Int
    let packets = json["packets"] as? [[String: Any]] ?? []
    let firstVideo = packets.first { $0["stream_index"] as? Int == video }
    firstVideoIsKeyframe = (firstVideo?["flags"] as? String ?? "").hasPrefix("K")
  }
}
