import Foundation
import IngestBench
import IngestTestSupport
import Testing

/// `ingest replay --to srt://...` against srt-live-transmit listeners started per test on their
/// own loopback ports; the checks are on the copy the listener received.
@Suite(.serialized) struct SRTReplayTests {
  static let passphrase = "pass-Phr4se-SECRET"
  static let streamID = "sid-S3CRET-stream"

  @Test(arguments: FixtureReplayTests.expectations)
  func pushedFixtureArrivesClean(fixture: String, streams: [String]) throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let listener = try SRTListener(
      port: try LoopbackServers.freePort(SOCK_DGRAM), output: directory.appending(path: "in.ts"))
    defer { listener.kill() }
    let status = directory.appending(path: "status.jsonl")
    let result = try CommandRunner.ingest(
      [
        "replay", CommandRunner.fixture(fixture), "--to",
        "srt://127.0.0.1:\(listener.port)?latency=\(SRTListener.toleratedLatency)", "--speed", "4",
        "--json", "--status",
        status.path,
      ], timeout: 60)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(!result.timedOut)
    let summary = try JSONLines.summary(result.stdout)
    #expect(summary["dropped"] as? Int == 0)
    // With -a:no the listener exits once the caller has gone, after writing what it received.
    #expect(listener.child.wait(timeout: 10))

