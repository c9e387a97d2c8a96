import Foundation
import Glibc
import IngestTestSupport
import Testing

/// `--to whip+http://…` against the aiortc WHIP peer, one per test: what the peer recorded
/// decodes with ffmpeg and GStreamer, the session is deleted at the end, the bearer token
/// is checked and never printed.
@Suite struct WHIPIntegrationTests {
  static let token = "whip-T0KEN-secret"

  /// A token file and a peer that requires its token, in a fresh directory.
  private static func peer() throws -> (WHIPPeer, URL, URL)? {
    if let reason = WHIPPeer.unavailableReason {
      TestEnvironment.unavailable(reason)
      return nil
    }
    let directory = try CommandRunner.temporaryDirectory()
    let tokenFile = directory.appending(path: "token")
    try (token + "\n").write(to: tokenFile, atomically: true, encoding: .utf8)
    let peer = try WHIPPeer(directory: directory.appending(path: "peer"), tokenFile: tokenFile)
    return (peer, directory, tokenFile)
  }

  /// A Constrained Baseline dump (6 s, H.264 with app and mic audio) made here with ffmpeg
  /// and `ingest capture`: the profile aiortc takes at its defaults, which no fixture has.
  private static func baselineDump(in directory: URL) throws -> URL {
    let media = directory.appending(path: "baseline.mp4")
    let dump = directory.appending(path: "baseline.dump")
    let encode = try CommandRunner.run(
      "ffmpeg",
      [
        "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30",
        "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-f", "lavfi", "-i",
        "sine=frequency=660:beep_factor=3:sample_rate=44100", "-t", "6", "-map", "0:v",
        "-map", "1:a", "-map", "2:a", "-c:v", "libx264", "-profile:v", "baseline", "-preset",
        "veryfast", "-g", "60", "-pix_fmt", "yuv420p", "-b:v", "600k", "-c:a", "aac", media.path,
      ], timeout: 60)
    try #require(encode.status == 0, "\(encode.stderr)")
    let capture = try CommandRunner.ingest(["capture", media.path, "-o", dump.path, "-y"])
    try #require(capture.status == 0, "\(capture.stderr)")
    return dump
  }

