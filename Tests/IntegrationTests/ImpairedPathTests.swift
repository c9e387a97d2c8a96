import Foundation
import Glibc
import IngestTestSupport
import Testing

/// `ingest replay` over SRT through an impaired path: a network namespace joined by a veth pair,
/// `Scripts/bench-support/udp_relay.py` inside it on PEER:9000 adding delay, loss, jitter or a
/// blackout (this kernel has no netem), and `srt-live-transmit` behind the relay on
/// 127.0.0.1:9001 in the namespace writing what it receives. Each test checks what arrived: the
/// run succeeds, the copy decodes without an error line (but in frames the path tore), enough
/// of the dump's video frames decode, and the summary never says more video frames went than
/// the receiver decoded.
///
/// Needs root (the namespace, the relay's real-time scheduling), iproute2, python3, srt-tools
/// and ffmpeg: without them each test prints why it is skipped, and fails when CI is set.
@Suite(.serialized) struct ImpairedPathTests {
  /// The summary may count a frame the receiver cannot decode: one whose tail was still in
  /// flight when the connection closed, or one damaged on the way that ffmpeg drops. What the
  /// receiver dropped as too late the sender counts as lost, or as sent but possibly lost when
  /// its acknowledgement came at its deadline (`SRTDropLedger`).
  static let summaryTolerance = 6

  /// A round trip of 100 ms (50 ms each way) at latency 400 ms (what `latency=auto` picks for
  /// it: 4 x RTT): nothing is lost, so nearly every frame arrives, and libsrt measures the
  /// relay's round trip.
  @Test func roundTripOf100Milliseconds() throws {
    guard let run = try ImpairedRun(tag: 31, relay: ["--delay", "50"], latency: 400) else {
      return
    }
    run.expectDelivered(share: 0.95)
    let roundTrips = run.events(named: "sink").compactMap {
      ($0["stats"] as? [String: Any])?["rtt_ms"] as? Double
    }.filter { $0 > 0 }.sorted()
    let median = roundTrips.isEmpty ? 0 : roundTrips[roundTrips.count / 2]
    #expect(median >= 90 && median <= 150, "libsrt's round trips: \(roundTrips)")
  }

  /// 5 % random loss each way, 10 ms each way, latency 200 ms (ten round trips): SRT
  /// retransmits what the relay drops, data and acknowledgements alike.
  @Test func randomLossOf5Percent() throws {
    guard
      let run = try ImpairedRun(
        tag: 32, relay: ["--delay", "10", "--loss", "0.05"], latency: 200)
    else { return }
    run.expectDelivered(share: 0.9)
    #expect(run.counters.up.droppedLoss > 0 && run.counters.down.droppedLoss > 0, "\(run)")
  }

  /// Gilbert-Elliott loss each way (3 % on average, in bursts of 4 packets on average), 10 ms
  /// each way, latency 200 ms: a burst costs one NAK and several retransmissions at once.
  @Test func burstyLoss() throws {
    guard
      let run = try ImpairedRun(
        tag: 33, relay: ["--delay", "10", "--burst-loss", "0.0077:0.25"], latency: 200)
    else { return }
    run.expectDelivered(share: 0.9)
    #expect(run.counters.up.droppedLoss > 0, "\(run)")
  }

  /// 20 +/- 10 ms each way, drawn per packet, so packets overtake each other; latency 200 ms.
  /// The receiver puts them back in order (and may ask for some it only thinks are lost).
  @Test func jitterThatReorders() throws {
    guard
      let run = try ImpairedRun(
        tag: 34, relay: ["--delay", "20", "--jitter", "10"], latency: 200)
    else { return }
    run.expectDelivered(share: 0.9)
    #expect(run.counters.up.reordered > 0, "\(run)")
  }

  /// `latency=auto` on a 100 ms round trip: the sender measures the path with an SRT induction
  /// before connecting and asks for 4 x RTT, which the receiver (at 120 ms) takes; no warning.
  @Test func automaticLatencyFitsTheRoundTrip() throws {
    guard
      let run = try ImpairedRun(
        tag: 36, relay: ["--delay", "50"], latency: 120, senderLatency: "auto")
    else { return }
    run.expectDelivered(share: 0.95)
    let latency = try #require(run.events(named: "latency").first, "\(run)")
    #expect(latency["auto"] as? Bool == true)
    #expect(latency["rtt_source"] as? String == "probe")
    let rtt = latency["rtt_ms"] as? Double ?? 0
    #expect((90...160).contains(rtt), "\(latency)")
    #expect((latency["latency_ms"] as? Int ?? 0) >= 400, "\(latency)")
    #expect(latency["warning"] == nil)
    #expect(run.summary["warnings"] == nil)
  }