    let received = listener.output.path
    #expect(LoopbackServers.size(of: listener.output) == summary["sent_bytes"] as? Int)
    #expect(try CommandRunner.streams(received) == streams)
    #expect(try CommandRunner.decodeErrors(received) == "")
    let check = try TransportStreamCheck(path: received)
    let (badSync, continuityErrors) = (check.badSync, check.continuityErrors)
    let startsCleanly = check.startsCleanly(video: FixtureReplayTests.hasVideo(streams))
    #expect(badSync == 0)
    #expect(continuityErrors == 0)
    #expect(startsCleanly)
    let events = JSONLines.events(in: status)
    #expect(events.first { $0["event"] as? String == "connected" }?["attempt"] as? Int == 1)
  }

  @Test func encryptedPushWithTheRightPassphraseArrivesClean() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let listener = try SRTListener(
      port: try LoopbackServers.freePort(SOCK_DGRAM), output: directory.appending(path: "in.ts"),
      passphrase: Self.passphrase)
    defer { listener.kill() }
    let result = try CommandRunner.ingest(
      [
        "replay", CommandRunner.fixture("video-only.dump"), "--to",
        "srt://127.0.0.1:\(listener.port)?latency=\(SRTListener.toleratedLatency)&passphrase=\(Self.passphrase)&pbkeylen=32",
        "--speed", "4", "--json",
      ], timeout: 60)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(listener.child.wait(timeout: 10))
    #expect(try CommandRunner.streams(listener.output.path) == ["h264"])
    #expect(try CommandRunner.decodeErrors(listener.output.path) == "")
    let check = try TransportStreamCheck(path: listener.output.path)
    let continuityErrors = check.continuityErrors
    #expect(continuityErrors == 0)
    #expect(!(result.stdout + result.stderr).contains(Self.passphrase))
  }

  @Test func wrongPassphraseFailsNamingItWithoutQuotingIt() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let listener = try SRTListener(
      port: try LoopbackServers.freePort(SOCK_DGRAM), output: directory.appending(path: "in.ts"),
      passphrase: Self.passphrase)
    defer { listener.kill() }
    let wrong = "wrong-Passphrase-0000"
    let status = directory.appending(path: "status.jsonl")
    let result = try CommandRunner.ingest(
      [
        "replay", CommandRunner.fixture("video-only.dump"), "--to",
        "srt://127.0.0.1:\(listener.port)?passphrase=\(wrong)", "--speed", "4", "--status",
        status.path,
      ], timeout: 60)
    #expect(result.status == 1)
    #expect(!result.timedOut)
    #expect(result.stderr.contains("passphrase"), "\(result.stderr)")
    let everything = result.stdout + result.stderr + LoopbackServers.text(of: status)
    #expect(!everything.contains(wrong))
    #expect(!everything.contains(Self.passphrase))
    let failed = JSONLines.events(in: status).first { $0["event"] as? String == "failed" }
    #expect((failed?["reason"] as? String)?.contains("passphrase") == true)
    #expect(LoopbackServers.size(of: listener.output) == 0)
  }

  /// The listener is SIGKILLed once data flows and a new one takes its port: the sender notices
  /// (libsrt's peer idle timeout, 5 s), reconnects, and the second copy starts at PAT, PMT and a
  /// keyframe. Realtime pacing, so the run outlasts the idle timeout.
  @Test func listenerKilledAndRestartedGetsACleanRestart() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let port = try LoopbackServers.freePort(SOCK_DGRAM)
    let first = try SRTListener(port: port, output: directory.appending(path: "first.ts"))
    defer { first.kill() }
    let status = directory.appending(path: "status.jsonl")
    let replay = try ChildProcess(
      CommandRunner.ingest,
      [
        "replay", CommandRunner.fixture("screen.dump"), "--to",
        "srt://127.0.0.1:\(port)?latency=200",
        // The outage takes about half of this 10 s run; the test is about the restart.
        "--speed", "realtime", "--min-delivered", "0", "--json", "--status", status.path,
      ], directory: directory, name: "replay")
    defer { replay.kill() }

    try LoopbackServers.waitUntil("the first listener to receive data") {
      LoopbackServers.size(of: first.output) >= 64 * 1024
    }
    first.kill()
    let second = try SRTListener(port: port, output: directory.appending(path: "second.ts"))
    defer { second.kill() }
    let restarted = Date()
    // File growth of the second copy over time, to log when its first keyframe arrived.
    var growth: [(TimeInterval, Int)] = []
    try LoopbackServers.waitUntil("the replay to end", timeout: 60) {
      growth.append((Date().timeIntervalSince(restarted), LoopbackServers.size(of: second.output)))
      return !replay.process.isRunning
    }
    #expect(replay.process.terminationStatus == 0, "\(replay.stderr)")
    #expect(second.child.wait(timeout: 10))

    let names = JSONLines.events(in: status).compactMap { $0["event"] as? String }
      .filter { ["connected", "disconnected", "retry", "failed"].contains($0) }
    #expect(Array(names.prefix(3)) == ["connected", "disconnected", "retry"])
    #expect(names.last == "connected")
    #expect(!names.contains("failed"))

    let received = second.output.path
    let check = try TransportStreamCheck(path: received)
    let (badSync, continuityErrors) = (check.badSync, check.continuityErrors)
    let startsCleanly = check.startsCleanly(video: true)
    #expect(check.packets.count > 100)
    #expect(badSync == 0)
    #expect(continuityErrors == 0)
    #expect(startsCleanly)
    // The ladder may still hold the mic off after the outage: a PID without packets has no
    // parameters for ffmpeg to set up, so every stream that carries packets is decoded.
    #expect(try MediaCheck.decodeErrorsOfStreamsWithPackets(received) == "")

    if let keyframe = check.packets.firstIndex(where: { $0.pid == 0x100 && $0.randomAccess }),
      let arrival = growth.first(where: { $0.1 > keyframe * 188 })
    {
      print(
        "SRT restart: first keyframe received \(String(format: "%.2f", arrival.0)) s after the listener restarted"
      )
    }
  }

  /// `maxbw` (bytes per second) at half of what the stream needs at 4x: the sender cannot keep
  /// up, so the pipeline drops and steps up the ladder, and its ledger stays within the budget.
  @Test func throttledLinkDropsWithinTheBudget() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    // The stream's size from a file replay; screen.dump is 10 s long.
    let file = try CommandRunner.ingest([
      "replay", CommandRunner.fixture("screen.dump"), "--to",
      directory.appending(path: "ref.ts").path,
      "--speed", "max", "--json",
    ])
    let streamBytes = try #require(try JSONLines.summary(file.stdout)["sent_bytes"] as? Int)
    let speed = 4
    let maxbw = streamBytes / 10 * speed / 2

    let listener = try SRTListener(
      port: try LoopbackServers.freePort(SOCK_DGRAM), output: directory.appending(path: "in.ts"))
    defer { listener.kill() }
    let status = directory.appending(path: "status.jsonl")
    let result = try CommandRunner.ingest(
      [
        "replay", CommandRunner.fixture("screen.dump"), "--to",
        "srt://127.0.0.1:\(listener.port)?latency=200&maxbw=\(maxbw)", "--speed", String(speed),
        // This test is about the ledger, not delivery: at half the rate the ladder may keep
        // fewer than half of the video frames, which would fail the run.
        "--min-delivered", "0", "--json", "--status", status.path,
      ], timeout: 60)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(!result.timedOut)
    let summary = try JSONLines.summary(result.stdout)
    let dropped = try #require(summary["dropped"] as? Int)
    let peak = try #require(summary["peak_ledger"] as? Int)
    let budget = try #require(summary["budget"] as? Int)
    #expect(dropped > 0)
    #expect(peak <= budget)
    let events = JSONLines.events(in: status)
    #expect(events.contains { $0["event"] as? String == "tier" })
    #expect(LoopbackServers.size(of: listener.output) > 0)
    let tooLate = events.last { $0["event"] as? String == "sink" }
      .flatMap { ($0["stats"] as? [String: Any])?["too_late_drops"] as? Int }
    print(
      "SRT at maxbw \(maxbw) B/s: pipeline drops \(dropped), libsrt too-late drops \(tooLate ?? -1), "
        + "final tier \(summary["final_tier"] ?? "?"), received \(LoopbackServers.size(of: listener.output)) "
        + "of \(summary["sent_bytes"] ?? "?") bytes")
  }

  /// `mode=listener`: ingest binds the port and waits; srt-live-transmit calls it (as a player
  /// or a relay would) and receives the whole stream, clean.
  @Test func listenerModeServesACaller() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let port = try LoopbackServers.freePort(SOCK_DGRAM)
    let status = directory.appending(path: "status.jsonl")
    let sender = try ChildProcess(
      CommandRunner.ingest,
      [
        "replay", CommandRunner.fixture("screen.dump"), "--to",
        // A caller that a busy machine starts late still finds the listener waiting.
        // In real time: a caller the machine starts seconds late still gets most of it.
        "srt://127.0.0.1:\(port)?mode=listener&latency=\(SRTListener.toleratedLatency)&conntimeo=15000",
        "--speed", "1",
        "--json", "--quiet", "--status", status.path,
      ], directory: directory, name: "ingest")
    defer { sender.kill() }
    try LoopbackServers.waitUntil("ingest to bind UDP port \(port)") {
      guard sender.process.isRunning else {
        throw LoopbackServers.Failure("ingest exited: \(sender.stderr)")
      }
      return Self.udpPortIsBound(port)
    }
    let received = directory.appending(path: "received.ts")
    let caller = try ChildProcess(
      "bash",
      [
        "-c",
        "exec srt-live-transmit -a:no -q \"srt://127.0.0.1:\(port)?mode=caller\" file://con >\"$0\"",
        received.path,
      ],
      directory: directory, name: "caller")
    defer { caller.kill() }
    #expect(sender.wait(timeout: 60))
    #expect(sender.process.terminationStatus == 0, "\(sender.stderr)")
    #expect(caller.wait(timeout: 10))
    let summary = try JSONLines.summary(sender.stdout)
    #expect(LoopbackServers.size(of: received) == summary["sent_bytes"] as? Int)
    try Self.expectCleanStream(received.path)
  }

  /// Listener mode keeps the caller rules: when its caller dies, ingest notices, reports the
  /// disconnection, and serves the next caller from a keyframe with PAT and PMT.
  @Test func listenerModeServesTheNextCallerAfterOneDies() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let port = try LoopbackServers.freePort(SOCK_DGRAM)
    let status = directory.appending(path: "status.jsonl")
    let sender = try ChildProcess(
      CommandRunner.ingest,
      [
        "replay", CommandRunner.fixture("screen.dump"), "--to",
        "srt://127.0.0.1:\(port)?mode=listener&latency=200&conntimeo=15000", "--json",
        "--quiet", "--status", status.path,
      ], directory: directory, name: "ingest")
    defer { sender.kill() }
    try LoopbackServers.waitUntil("ingest to bind UDP port \(port)") {
      guard sender.process.isRunning else {
        throw LoopbackServers.Failure("ingest exited: \(sender.stderr)")
      }
      return Self.udpPortIsBound(port)
    }
    func caller(_ name: String) throws -> (IngestTestSupport.ChildProcess, URL) {
      let received = directory.appending(path: "\(name).ts")
      let child = try ChildProcess(
        "bash",
        [
          "-c",
          "exec srt-live-transmit -a:no -q \"srt://127.0.0.1:\(port)?mode=caller\" file://con >\"$0\"",
          received.path,
        ], directory: directory, name: name)
      return (child, received)
    }
    let (first, firstReceived) = try caller("first")
    defer { first.kill() }
    try LoopbackServers.waitUntil("data at the first caller") {
      LoopbackServers.size(of: firstReceived) > 0
    }
    first.kill()
    func saw(_ event: String) -> Bool {
      JSONLines.events(in: status).contains { $0["event"] as? String == event }
    }
    try LoopbackServers.waitUntil("ingest to notice the first caller is gone", timeout: 30) {
      saw("disconnected")
    }
    let (second, secondReceived) = try caller("second")
    defer { second.kill() }
    #expect(sender.wait(timeout: 60))
    #expect(second.wait(timeout: 10))
    let connected = JSONLines.events(in: status).filter { $0["event"] as? String == "connected" }
    #expect(connected.last?["attempt"] as? Int == 2)
    // Video only: in these last seconds an audio track may have had no packet at all, which
    // ffmpeg's audio filter setup reports although nothing is damaged.
    let video = try CommandRunner.run(
      "ffmpeg", ["-v", "error", "-i", secondReceived.path, "-map", "0:v", "-f", "null", "-"])
    #expect(video.status == 0 && video.stderr.isEmpty, "\(video.stderr)")
    let check = try TransportStreamCheck(path: secondReceived.path)
    #expect(check.startsCleanly(video: true))
    #expect(check.continuityErrors == 0)
  }

  /// `mode=rendezvous` with `port=` as the local port: ingest and srt-live-transmit, each bound
  /// to its own port, connect to each other and the stream arrives clean.
  @Test func rendezvousModeMeetsItsPeer() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let ours = try LoopbackServers.freePort(SOCK_DGRAM)
    let theirs = try LoopbackServers.freePort(SOCK_DGRAM)
    let received = directory.appending(path: "received.ts")
    let peer = try ChildProcess(
      "bash",
      [
        "-c",
        "exec srt-live-transmit -a:no -q \"srt://127.0.0.1:\(ours)?mode=rendezvous&port=\(theirs)\" file://con >\"$0\"",
        received.path,
      ], directory: directory, name: "peer")
    defer { peer.kill() }
    let result = try CommandRunner.ingest(
      [
        "replay", CommandRunner.fixture("screen.dump"), "--to",
        "srt://127.0.0.1:\(theirs)?mode=rendezvous&port=\(ours)&latency=200", "--speed", "4",
        "--json",
      ], timeout: 60)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(!result.timedOut)
    #expect(peer.wait(timeout: 10))
    let summary = try JSONLines.summary(result.stdout)
    #expect(LoopbackServers.size(of: received) == summary["sent_bytes"] as? Int)
    try Self.expectCleanStream(received.path)
  }

  /// Whether a UDP socket is bound to `port` on this host (`/proc/net/udp`, `/proc/net/udp6`).
  static func udpPortIsBound(_ port: Int) -> Bool {
    let needle = ":" + String(port, radix: 16, uppercase: true).leftPadded(to: 4) + " "
    // Read to the end: a /proc file says it is empty, and a reader that trusts its size gets
    // the first page only, which on a busy machine (many UDP sockets) misses the port.
    return ["/proc/net/udp", "/proc/net/udp6"].contains {
      let data = FileHandle(forReadingAtPath: $0)?.readDataToEndOfFile() ?? Data()
      return String(decoding: data, as: UTF8.self).contains(needle)
    }
  }

  static func expectCleanStream(_ path: String) throws {
    #expect(try CommandRunner.streams(path) == ["h264", "aac,48000,2", "aac,44100,1"])
    #expect(try CommandRunner.decodeErrors(path) == "")
    let check = try TransportStreamCheck(path: path)
    let (badSync, continuityErrors) = (check.badSync, check.continuityErrors)
    #expect(badSync == 0)
    #expect(continuityErrors == 0)
    #expect(check.startsCleanly(video: true))
  }

  /// No listener and a 4 s connect timeout: every attempt blocks the sender thread for 4 s.
  /// Status keeps coming meanwhile (stats events between the retries, times never going back),
  /// and each retry waits its announced delay after the failed attempt ended.
  @Test func blockedConnectsKeepStatusFlowingAndBackOffFromTheirEnd() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let port = try LoopbackServers.freePort(SOCK_DGRAM)
    let status = directory.appending(path: "status.jsonl")
    let result = try CommandRunner.ingest(
      [
        "replay", CommandRunner.fixture("screen.dump"), "--to",
        "srt://127.0.0.1:\(port)?conntimeo=4000", "--status", status.path,
      ], timeout: 60)
    #expect(result.status == 1)
    #expect(!result.timedOut)
    let events = JSONLines.events(in: status)
    let times = events.compactMap { $0["t"] as? Double }
    #expect(times.count == events.count)
    #expect(times == times.sorted(), "status times went back: \(times)")
    let retries = events.filter { $0["event"] as? String == "retry" }
    #expect(retries.count >= 2, "\(events)")
    for (failed, next) in zip(retries, retries.dropFirst()) {
      let start = try #require(failed["t"] as? Double)
      let end = try #require(next["t"] as? Double)
      let delay = try #require(failed["delay_s"] as? Double)
      // The next attempt began `delay` after this one failed and lasted the connect timeout
      // (libsrt gives up no earlier, less a margin for its own rounding).
      #expect(end - start >= delay + 3.8, "retry at \(start), next failure at \(end)")
      let ticks = events.filter {
        $0["event"] as? String == "stats" && ($0["t"] as? Double ?? 0) > start
          && ($0["t"] as? Double ?? 0) < end
      }
      #expect(ticks.count >= 3, "\(ticks.count) stats events in \(end - start) s")
    }
  }
}