  /// A Constrained Baseline dump at real time: H.264 and the app/mic mix as Opus reach the
  /// peer (aiortc at its defaults), whose recording decodes cleanly; the summary names the
  /// profile negotiated and the session's deletion.
  @Test func replayedBaselineDumpIsRecordedAndDecodesClean() throws {
    guard let (peer, directory, tokenFile) = try Self.peer() else { return }
    defer { try? FileManager.default.removeItem(at: directory) }
    defer { peer.kill() }
    let dump = try Self.baselineDump(in: directory)
    let name = "replay-\(UUID().uuidString.prefix(8))"
    let status = directory.appending(path: "status.jsonl")
    let result = try CommandRunner.ingest(
      [
        "replay", dump.path, "--to", peer.url(name, query: "token-file=\(tokenFile.path)"),
        "--status", status.path,
        // The summary counts what the receiver got: of 6 s, a slow connection on a loaded
        // machine can take more than half.
        "--min-delivered", "0.2",
      ], timeout: 60)
    #expect(result.status == 0, "\(result.stderr)")
    let summary = result.stdout + result.stderr
    #expect(summary.contains("session deleted (HTTP 200)"), "\(summary)")
    #expect(summary.contains("RTP packets sent"))
    #expect(summary.contains("H.264 Constrained Baseline (42e01f) negotiated"), "\(summary)")
    try peer.waitForClose(name)
    try Self.expectRecordingDecodes(
      peer.recording(name), receiverLostPackets: Self.receiverLostPackets(summary))
    let events = peer.events(name).compactMap { $0["event"] as? String }
    #expect(events.contains("post"))
    #expect(events.contains("delete"))
    let closed = try #require(peer.events(name).first { $0["event"] as? String == "closed" })
    // 6 s of media: most of it arrives, unless ICE and DTLS took seconds (a loaded machine),
    // and then the summary says how much came before the connection and was dropped.
    let video = closed["video"] as? Int ?? 0
    #expect(video > 0, "\(closed)")
    #expect((closed["audio"] as? Int ?? 0) > 0, "\(closed)")
    #expect(video > 90 || summary.contains("samples before the connection"), "\(summary)")
    #expect((closed["decode_errors"] as? Int) == 0, "\(closed)")
    // The WHIP figures reach the status events; the token is nowhere.
    let statusText = LoopbackServers.text(of: status)
    #expect(statusText.contains("\"packets_sent\""))
    #expect(statusText.contains(#""event":"negotiated""#), "\(statusText.prefix(2000))")
    for text in [result.stdout, result.stderr, statusText] { #expect(!text.contains(Self.token)) }
  }

  /// A Main profile dump (`screen.dump`, 4d401f) to aiortc at its defaults, which takes
  /// Constrained Baseline only and refuses the offer: the run ends with an error naming both
  /// profiles, a failed JSON summary and exit status 1.
  @Test func aDumpInAProfileTheEndpointRefusesNamesBothProfiles() throws {
    guard let (peer, directory, tokenFile) = try Self.peer() else { return }
    defer { try? FileManager.default.removeItem(at: directory) }
    defer { peer.kill() }
    let result = try CommandRunner.ingest(
      [
        "replay", CommandRunner.fixture("screen.dump"), "--json", "--to",
        peer.url("main-profile", query: "token-file=\(tokenFile.path)"),
      ], timeout: 60)
    #expect(result.status == 1, "\(result.stderr)")
    let message =
      "the WHIP endpoint accepted only Constrained Baseline (42e01f); the dump is Main (4d401f)"
    #expect(result.stderr.contains(message), "\(result.stderr)")
    let summary = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
    #expect(summary?["ok"] as? Bool == false, "\(result.stdout)")
    #expect((summary?["sink_error"] as? String)?.contains(message) == true, "\(result.stdout)")
  }

  /// `?profiles=` takes baseline, main and high: another name is a usage error naming it, and
  /// a replay, which can only offer its dump's profile, refuses the option.
  @Test func theProfilesOptionIsCheckedBeforeAnythingIsSent() throws {
    let live = try CommandRunner.ingest(
      [
        "live", "testsrc", "--duration", "5", "--to",
        "whip+http://127.0.0.1:9/whip/a?profiles=high,high10",
      ], timeout: 60)
    #expect(live.status == 2, "\(live.stderr)")
    #expect(live.stderr.contains("unknown H.264 profile 'high10'"), "\(live.stderr)")
    let replay = try CommandRunner.ingest(
      [
        "replay", CommandRunner.fixture("video-only.dump"), "--to",
        "whip+http://127.0.0.1:9/whip/a?profiles=main",
      ], timeout: 30)
    #expect(replay.status == 2, "\(replay.stderr)")
    #expect(replay.stderr.contains("applies to ingest live"), "\(replay.stderr)")
  }

  /// `ingest live testsrc` until the peer has received two seconds of video, then SIGINT: the
  /// encoder's stream reaches the peer and decodes, and the stop deletes the session. The run is
  /// ended on what the peer received, not after a fixed duration: on a loaded machine ICE and
  /// DTLS can take most of a short run, and what comes before the connection is dropped.
  @Test func liveTestPatternIsRecordedAndDecodesClean() throws {
    guard let (peer, directory, tokenFile) = try Self.peer() else { return }
    defer { try? FileManager.default.removeItem(at: directory) }
    defer { peer.kill() }
    let name = "live-\(UUID().uuidString.prefix(8))"
    let status = directory.appending(path: "status.jsonl")
    let live = try SignalledIngest(
      [
        "live", "testsrc", "--size", "640x360", "--quiet", "--json", "--duration", "120", "--to",
        peer.url(name, query: "token-file=\(tokenFile.path)"), "--status", status.path,
        // The summary counts what the receiver got: with two seconds of it and a slow
        // connection (a loaded machine), what came before may be more than half.
        "--min-delivered", "0.2",
      ], in: directory)
    try LoopbackServers.waitUntil("60 video frames at the peer", timeout: 60) {
      guard live.process.isRunning else {
        throw LoopbackServers.Failure("ingest live ended early: \(live.stderr)")
      }
      return peer.frames(name).count { $0["kind"] as? String == "video" } >= 60
    }
    live.send(SIGINT)
    #expect(live.wait() == 0, "\(live.stderr)")
    try peer.waitForClose(name)
    try Self.expectRecordingDecodes(
      peer.recording(name), receiverLostPackets: Self.receiverLostPackets(live.stdout))
    #expect(peer.events(name).contains { $0["event"] as? String == "delete" })
    // High was offered first, then Main and Constrained Baseline: aiortc at its defaults takes
    // the last. The answer's choice became the encoder's request, which it applied, and every
    // frame the peer got is in that profile and decoded.
    let statusText = LoopbackServers.text(of: status)
    #expect(
      statusText.contains(
        /"event":"negotiated"[^\n]*"profile_level_id":"42e01f","profile":"baseline"/),
      "\(statusText.prefix(3000))")
    #expect(statusText.contains(#""request":"profile","profile":"baseline""#))
    #expect(statusText.contains(/"event":"applied","request":"profile","profile":"baseline"/))
    let closed = try #require(peer.events(name).first { $0["event"] as? String == "closed" })
    #expect((closed["video"] as? Int ?? 0) >= 60, "\(closed)")
    #expect((closed["decode_errors"] as? Int) == 0, "\(closed)")
    #expect(try WHIPPeer.videoProfile(peer.recording(name)) == "Constrained Baseline")
    // The JSON summary's WHIP figures (one output: its members are the summary's own).
    let summary = try JSONSerialization.jsonObject(with: Data(live.stdout.utf8)) as? [String: Any]
    #expect(summary?["stopped"] as? String == "SIGINT", "\(live.stdout)")
    let link = try #require(summary?["link"] as? [String: Any], "\(live.stdout)")
    #expect(link["profile"] as? String == "baseline", "\(live.stdout)")
    // Each frame the peer received came in at least one RTP packet.
    let received = peer.frames(name).count
    #expect((link["packets_sent"] as? Int ?? 0) >= received, "\(live.stdout)")
    #expect(link["delete_status"] as? Int == 200)
  }