  /// A latency of 200 ms on a 150 ms round trip is under three round trips: said on standard
  /// error while the run goes on, in the `latency` event and in the summary.
  @Test func aLatencyUnderThreeRoundTripsIsWarnedAbout() throws {
    guard let run = try ImpairedRun(tag: 37, relay: ["--delay", "75"], latency: 200) else {
      return
    }
    let latency = try #require(run.events(named: "latency").first, "\(run)")
    #expect(latency["applies"] as? String == "sender")
    #expect((latency["warning"] as? String ?? "").contains("under 3 round trips"), "\(latency)")
    let warnings = run.summary["warnings"] as? [String] ?? []
    #expect(warnings.count == 1 && warnings[0].contains("latency=auto"), "\(run.summary)")
    #expect(run.result.stderr.contains("warning: SRT latency 200 ms"), "\(run.result.stderr)")
  }

  /// One blackout of 2 s, both ways, 4 s into the 10 s dump, 10 ms each way, latency 200 ms:
  /// what was in flight is too late once the path is back, and the stream must go on from a
  /// clean point, with the summary counting only what got through.
  @Test func blackoutOf2Seconds() throws {
    guard
      let run = try ImpairedRun(
        tag: 35, relay: ["--delay", "10", "--blackout", "100:2:4:1"], latency: 200)
    else { return }
    run.expectDelivered(share: 0.5)
    #expect(run.counters.blackouts == 1 && run.counters.up.droppedBlackout > 0, "\(run)")
  }
}

/// One `ingest replay Fixtures/screen.dump` through the relay, finished: the processes stopped
/// by pid, the namespace removed; what the receiver got, the summary and the relay's counters.
struct ImpairedRun: CustomStringConvertible {
  var result: CommandRunner.Result
  var summary: [String: Any]
  var counters: RelayCounters
  var receivedBytes: Int
  var appendedVideo: Int
  var decodedVideo: Int
  /// What ffmpeg printed decoding the receiver's copy.
  var decodeErrors: String
  /// The units of the copy the path tore (`TornUnits`).
  var torn: TornUnits
  /// What ffmpeg printed decoding the copy without those units (the copy's errors when there
  /// were none).
  var intactDecodeErrors: String

  /// Runs the replay, or returns nil (having said why) where the path cannot be built.
  /// - Parameters:
  ///   - tag: this test's own namespace and /30 (198.18.TAG.0, reserved for benchmarks by
  ///     RFC 2544, routed nowhere).
  ///   - relay: the relay's impairment options.
  ///   - latency: SRT latency (ms) at both ends.
  ///   - senderLatency: the sender's `latency=` when it differs (`auto`).
  init?(tag: Int, relay options: [String], latency: Int, senderLatency: String? = nil) throws {
    if let tool = ImpairedPathEnvironment.missingTool {
      TestEnvironment.unavailable("\(tool) is not installed")
      return nil
    }
    guard getuid() == 0, let link = LinkedNamespace(tag: tag, subnet: "198.18.\(tag)") else {
      TestEnvironment.unavailable(
        "cannot create a network namespace here (needs root and iproute2)")
      return nil
    }
    defer { link.remove() }
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let serverPort = 9001
    let received = directory.appending(path: "rx.ts")
    // -a:no: the listener exits once its caller has gone, having written all it received.
    let listener = try WatchedProcess(
      [
        "srt-live-transmit", "-a:no", "-v",
        "srt://127.0.0.1:\(serverPort)?mode=listener&latency=\(latency)", "file://con",
      ], namespace: link.name, stdout: received, readyMarker: " listen...")
    defer { listener.stop(signal: SIGKILL) }
    let relay = try ImpairmentRelay(
      namespace: link.name, listen: "\(link.peerAddress):9000",
      forward: "127.0.0.1:\(serverPort)", options: options)
    defer { _ = try? relay.stop() }

    let statusPath = directory.appending(path: "status.jsonl").path
    result = try CommandRunner.ingest(
      [
        "replay", CommandRunner.fixture("screen.dump"), "--to",
        "srt://\(relay.listen)?latency=\(senderLatency ?? String(latency))", "--json", "--quiet",
        "--status", statusPath,
      ], timeout: 60)
    // The receiver's copy is complete once it has exited by itself; a listener still running
    // 15 s after its caller ended never will.
    if !listener.waitForExit(seconds: 15) { listener.stop(signal: SIGTERM) }
    counters = try relay.stop()
    summary = (try? JSONLines.summary(result.stdout)) ?? [:]
    appendedVideo = (summary["appended"] as? [String: Int])?["video"] ?? 0
    decodedVideo = try Self.videoFrames(received.path)
    decodeErrors = try CommandRunner.decodeErrors(received.path)
    torn = try TornUnits(path: received.path)
    if !decodeErrors.isEmpty, torn.count > 0 {
      let intact = directory.appending(path: "intact.ts")
      try torn.intact.write(to: intact)
      intactDecodeErrors = try CommandRunner.decodeErrors(intact.path)
    } else {
      intactDecodeErrors = decodeErrors
    }
    receivedBytes = LoopbackServers.size(of: received)
    // Read before the directory goes.
    events = FaultSupport.statusEvents(statusPath)
  }