/// Reads `--json` summaries and `--status` files.
enum JSONLines {
  /// The summary object `--json` prints as the last line of standard output.
  static func summary(_ stdout: String) throws -> [String: Any] {
    guard let line = stdout.split(separator: "\n").last,
      let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
    else { throw LoopbackServers.Failure("no JSON summary in: \(stdout)") }
    return object
  }

  /// Every status event of a status file, in order.
  static func events(in file: URL) -> [[String: Any]] {
    LoopbackServers.text(of: file).split(separator: "\n").compactMap {
      try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
  }
}

/// Decoding checks beyond `CommandRunner.decodeErrors`.
enum MediaCheck {
  /// ffmpeg's error lines decoding every stream that has at least one packet ("" when clean).
  static func decodeErrorsOfStreamsWithPackets(_ path: String) throws -> String {
    let probe = try CommandRunner.run(
      "ffprobe",
      [
        "-v", "error", "-count_packets", "-show_entries", "stream=index,nb_read_packets", "-of",
        "compact=p=0:nk=1", path,
      ])
    var indices: Set<Int> = []
    for line in probe.stdout.split(separator: "\n") {
      let fields = line.split(separator: "|")
      if fields.count == 2, let index = Int(fields[0]), let count = Int(fields[1]), count > 0 {
        indices.insert(index)
      }
    }
    guard !indices.isEmpty else { return "no stream with packets" }
    let maps = indices.sorted().flatMap { ["-map", "0:\($0)"] }
    let result = try CommandRunner.run(
      "ffmpeg", ["-nostdin", "-v", "error", "-i", path] + maps + ["-f", "null", "-"])
    return result.stderr + (result.status == 0 ? "" : "exit \(result.status)")
  }
}

/// The SRT passphrase and stream id and the RTMP stream key never reach standard output, standard
/// error (progress line included: the run is on a pseudo-terminal) or the status file.
@Suite(.serialized) struct SecretRedactionTests {
  @Test func srtPassphraseAndStreamIDStayOut() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let listener = try SRTListener(
      port: try LoopbackServers.freePort(SOCK_DGRAM), output: directory.appending(path: "in.ts"),
      passphrase: SRTReplayTests.passphrase)
    defer { listener.kill() }
    let url =
      "srt://127.0.0.1:\(listener.port)?passphrase=\(SRTReplayTests.passphrase)"
      + "&streamid=\(SRTReplayTests.streamID)"
    let (result, status) = try runOnTerminal(url, directory: directory)
    #expect(result.status == 0, "\(result.stdout)")
    #expect(LoopbackServers.size(of: listener.output) > 0)
    let everything = result.stdout + LoopbackServers.text(of: status)
    #expect(everything.contains("passphrase=***"))
    #expect(everything.contains("Mb/s"))  // the progress line was drawn
    #expect(!everything.contains(SRTReplayTests.passphrase))
    #expect(!everything.contains(SRTReplayTests.streamID))
  }

