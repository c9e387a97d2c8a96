import Foundation
import IngestBench
import IngestTestSupport
import Testing

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

  /// screen.dump has app and mic audio; FLV carries one, and `--audio app` asks for the app
  /// track alone (rather than the default mix). The mic track is counted as dropped
  /// (`notCarried`), not as sent; what the connection discards before its first keyframe is
  /// dropped too; the text summary says which audio went.
  @Test func summaryCountsTheAudioTrackRTMPCannotCarryAsNotSent() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let server = try NginxRTMP(
      port: try LoopbackServers.freePort(SOCK_STREAM), directory: directory.appending(path: "nginx")
    )
    defer { server.kill() }
    let status = directory.appending(path: "status.jsonl")
    let result = try CommandRunner.ingest(
      [
        "replay", CommandRunner.fixture("screen.dump"), "--to",
        "rtmp://127.0.0.1:\(server.port)/live/\(Self.key)", "--speed", "4", "--audio", "app",
        "--status", status.path,
      ], timeout: 60)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stderr.contains("audio    audioApp only, one track"), "\(result.stderr)")
    // A healthy publish stays at tier 0: the ~21 MB of clean library pages that loading
    // libavformat maps are not memory the budget is charged.
    #expect(!JSONLines.events(in: status).contains { $0["event"] as? String == "tier" })
    let summary = try #require(
      JSONLines.events(in: status).first { $0["event"] as? String == "summary" })
    let appended = try #require(summary["appended"] as? [String: Int])
    let sent = try #require(summary["sent"] as? [String: Int])
    let drops = try #require(summary["drops"] as? [String: [String: Int]])
    #expect(summary["audio"] as? String == "app")
    #expect(summary["final_tier"] as? Int == 0)
    #expect(sent["audioMic"] == 0)
    #expect(drops["audioMic"]?["notCarried"] == appended["audioMic"])
    for kind in ["video", "audioApp", "audioMic"] {
      let dropped = drops[kind]?.values.reduce(0, +) ?? 0
      #expect(sent[kind]! + dropped == appended[kind]!, "\(kind): \(summary)")
    }
    Self.expectKeySecret(result, status: status)
  }

  /// nginx-rtmp's `deny publish` answers Publish.Start and then closes the connection, so the
  /// connect succeeds and only the first media write fails: after two such connections the run
  /// stops with a refused publish instead of reconnecting for ever.
  @Test func publishDeniedByTheServerIsFatal() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let server = try NginxRTMP(
      port: try LoopbackServers.freePort(SOCK_STREAM), directory: directory.appending(path: "nginx")
    )
    defer { server.kill() }
    let status = directory.appending(path: "status.jsonl")
    let result = try CommandRunner.ingest(
      [
        "replay", CommandRunner.fixture("screen.dump"), "--to",
        "rtmp://127.0.0.1:\(server.port)/denied/\(Self.key)", "--speed", "4", "--json",
        "--status", status.path,
      ], timeout: 60)
    #expect(result.status == 1)
    #expect(!result.timedOut)
    #expect(result.stderr.contains("the server refused the stream"), "\(result.stderr)")
    let events = JSONLines.events(in: status)
    let connected = events.filter { $0["event"] as? String == "connected" }.count
    #expect(connected <= 2, "\(connected) connections")
    #expect(events.contains { $0["event"] as? String == "failed" })
    let summary = try JSONLines.summary(result.stdout)
    #expect((summary["sink_error"] as? String)?.contains("deny publish") == true)
    Self.expectKeySecret(result, status: status)
  }

  /// A TLS server (`openssl s_server -www`) with a certificate from the test's own CA, which
  /// completes the TLS handshake and then waits for an HTTP request line, so never answers RTMP. Verified against the system store the
  /// certificate fails, at once and said so; with `--ca-file` of that CA, or `--insecure`, TLS
  /// passes and the attempt times out on the RTMP handshake instead.
  @Test func rtmpsCertificateIsVerifiedAndCanBeTrustedOrSkipped() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let ca = directory.appending(path: "ca.pem").path
    let caKey = directory.appending(path: "ca.key").path
    let cert = directory.appending(path: "server.pem").path
    let key = directory.appending(path: "server.key").path
    let csr = directory.appending(path: "server.csr").path
    let extensions = directory.appending(path: "san.ext")
    try "subjectAltName=IP:127.0.0.1\n".write(to: extensions, atomically: true, encoding: .utf8)
    for arguments in [
      [
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", caKey, "-out", ca, "-days", "2",
        "-subj", "/CN=ingest test CA",
      ],
      [
        "req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj",
        "/CN=127.0.0.1",
      ],
      [
        "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", caKey, "-CAcreateserial", "-out", cert,
        "-days", "2", "-extfile", extensions.path,
      ],
    ] {
      let made = try CommandRunner.run("openssl", arguments)
      #expect(made.status == 0, "openssl \(arguments[0]): \(made.stderr)")
    }
    let port = try LoopbackServers.freePort(SOCK_STREAM)
    let server = try ChildProcess(
      "openssl", ["s_server", "-www", "-accept", "127.0.0.1:\(port)", "-cert", cert, "-key", key],
      directory: directory, name: "s_server")
    defer { server.kill() }
    try LoopbackServers.waitUntil("openssl s_server on port \(port)") {
      guard server.process.isRunning else {
        throw LoopbackServers.Failure("openssl s_server exited: \(server.stderr)")
      }
      return server.stdout.contains("ACCEPT")
    }
    let url = "rtmps://127.0.0.1:\(port)/live/\(Self.key)"
    func replay(_ extra: [String]) throws -> (CommandRunner.Result, [[String: Any]]) {
      let status = directory.appending(path: "status-\(extra.first ?? "none").jsonl")
      let result = try CommandRunner.ingest(
        ["replay", CommandRunner.fixture("video-only.dump"), "--to", url, "--speed", "4"]
          + ["--status", status.path] + extra, timeout: 60)
      #expect(!result.timedOut)
      #expect(result.status == 1)
      Self.expectKeySecret(result, status: status)
      return (result, JSONLines.events(in: status))
    }

    let (untrusted, untrustedEvents) = try replay([])
    #expect(
      untrusted.stderr.contains("TLS certificate verification failed"), "\(untrusted.stderr)")
    #expect(!untrusted.stderr.contains("refused"))
    #expect(!untrustedEvents.contains { $0["event"] as? String == "retry" })
    for extra in [["--ca-file", ca], ["--insecure"]] {
      let (result, events) = try replay(extra)
      #expect(!result.stderr.contains("certificate"), "\(extra): \(result.stderr)")
      #expect(result.stderr.contains("connect timed out"), "\(extra): \(result.stderr)")
      #expect(!events.contains { $0["event"] as? String == "failed" })
    }
  }

  @Test(arguments: [
    ["--ca-file", "ca.pem"], ["--insecure"],
  ])
  func tlsOptionsOnPlainRTMPAreAUsageError(extra: [String]) throws {
    let result = try CommandRunner.ingest(
      ["replay", CommandRunner.fixture("video-only.dump"), "--to", "rtmp://127.0.0.1/live/k"]
        + extra, timeout: 30)
    #expect(result.status == 2, "\(result.stderr)")
    #expect(result.stderr.contains("rtmps://"))
  }

  /// libavformat would only say "Input/output error" during the connect.
  @Test func unreadableCAFileIsAUsageError() throws {
    let result = try CommandRunner.ingest(
      [
        "replay", CommandRunner.fixture("video-only.dump"), "--to", "rtmps://127.0.0.1/live/k",
        "--ca-file", "/nonexistent/ca.pem",
      ], timeout: 30)
    #expect(result.status == 2, "\(result.stderr)")
    #expect(result.stderr.contains("--ca-file: cannot read '/nonexistent/ca.pem'"))
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
