import Foundation
import Glibc
import IngestCore
import IngestTestSupport
import Testing

/// Faults around a real run of `ingest replay`: a listener that dies, a link that goes dark or
/// slow, a dump that is cut or corrupt. Whatever happens, the process neither crashes nor hangs,
/// the ledger stays within the budget, and the summary's accounts close: every appended sample
/// is sent, dropped or rejected (by reason), or reported undelivered.
@Suite(.serialized) struct FaultInjectionTests {
  /// What every run must show, whatever the fault.
  private func expectSound(
    _ result: CommandRunner.Result, allowedStatus: Set<Int32> = [0],
    sourceLocation: SourceLocation = #_sourceLocation
  ) -> ReplayAccounts? {
    #expect(!result.timedOut, "the run hung", sourceLocation: sourceLocation)
    #expect(
      allowedStatus.contains(result.status), "exit \(result.status): \(result.stderr)",
      sourceLocation: sourceLocation)
    guard let accounts = ReplayAccounts(json: result.stdout) else {
      Issue.record(
        "no JSON summary: \(result.stdout) \(result.stderr)", sourceLocation: sourceLocation)
      return nil
    }
    #expect(accounts.closes, "accounts do not close: \(accounts)", sourceLocation: sourceLocation)
    #expect(accounts.peakLedger <= accounts.budget, "\(accounts)", sourceLocation: sourceLocation)
    #expect(accounts.totalAppended > 0, sourceLocation: sourceLocation)
    print("fault accounts: \(accounts)")
    return accounts
  }

  /// A real listener killed and restarted three times: the smoke test of what
  /// `SenderTests.tenOutagesInARowEachReconnectAtAKeyframeWithPSI` checks ten times on the
  /// virtual clock (each real outage waits out libsrt's 5 s peer-idle timeout).
  @Test func listenerKilledAndRestartedThreeTimes() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let dump = directory.appending(path: "long.dump").path
    // 60 s of stream at twice realtime: room for three outages of about 6 s, each waited out on
    // its status events.
    try FaultSupport.loopedDump("screen.dump", copies: 6, to: dump)
    let port = UInt16(try LoopbackServers.freePort(SOCK_DGRAM))
    let status = directory.appending(path: "status.jsonl").path
    var peer: SRTPeer? = try SRTPeer(port: port, output: directory.appending(path: "rx-0.ts"))
    let run = BackgroundIngest(
      [
        "replay", dump, "--to", "srt://127.0.0.1:\(port)?latency=120", "--speed", "2", "--status",
        // Outages lose much of the stream; this test is about reconnecting, not delivery.
        status, "--json", "--min-delivered", "0",
      ],
      timeout: 90)

    #expect(
      FaultSupport.waitUntil(seconds: 20) { FaultSupport.count("connected", in: status) == 1 })
    for restart in 1...3 {
      // A crash: nothing tells the caller, which notices after libsrt's 5 s peer-idle timeout.
      peer?.stop(signal: SIGKILL)
      peer = nil
      let lost = FaultSupport.waitUntil(seconds: 15) {
        FaultSupport.count("disconnected", in: status) >= restart
      }
      peer = try SRTPeer(port: port, output: directory.appending(path: "rx-\(restart).ts"))
      let back = FaultSupport.waitUntil(seconds: 20) {
        FaultSupport.count("connected", in: status) >= restart + 1
      }
      #expect(
        lost && back,
        "restart \(restart): disconnected \(lost), reconnected \(back): \(connectionEvents(status))"
      )
      if !(lost && back) { break }
    }
    let result = try run.wait()
    let accounts = expectSound(result)
    #expect(FaultSupport.count("connected", in: status) >= 4)
    #expect(FaultSupport.count("summary", in: status) == 1)
    // The last listener received a stream again.
    let last = directory.appending(path: "rx-3.ts").path
    let received = (try? FileManager.default.attributesOfItem(atPath: last))?[.size] as? Int
    #expect((received ?? 0) > 0)
    if let accounts { #expect(accounts.totalSent > 0) }
  }

  /// The connection events of a status file, for a failure message.
  private func connectionEvents(_ status: String) -> String {
    FaultSupport.statusEvents(status).compactMap { event in
      guard let name = event["event"] as? String,
        ["connected", "disconnected", "retry", "failed"].contains(name)
      else { return nil }
      return "\(event["t"] ?? "?") \(name) \(event["reason"] ?? "")"
    }.joined(separator: "; ")
  }

  @Test func blackHoledLinkForTenSeconds() throws {
    guard let link = LinkedNamespace(tag: 1) else {
      TestEnvironment.unavailable(
        "creating a network namespace is not permitted here (needs root and ip)")
      return
    }
    defer { link.remove() }
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let dump = directory.appending(path: "long.dump").path
    try FaultSupport.loopedDump("screen.dump", copies: 2, to: dump)
    let status = directory.appending(path: "status.jsonl").path
    let peer = try SRTPeer(
      port: 9000, output: directory.appending(path: "rx.ts"), bind: link.peerAddress,
      namespace: link.name)
    defer { peer.stop(signal: SIGKILL) }
    let run = BackgroundIngest(
      ["replay", dump, "--to", "srt://\(link.peerAddress):9000", "--status", status, "--json"],
      timeout: 120)
    #expect(
      FaultSupport.waitUntil(seconds: 20) { FaultSupport.count("connected", in: status) == 1 })
    // Wait until a few seconds of stream went through, then black-hole the link for 10 s.
    #expect(FaultSupport.waitUntil(seconds: 20) { FaultSupport.count("stats", in: status) >= 4 })
    try link.setLink(up: false)
    let down = Date()
    // The outage is the fault itself, so it is timed; what the run does meanwhile is read back
    // from its status events, never from this clock.
    while Date().timeIntervalSince(down) < 10 { usleep(100_000) }
    try link.setLink(up: true)
    let result = try run.wait()
    // A 10 s outage may outlast libsrt's peer-idle timeout: the run then reconnects (exit 0) or,
    // if the listener gave up on the broken connection, ends with the output error (exit 1).
    let accounts = expectSound(result, allowedStatus: [0, 1])
    if let accounts {
      #expect(accounts.dropped > 0, "a 10 s outage with a 3 s ring must drop: \(accounts)")
    }
    let events = FaultSupport.statusEvents(status).compactMap { $0["event"] as? String }
    #expect(events.contains("tier"))
    #expect(events.last == "summary")
  }

  @Test func linkThrottledToHalfTheBitrateForAMinute() throws {
    guard let link = LinkedNamespace(tag: 2) else {
      TestEnvironment.unavailable(
        "creating a network namespace is not permitted here (needs root and ip)")
      return
    }
    defer { link.remove() }
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let dump = directory.appending(path: "minute.dump").path
    try FaultSupport.loopedDump("screen.dump", copies: 6, to: dump)
    let status = directory.appending(path: "status.jsonl").path
    // screen.dump carries about 0.85 Mb/s; the link takes about half.
    try link.throttle(rate: "400kbit")
    let peer = try SRTPeer(
      port: 9000, output: directory.appending(path: "rx.ts"), bind: link.peerAddress,
      namespace: link.name)
    defer { peer.stop(signal: SIGKILL) }
    let result = try CommandRunner.ingest(
      [
        "replay", dump, "--to", "srt://\(link.peerAddress):9000?latency=200", "--status", status,
        "--json",
      ],
      timeout: 90)
    let accounts = expectSound(result, allowedStatus: [0, 1])
    if let accounts {
      #expect(accounts.dropped > 0, "half the bitrate for a minute must drop: \(accounts)")
      #expect(accounts.totalSent > 0)
    }
    let tiers = FaultSupport.statusEvents(status).filter { $0["event"] as? String == "tier" }
    #expect(!tiers.isEmpty, "the ladder never moved")
  }

  /// A listener that comes up after the first connect attempt timed out: the handshake that
  /// finally succeeds took longer than the path's round trip (libsrt repeats its induction every
  /// 250 ms), so the round trip comes from a fresh measurement, not that wait, and the loopback
  /// gets no latency warning. Once connected the ring drains and the ladder goes back to
  /// normal without passing through keyframes only.
  @Test func lateListenerGetsNoLatencyWarningAndTheLadderRecovers() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let port = UInt16(try LoopbackServers.freePort(SOCK_DGRAM))
    let status = directory.appending(path: "status.jsonl").path
    let run = BackgroundIngest(
      [
        "replay", CommandRunner.fixture("screen.dump"), "--to",
        "srt://127.0.0.1:\(port)?latency=120&conntimeo=1000", "--status", status, "--json",
        "--min-delivered", "0",
      ],
      timeout: 60)
    #expect(FaultSupport.waitUntil(seconds: 20) { FaultSupport.count("retry", in: status) >= 1 })
    let peer = try SRTPeer(port: port, output: directory.appending(path: "rx.ts"))
    defer { peer.stop(signal: SIGKILL) }
    let result = try run.wait()
    #expect(result.status == 0, "\(result.stderr)")
    let events = FaultSupport.statusEvents(status)
    let latency = try #require(events.first { $0["event"] as? String == "latency" }, "\(events)")
    #expect((latency["rtt_ms"] as? Double ?? 1e9) < 100, "\(latency)")
    #expect(latency["warning"] == nil, "\(latency)")
    let connected = try #require(events.firstIndex { $0["event"] as? String == "connected" })
    let tiers = events[connected...].filter { $0["event"] as? String == "tier" }
    #expect(!tiers.contains { $0["to"] as? String == "keyframesOnly" }, "\(tiers)")
    let summary = try JSONLines.summary(result.stdout)
    #expect(summary["final_tier"] as? Int == 0, "\(summary)")
    #expect(summary["warnings"] == nil, "\(summary)")
  }

  @Test func dumpTruncatedMidRecordStopsAtThatRecord() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    var bytes = [UInt8](
      try Data(contentsOf: URL(fileURLWithPath: CommandRunner.fixture("screen.dump"))))
    let records = FaultSupport.records(of: bytes)
    let cut = records[records.count / 2]
    bytes.removeSubrange((cut.offset + 5 + cut.length / 2)...)
    let dump = directory.appending(path: "truncated.dump").path
    try Data(bytes).write(to: URL(fileURLWithPath: dump))
    let result = try CommandRunner.ingest(
      [
        "replay", dump, "--to", directory.appending(path: "out.ts").path, "--speed", "max",
        "--json",
      ])
    // The samples before the cut are delivered; the run reports the cut and exits 1.
    let accounts = expectSound(result, allowedStatus: [1])
    #expect(
      result.stderr.contains("truncated in the record at byte \(cut.offset)"), "\(result.stderr)")
    if let accounts {
      #expect(accounts.readError?.contains("\(cut.offset)") == true)
      #expect(accounts.totalAppended == records.count / 2 - 3)
      #expect(accounts.totalSent == accounts.totalAppended)
    }
  }

  /// For each record type (format, sample, event): one byte flipped with the CRC left alone
  /// (the reader stops there: the framing is suspect), and one flipped with the CRC made to match
  /// (the record's content is checked: it is skipped or its sample refused, and the run goes on;
  /// a refused format ends it with status 1).
  @Test(arguments: [UInt8(1), 2, 3]) func flippedByteInEachRecordType(type: UInt8) throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let original = [UInt8](
      try Data(contentsOf: URL(fileURLWithPath: CommandRunner.fixture("mic-clock-reset.dump"))))
    let records = FaultSupport.records(of: original)
    // The second record of the type, so the run has something before it to deliver.
    let matching = records.filter { $0.type == type }
    let target = matching[min(1, matching.count - 1)]
    // The byte after kind/codec (format), flags (sample: keyframe/DTS bits) or code (event).
    let position = target.offset + 5 + 1

    var corrupt = original
    corrupt[position] ^= 0xFF
    let strictPath = directory.appending(path: "crc.dump").path
    try Data(corrupt).write(to: URL(fileURLWithPath: strictPath))
    let strict = try CommandRunner.ingest(
      [
        "replay", strictPath, "--to", directory.appending(path: "a.ts").path, "--speed", "max",
        "--json",
      ])
    let strictAccounts = expectSound(strict, allowedStatus: [1])
    #expect(
      strict.stderr.contains("CRC mismatch in the record at byte \(target.offset)"),
      "\(strict.stderr)")
    #expect(strictAccounts?.readError?.contains("\(target.offset)") == true)

    FaultSupport.fixCRC(&corrupt, recordAt: target.offset, length: target.length)
    let repairedPath = directory.appending(path: "content.dump").path
    try Data(corrupt).write(to: URL(fileURLWithPath: repairedPath))
    let repaired = try CommandRunner.ingest(
      [
        "replay", repairedPath, "--to", directory.appending(path: "b.ts").path, "--speed", "max",
        "--json",
      ])
    // A refused format drops its track's samples, which ends the run with status 1 and names
    // the track; a refused sample or event is counted and the run succeeds.
    let accounts = expectSound(repaired, allowedStatus: type == 1 ? [1] : [0])
    if type == 1 {
      #expect(repaired.stderr.contains("track was refused"), "\(repaired.stderr)")
    }
    if let accounts, let baseline = strictAccounts {
      // Reading went on past the flipped record, which is reported as refused.
      #expect(accounts.totalAppended > baseline.totalAppended)
      #expect(accounts.invalidRecords >= 1)
    }
    #expect(try CommandRunner.decodeErrors(directory.appending(path: "b.ts").path) == "")
  }

  @Test func hlsDirectoryOnAFullTmpfs() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let mount = directory.appending(path: "small").path
    try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
    guard
      try FaultSupport.tool(["mount", "-t", "tmpfs", "-o", "size=300k", "tmpfs", mount]).status == 0
    else {
      TestEnvironment.unavailable("mounting a tmpfs is not permitted here (needs root)")
      return
    }
    defer { _ = try? FaultSupport.tool(["umount", mount]) }
    let recording = mount + "/rec"
    let result = try CommandRunner.ingest(
      [
        "replay", CommandRunner.fixture("screen.dump"), "--to", "hls:\(recording)", "--speed",
        "max", "--json",
      ])
    let accounts = expectSound(result, allowedStatus: [1])
    #expect(result.stderr.contains("No space left on device"), "\(result.stderr)")
    #expect(
      result.stderr.contains(recording + "/seg"), "the error names the file: \(result.stderr)")
    #expect(accounts?.sinkError?.contains("disk full") == true)
    // The summary counts what reached the disk, not what waited in the write buffer.
    let names = (try? FileManager.default.contentsOfDirectory(atPath: recording)) ?? []
    let onDisk = names.filter { $0.hasPrefix("seg") }.reduce(0) {
      $0 + LoopbackServers.size(of: URL(fileURLWithPath: recording + "/" + $1))
    }
    let summary = (try? JSONLines.summary(result.stdout)) ?? [:]
    #expect(summary["sent_bytes"] as? Int == onDisk, "\(summary) vs \(names)")

    let recovered = try CommandRunner.ingest(["recover", recording])
    #expect(recovered.status == 0, "\(recovered.stderr)")
    let playlist = (try? String(contentsOfFile: recording + "/index.m3u8", encoding: .utf8)) ?? ""
    #expect(playlist.contains("#EXT-X-ENDLIST"))
    let segments = playlist.split(separator: "\n").filter { !$0.hasPrefix("#") }
    #expect(!segments.isEmpty)
    for segment in segments {
      #expect(FileManager.default.fileExists(atPath: recording + "/" + segment))
    }
    #expect(try CommandRunner.decodeErrors(recording + "/index.m3u8") == "")
    // Every video frame the summary counts as sent is in the recovered recording, but for the
    // last one of the cut segment when the disk filled right after it: a TS scan cannot tell
    // an access unit that ends a `.part` complete, so recovery leaves it out.
    let decoded = try ImpairedRun.videoFrames(recording + "/index.m3u8")
    let sent = accounts?.sent["video"] ?? -1
    #expect(decoded == sent || decoded == sent - 1, "\(decoded) frames decoded, \(summary)")
  }
}