  @Test func rtmpKeyStaysOut() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let server = try NginxRTMP(
      port: try LoopbackServers.freePort(SOCK_STREAM), directory: directory.appending(path: "nginx")
    )
    defer { server.kill() }
    let url = "rtmp://127.0.0.1:\(server.port)/live/\(RTMPReplayTests.key)"
    let (result, status) = try runOnTerminal(url, directory: directory)
    #expect(result.status == 0, "\(result.stdout)")
    try server.waitForSessionEnd()
    #expect(LoopbackServers.size(of: server.recording(key: RTMPReplayTests.key)) > 0)
    let everything = result.stdout + LoopbackServers.text(of: status)
    #expect(everything.contains("/live/***"))
    #expect(everything.contains("Mb/s"))
    #expect(!everything.contains(RTMPReplayTests.key))
  }

  /// Runs a short replay to `url` on a pseudo-terminal (util-linux `script`), so the progress line
  /// is drawn; standard output and error both end up in `stdout`.
  private func runOnTerminal(_ url: String, directory: URL) throws -> (CommandRunner.Result, URL) {
    let status = directory.appending(path: "status.jsonl")
    let command = [
      CommandRunner.ingest, "replay", CommandRunner.fixture("video-only.dump"), "--to", url,
      "--speed", "2", "--status", status.path,
    ].map { "'" + $0.replacing("'", with: "'\\''") + "'" }.joined(separator: " ")
    let result = try CommandRunner.run("script", ["-qefc", command, "/dev/null"], timeout: 60)
    #expect(!result.timedOut)
    return (result, status)
  }

  /// `--speed max` to a live output is paced to real time: a receiver plays at real time, so
  /// anything faster only filled the ring and was dropped (88 % of the stream before).
  @Test func maxSpeedIsPacedToRealTimeAndDelivers() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let listener = try SRTListener(
      port: try LoopbackServers.freePort(SOCK_DGRAM), output: directory.appending(path: "in.ts"))
    defer { listener.kill() }
    let status = directory.appending(path: "status.jsonl")
    let result = try CommandRunner.ingest(
      [
        "replay", CommandRunner.fixture("screen.dump"), "--to",
        "srt://127.0.0.1:\(listener.port)?latency=120", "--speed", "max", "--json", "--status",
        status.path,
      ], timeout: 60)
    #expect(!result.timedOut)
    #expect(result.status == 0, "\(result.stderr)")
    let summary = try JSONLines.summary(result.stdout)
    let appended = try #require((summary["appended"] as? [String: Int])?["video"])
    let sent = try #require((summary["sent"] as? [String: Int])?["video"])
    #expect(sent * 10 >= appended * 9, "\(sent) of \(appended) video frames")
    #expect(summary["ok"] as? Bool == true)
    let start = JSONLines.events(in: status).first { $0["event"] as? String == "start" }
    #expect(start?["speed"] as? String == "realtime")
  }
}

extension String {
  fileprivate func leftPadded(to width: Int) -> String {
    String(repeating: "0", count: max(0, width - count)) + self
  }
}