  /// The receiver goes silent for 5 s (the peer stopped with SIGSTOP: nothing read, nothing
  /// answered) in a live run: the session survives (no new POST), the summary counts the
  /// packets lost and, as sent, only the frames the receiver's reports confirm; the
  /// receiver's PLI after the gap (or its NACKs for packets too old to send again) reaches the
  /// encoder as a keyframe request, and the recording still decodes.
  @Test func aFiveSecondBlackoutIsRiddenOut() throws {
    guard let (peer, directory, tokenFile) = try Self.peer() else { return }
    defer { try? FileManager.default.removeItem(at: directory) }
    defer { peer.kill() }
    let name = "blackout-\(UUID().uuidString.prefix(8))"
    let status = directory.appending(path: "status.jsonl")
    let live = try ChildProcess(
      CommandRunner.ingest,
      [
        "live", "testsrc", "--size", "640x360", "--quiet", "--duration", "120", "--to",
        peer.url(name, query: "token-file=\(tokenFile.path)"), "--status", status.path,
        // Five of some ten seconds are dark: what the receiver got is under the default half.
        "--min-delivered", "0.2",
      ], directory: directory, name: "live")
    defer { live.kill() }
    try LoopbackServers.waitUntil("media at the peer", timeout: 60) {
      LoopbackServers.size(of: peer.directory.appending(path: "\(name).frames.jsonl")) > 4096
    }
    kill(peer.child.pid, SIGSTOP)
    // The outage itself: five seconds of a receiver that neither reads nor reports.
    Thread.sleep(forTimeInterval: 5)
    // The peer stamps what it receives with the wall clock.
    let resumed = Int(Date().timeIntervalSince1970 * 1e9)
    kill(peer.child.pid, SIGCONT)
    // The run is ended on events, not on a duration that a slow connection on a loaded machine
    // could use up: two seconds of video after the gap, and the receiver's reports of the loss
    // and its keyframe request in the status (they come with its next RTCP reports, after the
    // backlog of the socket buffer is through).
    try LoopbackServers.waitUntil(
      "video, the loss and a keyframe request after the gap", timeout: 60
    ) {
      let text = LoopbackServers.text(of: status)
      // The keyframe: asked for by the receiver (PLI), or by ingest-whip when the receiver
      // asked for packets too old to send again, whichever came first.
      let keyframe =
        text.contains(/"keyframe_requests":[1-9]/)
        || text.contains(/"keyframes_for_unserved":[1-9]/)
      return text.contains(/"packets_lost":[1-9]/) && keyframe
        && peer.frames(name).count {
          $0["kind"] as? String == "video" && ($0["recv_ns"] as? Int ?? 0) > resumed
        } >= 60
    }
    kill(live.pid, SIGINT)
    #expect(live.wait(timeout: 60))
    #expect(live.process.terminationStatus == 0, "\(live.stderr)")
    let posts = peer.events(name).filter { $0["event"] as? String == "post" }
    #expect(posts.count == 1)
    let summary = live.stderr
    let lost = summary.firstMatch(of: /RTP packets sent, (\d+) lost/).flatMap { Int($0.1) }
    #expect((lost ?? 0) > 0, "\(summary)")
    // What was sent into the dark did not arrive, and the summary says so: the frames the
    // receiver's reports confirm are fewer than those sent, and `sent` counts only those.
    let arrived = summary.firstMatch(of: /receiver: (\d+) of (\d+) video frames sent arrived/)
    let whole = arrived.flatMap { Int($0.1) } ?? 0
    let framesSent = arrived.flatMap { Int($0.2) } ?? 0
    #expect(whole > 0 && whole < framesSent, "\(summary)")
    let sentVideo = summary.firstMatch(of: /samples +video (\d+)\/(\d+) sent/)
    #expect(sentVideo.flatMap { Int($0.1) } == whole, "\(summary)")
    #expect(summary.contains("session deleted (HTTP 200)"))
    // The receiver's own requests (the summary does not count the one made at connection), or
    // those for packets too old to send again.
    let requests = summary.firstMatch(of: /(\d+) keyframe requests/).flatMap { Int($0.1) }
    #expect(
      (requests ?? 0) > 0 || summary.contains("keyframes for packets too old to resend"),
      "\(summary)")
    #expect(LoopbackServers.text(of: status).contains("\"request\":\"keyframe\""))
    try peer.waitForClose(name)
    // Packets were lost (asserted above): the recording decodes to the end.
    try Self.expectRecordingDecodes(peer.recording(name), receiverLostPackets: true)
  }

  /// A token the endpoint refuses: the run fails as an authentication failure, at once, and
  /// neither message shows the token.
  @Test func aRefusedTokenIsAnAuthenticationFailure() throws {
    guard let (peer, directory, _) = try Self.peer() else { return }
    defer { try? FileManager.default.removeItem(at: directory) }
    defer { peer.kill() }
    let wrong = directory.appending(path: "wrong-token")
    try "not-the-token".write(to: wrong, atomically: true, encoding: .utf8)
    let result = try CommandRunner.ingest(
      [
        "replay", CommandRunner.fixture("video-only.dump"), "--to",
        peer.url("refused", query: "token-file=\(wrong.path)"),
      ], timeout: 60)
    #expect(result.status != 0)
    #expect(result.stderr.contains("authentication failed"), "\(result.stderr)")
    #expect(result.stderr.contains("HTTP 401"))
    #expect(!(result.stdout + result.stderr).contains("not-the-token"))
  }

  /// An https endpoint whose certificate a private CA signed: without `--ca-file` the run ends
  /// at the first attempt with the certificate named (another attempt meets the same
  /// certificate; it was retried ten times); with `--ca-file` naming that CA the session is
  /// made and recorded.
  @Test func anUntrustedCertificateIsFinalAndACAFileTrustsIt() throws {
    if let reason = WHIPPeer.unavailableReason {
      TestEnvironment.unavailable(reason)
      return
    }
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let peer = try WHIPPeer(directory: directory.appending(path: "peer"), tls: true)
    defer { peer.kill() }
    let dump = try Self.baselineDump(in: directory)
    let status = directory.appending(path: "status.jsonl")
    let refused = try CommandRunner.ingest(
      ["replay", dump.path, "--to", peer.url("untrusted"), "--status", status.path],
      timeout: 60)
    #expect(refused.status == 1, "\(refused.stderr)")
    #expect(refused.stderr.contains("certificate is not trusted"), "\(refused.stderr)")
    #expect(FaultSupport.count("retry", in: status.path) == 0, "retried")

    let trusted = try CommandRunner.ingest(
      [
        "replay", dump.path, "--to", peer.url("trusted"), "--ca-file", peer.caFile.path,
        "--min-delivered", "0.2",
      ], timeout: 60)
    #expect(trusted.status == 0, "\(trusted.stderr)")
    try peer.waitForClose("trusted")
    try Self.expectRecordingDecodes(
      peer.recording("trusted"), receiverLostPackets: Self.receiverLostPackets(trusted.stderr))
  }

  /// A URL that answers 201 with something that is not SDP (a web page, an empty body) is not
  /// a WHIP endpoint: the run says so, rather than that the endpoint refused H.264.
  @Test(arguments: ["<html><body>Welcome</body></html>", ""])
  func anAnswerThatIsNotSDPIsNamed(body: String) throws {
    guard CommandRunner.has("python3") else {
      TestEnvironment.unavailable("python3 is missing")
      return
    }
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let port = try TestServers.freeUDPPort()
    let server = """
      import http.server, sys
      class Answer(http.server.BaseHTTPRequestHandler):
          def do_POST(self):
              self.rfile.read(int(self.headers.get("Content-Length", 0)))
              body = sys.argv[2].encode()
              self.send_response(201)
              self.send_header("Location", "/session/1")
              self.send_header("Content-Type", "text/html")
              self.send_header("Content-Length", str(len(body)))
              self.end_headers()
              self.wfile.write(body)
          def do_DELETE(self):
              self.send_response(200)
              self.send_header("Content-Length", "0")
              self.end_headers()
          def log_message(self, *args): pass
      server = http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Answer)
      print("listening", flush=True)
      server.serve_forever()
      """
    let stub = try ChildProcess(
      "python3", ["-c", server, String(port), body], directory: directory, name: "stub")
    defer { stub.kill() }
    try LoopbackServers.waitUntil("the stub endpoint") { stub.stdout.contains("listening") }
    let result = try CommandRunner.ingest(
      [
        "replay", CommandRunner.fixture("video-only.dump"), "--to",
        "whip+http://127.0.0.1:\(port)/whip",
      ], timeout: 60)
    #expect(result.status != 0)
    #expect(result.stderr.contains("is not an SDP answer"), "\(result.stderr)")
    #expect(!result.stderr.contains("does not accept"), "\(result.stderr)")
  }

  /// WebRTC here always carries video: an input without it is refused before anything starts.
  @Test func anInputWithoutVideoIsRefusedBeforeStarting() throws {
    let result = try CommandRunner.ingest(
      [
        "replay", CommandRunner.fixture("audio-only.dump"), "--to",
        "whip+http://127.0.0.1:9/whip/a",
      ],
      timeout: 30)
    #expect(result.status != 0)
    #expect(result.stderr.contains("WHIP needs a video track"), "\(result.stderr)")
  }

  /// HEVC to an endpoint that takes only H.264: a clear error naming the codec.
  @Test func hevcTheEndpointRefusesIsNamed() throws {
    guard let (peer, directory, tokenFile) = try Self.peer() else { return }
    defer { try? FileManager.default.removeItem(at: directory) }
    defer { peer.kill() }
    let result = try CommandRunner.ingest(
      [
        "replay", CommandRunner.fixture("screen-hevc.dump"), "--to",
        peer.url("hevc", query: "token-file=\(tokenFile.path)"),
      ], timeout: 60)
    #expect(result.status != 0)
    #expect(result.stderr.contains("does not accept HEVC"), "\(result.stderr)")
  }

  /// The recording holds an H.264 and an Opus stream, and ffmpeg and GStreamer decode it to
  /// the end. Where the receiver's reports counted no packet lost, ffmpeg prints nothing and
  /// GStreamer logs no warning. Where they did (a blackout; on a loaded machine, a receiver
  /// whose socket overflowed while it was not scheduled), a packet aiortc asked for once and
  /// then gave up on (it asks again only when a new gap shows, among the last 128 packets)
  /// makes its jitter buffer hand on, after 512 more packets, the frames from the loss to the
  /// next keyframe, some without their first packets: the recording is aiortc's, and those
  /// frames decode with errors there, as they would for any application behind it.
  static func expectRecordingDecodes(_ recording: URL, receiverLostPackets lost: Bool) throws {
    #expect(try CommandRunner.streams(recording.path) == ["h264", "opus,48000,2"])
    let errors = try CommandRunner.decodeErrors(recording.path)
    if lost {
      #expect(
        !errors.contains(/exit \d+$/), "ffmpeg decoding \(recording.lastPathComponent): \(errors)")
    } else {
      #expect(errors == "", "ffmpeg decoding \(recording.lastPathComponent): \(errors)")
    }
    let result = try CommandRunner.run(
      "env",
      [
        "GST_DEBUG=2", "GST_DEBUG_NO_COLOR=1", "gst-launch-1.0", "-q", "filesrc",
        "location=\(recording.path)", "!", "queue", "!", "matroskademux", "name=d", "d.video_0",
        "!", "queue",
        "max-size-buffers=0", "max-size-bytes=0", "max-size-time=0", "!", "h264parse", "!",
        "avdec_h264", "!", "fakesink", "d.audio_0", "!", "queue", "max-size-buffers=0",
        "max-size-bytes=0", "max-size-time=0", "!", "opusparse", "!", "opusdec", "!", "fakesink",
      ], timeout: 60)
    // libavformat's Matroska writer (the peer's) adds a Void element to track entries and
    // CueRelativePosition to cues, which GStreamer 1.22's demuxer does not know and skips
    // with a warning: the container's, not the stream's.
    let containerNotes = ["Unknown TrackEntry subelement 0xec", "Unknown CueTrackPositions"]
    let problems = result.stderr.split(separator: "\n").filter { line in
      (line.contains("WARN") || line.contains("ERROR"))
        && !containerNotes.contains { line.contains($0) }
    }
    #expect(lost || problems.isEmpty, "\(problems.joined(separator: "\n"))")
    #expect(result.status == 0 && !result.timedOut)
  }

  /// Whether a run's summary (the text on stderr, or the JSON one) says the receiver's reports
  /// counted packets lost.
  static func receiverLostPackets(_ summary: String) -> Bool {
    let count =
      summary.firstMatch(of: /RTP packets sent, (\d+) lost/)?.1
      ?? summary.firstMatch(of: /"packets_lost":(\d+)/)?.1
    return (count.flatMap { Int($0) } ?? 0) > 0
  }
}
