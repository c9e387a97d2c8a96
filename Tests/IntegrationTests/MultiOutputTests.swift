import Foundation
import Glibc
import IngestTestSupport
import Testing

/// `--to` given more than once: one read of the dump, one budget, and an own ring, drop policy
/// and sender for each output, so a slow or failed output drops or fails for itself.
@Suite(.serialized) struct MultiOutputTests {
  /// The `outputs` array of a `--json` summary, by output number.
  private func outputs(_ summary: [String: Any]) throws -> [[String: Any]] {
    try #require(summary["outputs"] as? [[String: Any]], "\(summary)")
  }

  private func counts(_ object: [String: Any], _ key: String) -> [String: Int] {
    object[key] as? [String: Int] ?? [:]
  }

  /// SRT and RTMP in one run: the RTMP output loads libavformat, which brings the GnuTLS build
  /// of libsrt, while the SRT output runs. Every libsrt call of the run must still go to the one
  /// library its socket was made in, or the SRT connection is lost the moment libavformat loads
  /// (it failed in about half the runs). Twenty runs, each checked at the SRT receiver: all the
  /// bytes the summary sent arrived and decode clean, and the RTMP server recorded its copy.
  @Test func srtAndRTMPInOneRunBothDeliver() throws {
    for trial in 1...20 {
      let directory = try CommandRunner.temporaryDirectory()
      defer { try? FileManager.default.removeItem(at: directory) }
      let listener = try SRTListener(
        port: try LoopbackServers.freePort(SOCK_DGRAM), output: directory.appending(path: "in.ts"))
      defer { listener.kill() }
      let server = try NginxRTMP(
        port: try LoopbackServers.freePort(SOCK_STREAM),
        directory: directory.appending(path: "nginx"))
      defer { server.kill() }
      let result = try CommandRunner.ingest(
        [
          "replay", CommandRunner.fixture("video-only.dump"),
          "--to", "srt://127.0.0.1:\(listener.port)?latency=120",
          "--to", "rtmp://127.0.0.1:\(server.port)/live/both", "--speed", "2", "--json", "--quiet",
        ], timeout: 60)
      #expect(!result.timedOut, "trial \(trial): the run hung")
      #expect(result.status == 0, "trial \(trial): \(result.stderr)")
      #expect(listener.child.wait(timeout: 10), "trial \(trial): the SRT receiver did not end")
      let summary = try JSONLines.summary(result.stdout)
      let list = try outputs(summary)
      try #require(list.count == 2, "trial \(trial)")
      let srtSent = try #require(list[0]["sent_bytes"] as? Int, "\(list[0])")
      #expect(srtSent > 0, "trial \(trial)")
      #expect(
        LoopbackServers.size(of: listener.output) == srtSent,
        "trial \(trial): the SRT receiver got \(LoopbackServers.size(of: listener.output)) of \(srtSent) bytes"
      )
      #expect(try CommandRunner.decodeErrors(listener.output.path) == "", "trial \(trial)")
      try server.waitForSessionEnd()
      #expect(LoopbackServers.size(of: server.recording(key: "both")) > 0, "trial \(trial)")
    }
  }

  /// SRT through a real 400 kbit/s link (a network namespace and `tc tbf`) for a stream of
  /// about 850 kbit/s, and an HLS recording in the same run: the SRT output drops from its own
  /// ring while the recording keeps every frame and decodes clean in ffmpeg and GStreamer.
  @Test func congestedSRTDropsForItselfWhileTheRecordingStaysComplete() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    guard let link = LinkedNamespace(tag: 23, subnet: "198.18.23") else {
      TestEnvironment.unavailable(
        "cannot create a network namespace here (needs root and iproute2)")
      return
    }
    defer { link.remove() }
    let received = directory.appending(path: "rx.ts")
    let peer = try SRTPeer(
      port: 9000, output: received, bind: link.peerAddress, namespace: link.name)
    defer { peer.stop(signal: SIGKILL) }
    try link.throttle(rate: "400kbit")
    let recording = directory.appending(path: "rec").path
    let status = directory.appending(path: "status.jsonl").path
    let result = try CommandRunner.ingest(
      [
        "replay", CommandRunner.fixture("screen.dump"),
        "--to", "srt://\(link.peerAddress):\(peer.port)?latency=120", "--to", "hls:\(recording)",
        "--json", "--quiet", "--status", status, "--min-delivered", "0",
      ], timeout: 90)
    #expect(!result.timedOut, "the run hung")
    #expect(result.status == 0, "\(result.stderr)")
    let summary = try JSONLines.summary(result.stdout)
    let appended = counts(summary, "appended")
    let list = try outputs(summary)
    try #require(list.count == 2)
    let srt = list[0]
    let hls = list[1]
    #expect(srt["output"] as? Int == 1 && hls["output"] as? Int == 2)
    // What the link could not carry is dropped from the SRT output's ring, or, on a machine
    // busy enough that libsrt was handed it before the ring filled, lost on the link as too
    // late: either way that output's alone.
    let undelivered = (srt["dropped"] as? Int ?? 0) + (srt["lost"] as? Int ?? 0)
    #expect(undelivered > 0, "the congested output delivered everything: \(srt)")
    // The recording carries the video and the mix of app and mic (HLS's default): every video
    // frame and every mixed frame.
    #expect(counts(hls, "sent")["video"] == appended["video"], "the recording lost frames: \(hls)")
    #expect(hls["audio"] as? String == "mix", "\(hls)")
    #expect(counts(hls, "sent")["audioApp"] == hls["mix_frames"] as? Int, "\(hls)")
    #expect(hls["dropped"] as? Int == 0, "\(hls)")

    // The recording: every segment decodes, in both decoders.
    let playlist = recording + "/index.m3u8"
    #expect(try CommandRunner.decodeErrors(playlist).isEmpty)
    let gst = try GStreamerDecode.decode(playlist, codec: "h264", playlist: true)
    #expect(gst.problems.isEmpty, "\(gst.problems)")
    #expect(gst.frames == appended["video"], "GStreamer decoded \(gst.frames) pictures")

    // Figures of each output are labelled with its number; the run's own events are not.
    let events = FaultSupport.statusEvents(status)
    let stats = events.filter { $0["event"] as? String == "stats" }
    #expect(Set(stats.compactMap { $0["output"] as? Int }) == [1, 2])
    #expect(events.first { $0["event"] as? String == "summary" }?["output"] == nil)
    let drops = events.filter { $0["event"] as? String == "drops" }
    #expect(drops.allSatisfy { $0["output"] as? Int == 1 }, "\(drops)")
    #expect(!drops.isEmpty || (srt["dropped"] as? Int ?? 0) == 0, "\(drops)")
    print(
      "SRT at 400 kbit/s with an HLS recording: video sent \(counts(srt, "sent")["video"] ?? 0) "
        + "live, \(counts(hls, "sent")["video"] ?? 0) recorded of \(appended["video"] ?? 0)")
  }

  /// `ingest live` over SRT through a real 900 kbit/s link for a 2.5 Mb/s encoder, with an HLS
  /// recording beside it on a slow disk (writes at 40 kB/s, a third of what the cut encoder
  /// makes): the SRT output's rate controller cuts the encoder, and the recording's ladder moves
  /// for its own reason (its ring backs up behind the disk) and asks for a lower bitrate and
  /// frame rate. Every request the encoder gets comes from the run's one control plane (each
  /// names whose wish it carries out), the recording's among them; none is above what the
  /// controller last decided, none below the floor the user allowed (the recording's ladder
  /// once asked for 200 kb/s, read from a second in which nothing had been sent yet, and held
  /// the encoder there for the whole run), none restores the nominal rate while the controller
  /// holds the encoder lower; and what the encoder applied last is what the control plane asked
  /// last.
  @Test func liveRunAsksTheEncoderFromOneControlPlane() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    guard let link = LinkedNamespace(tag: 26, subnet: "198.18.26") else {
      TestEnvironment.unavailable(
        "cannot create a network namespace here (needs root and iproute2)")
      return
    }
    defer { link.remove() }
    let peer = try SRTPeer(
      port: 9000, output: directory.appending(path: "rx.ts"), bind: link.peerAddress,
      namespace: link.name)
    defer { peer.stop(signal: SIGKILL) }
    try link.throttle(rate: "900kbit")
    if let reason = SlowDisk.unavailableReason {
      TestEnvironment.unavailable(reason)
      return
    }
    let disk = try SlowDisk(directory: directory.appending(path: "disk"), bytesPerSecond: 40_000)
    defer { disk.stop() }
    let recording = disk.path + "/rec"
    let status = directory.appending(path: "status.jsonl").path
    let floor = 300_000
    let result = try CommandRunner.ingest(
      [
        "live", "testsrc", "--size", "1280x720", "--bitrate", "2500000", "--duration", "25",
        "--floor", String(floor),
        "--to", "srt://\(link.peerAddress):\(peer.port)?latency=300", "--to", "hls:\(recording)",
        "--min-delivered", "0", "--json", "--quiet", "--status", status,
      ], timeout: 300)
    #expect(!result.timedOut, "the run hung")
    #expect(result.status == 0, "\(result.stderr)")
    let events = FaultSupport.statusEvents(status)
    func named(_ name: String) -> [[String: Any]] {
      events.filter { $0["event"] as? String == name }
    }
    // The recording's ladder moved, and what it wished reached the encoder through the control
    // plane.
    let recordingTiers = named("tier").filter { $0["output"] as? Int == 2 }
    #expect(!recordingTiers.isEmpty, "\(named("tier"))")
    // The controller cut the encoder.
    let cuts = named("rate").compactMap { $0["target_bps"] as? Int }.filter { $0 < 2_500_000 }
    #expect(!cuts.isEmpty, "\(named("rate"))")

    let requests = named("encoder")
    #expect(!requests.isEmpty)
    #expect(requests.allSatisfy { $0["wish_of"] != nil }, "\(requests)")
    #expect(requests.contains { $0["wish_of"] as? Int == 2 }, "\(requests)")
    var decided: Int?
    var asked: Int?
    // Every bitrate asked (the nominal rate for a restore), and when (run seconds).
    var asks: [(time: Double, bps: Int)] = []
    for event in events {
      if event["event"] as? String == "rate", event["output"] as? Int == 1 {
        decided = event["target_bps"] as? Int
      }
      guard event["event"] as? String == "encoder", event["request"] as? String == "bitrate"
      else { continue }
      if let bps = event["target_bps"] as? Int {
        #expect(bps >= floor, "below the floor: \(event)")
        if let decided { #expect(bps <= decided, "above the controller's \(decided): \(event)") }
        asked = bps
      } else {
        #expect(decided.map { $0 >= 2_500_000 } ?? true, "restored under a cut: \(event)")
        asked = nil
      }
      asks.append((event["t"] as? Double ?? 0, asked ?? 2_500_000))
    }
    // The encoder applied what it was asked. A bitrate takes effect at the next keyframe
    // (every 2 s), and the run goes on after the encoder's input ended while the recording
    // drains onto the slow disk (the controller climbs on the idle link then): what was asked
    // in the encoder's last 2.5 s may never have been applied, and the last request before
    // them is then the last applied.
    let applied = named("encoderReport").compactMap { $0["report"] as? [String: Any] }.filter {
      $0["event"] as? String == "applied" && $0["request"] as? String == "bitrate"
    }
    let lastApplied = applied.last?["target_bps"] as? Int
    let encoderEnd = named("encoderReport").last?["t"] as? Double ?? 0
    let settled = asks.last { $0.time < encoderEnd - 2.5 }
    let late = asks.filter { $0.time >= encoderEnd - 2.5 }.map(\.bps)
    let story =
      "applied \(applied.suffix(3)); asked \(asks.suffix(4)); encoder's last report \(encoderEnd) s"
    #expect(lastApplied == settled?.bps || late.contains(lastApplied ?? -1), "\(story)")
    print(
      "live over SRT at 900 kbit/s with HLS on a slow disk: \(requests.count) encoder requests "
        + "(\(requests.filter { $0["wish_of"] as? Int == 2 }.count) the recording's), controller's "
        + "last \(decided ?? 0) b/s, encoder asked \(asked ?? 0) b/s, recording's tier changes "
        + "\(recordingTiers.count)")
  }

  /// An SRT output that never connects (nothing listens) beside a `.ts` recording: the file gets
  /// every sample and decodes clean; the run fails (exit 1) and says which output failed.
  @Test func anOutputThatNeverConnectsDoesNotStopTheRecording() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let port = try LoopbackServers.freePort(SOCK_DGRAM)
    let file = directory.appending(path: "rec.ts").path
    let result = try CommandRunner.ingest(
      [
        "replay", CommandRunner.fixture("screen.dump"),
        "--to", "srt://127.0.0.1:\(port)?conntimeo=500", "--to", file, "--json", "--quiet",
      ], timeout: 90)
    #expect(!result.timedOut, "the run hung")
    #expect(result.status == 1, "\(result.stderr)")
    #expect(
      result.stderr.contains("output 1 (") && result.stderr.contains("output failed"),
      "\(result.stderr)")
    let summary = try JSONLines.summary(result.stdout)
    #expect(summary["ok"] as? Bool == false)
    let list = try outputs(summary)
    try #require(list.count == 2)
    #expect(list[0]["ok"] as? Bool == false)
    #expect(list[1]["ok"] as? Bool == true)
    #expect(counts(list[1], "sent") == counts(summary, "appended"), "\(list[1])")
    #expect(try CommandRunner.decodeErrors(file).isEmpty)
  }

  /// Local outputs alone are pumped in the replay loop: at full speed nothing is dropped, and
  /// each `.ts` is byte for byte what a run with that output alone writes.
  @Test func localOutputsTogetherWriteWhatEachWritesAlone() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let alone = directory.appending(path: "alone.ts").path
    let first = directory.appending(path: "first.ts").path
    let second = directory.appending(path: "second.ts").path
    let dump = CommandRunner.fixture("bframes.dump")
    let single = try CommandRunner.ingest(["replay", dump, "--to", alone, "--speed", "max"])
    #expect(single.status == 0, "\(single.stderr)")
    let both = try CommandRunner.ingest([
      "replay", dump, "--to", first, "--to", second, "--to", "hls:\(directory.path)/hls",
      "--speed", "max", "--json",
    ])
    #expect(both.status == 0, "\(both.stderr)")
    let expected = try Data(contentsOf: URL(fileURLWithPath: alone))
    #expect(try Data(contentsOf: URL(fileURLWithPath: first)) == expected)
    #expect(try Data(contentsOf: URL(fileURLWithPath: second)) == expected)
    let list = try outputs(try JSONLines.summary(both.stdout))
    #expect(list.count == 3 && list.allSatisfy { $0["dropped"] as? Int == 0 }, "\(list)")
  }

  /// Two outputs naming one file (or one HLS directory) would write over each other.
  @Test func oneFileNamedTwiceIsAUsageError() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appending(path: "same.ts").path
    let result = try CommandRunner.ingest([
      "replay", CommandRunner.fixture("screen.dump"), "--to", file, "--to", "file:\(file)",
    ])
    #expect(result.status == 2)
    #expect(result.stderr.contains("twice"), "\(result.stderr)")
    #expect(!FileManager.default.fileExists(atPath: file))
  }
}