  /// The status events of the run, in order.
  private var events: [[String: Any]]

  func events(named name: String) -> [[String: Any]] {
    events.filter { $0["event"] as? String == name }
  }

  /// What every impaired path must give: exit status 0, a clean decode, at least `share` of
  /// the dump's video frames decoded at the receiver, and a summary that does not claim more
  /// video frames than that (within `ImpairedPathTests.summaryTolerance`).
  ///
  /// A clean decode of what arrived whole: when the receiver gave up on a packet (a frame the
  /// blackout cut in two, or a retransmission that came after its play time on a busy machine),
  /// the frame around the hole decodes with errors whatever the sender did, so the copy without
  /// the units the path tore must decode without any.
  func expectDelivered(share: Double, sourceLocation: SourceLocation = #_sourceLocation) {
    print("impaired path: \(self)")
    #expect(!result.timedOut, "the run hung: \(self)", sourceLocation: sourceLocation)
    #expect(result.status == 0, "\(result.stderr)\n\(self)", sourceLocation: sourceLocation)
    #expect(
      intactDecodeErrors == "",
      "\(decodeErrors)\nwithout the \(torn.count) torn units: \(intactDecodeErrors)\n\(self)",
      sourceLocation: sourceLocation)
    #expect(appendedVideo > 0, "no summary: \(result.stdout)", sourceLocation: sourceLocation)
    #expect(
      Double(decodedVideo) >= share * Double(appendedVideo), "\(self)",
      sourceLocation: sourceLocation)
    let sent = (summary["sent"] as? [String: Int])?["video"] ?? Int.max
    #expect(
      sent - possiblyLostVideo <= decodedVideo + ImpairedPathTests.summaryTolerance,
      "the summary claims more video frames than the receiver decoded: \(self)",
      sourceLocation: sourceLocation)
  }

  /// Video frames the summary counts as sent but names as possibly lost (acknowledged only at
  /// their play-out deadline).
  var possiblyLostVideo: Int {
    ((summary["link"] as? [String: Any])?["possibly_lost"] as? [String: Int])?["video"] ?? 0
  }

  var description: String {
    "\(decodedVideo) of \(appendedVideo) video frames decoded at the receiver "
      + "(\(receivedBytes) bytes), exit \(result.status), summary sent "
      + "\((summary["sent"] as? [String: Int])?["video"] ?? -1) (possibly lost "
      + "\(possiblyLostVideo)), undelivered "
      + "\(summary["undelivered"] as? Int ?? -1), units the path tore \(torn.byPID); "
      + "relay \(counters)"
  }

  /// Video frames ffprobe decodes in a transport stream (0 for an empty or missing file).
  static func videoFrames(_ path: String) throws -> Int {
    let probe = try CommandRunner.run(
      "ffprobe",
      [
        "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
        "stream=nb_read_frames", "-of", "csv=p=0", path,
      ])
    // A transport stream lists its streams twice (in its program and on their own).
    return probe.stdout.split(separator: "\n").lazy.compactMap {
      Int($0.trimmingCharacters(in: CharacterSet(charactersIn: ", ")))
    }.first ?? 0
  }
}
