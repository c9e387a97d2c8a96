import Foundation
import Glibc
import IngestTestSupport
import Testing

/// `ingest replay` over SRT through a real shaped link: a network namespace joined by a veth
/// pair, a token bucket (`tc ... tbf`) on the sending side, `srt-live-transmit` listening inside.
/// Needs root for the namespace; skipped with a message otherwise.
@Suite(.serialized) struct SRTShapedLinkTests {
  /// The namespace and a listener in it, or nil (and a message) where namespaces are unavailable.
  private func shapedLink(tag: Int, output: URL) throws -> (LinkedNamespace, SRTPeer)? {
    // 198.18.0.0/15 is reserved for benchmarks (RFC 2544): never routed, so it meets no real
    // network; the /30 exists only between this veth pair.
    guard let link = LinkedNamespace(tag: tag, subnet: "198.18.\(tag)") else {
      TestEnvironment.unavailable(
        "cannot create a network namespace here (needs root and iproute2)")
      return nil
    }
    let peer = try SRTPeer(
      port: 9000, output: output, bind: link.peerAddress, namespace: link.name)
    return (link, peer)
  }

  /// 400 kbit/s for a stream of about 850 kbit/s, SRT latency 120 ms. The sink used to hold data
  /// back until libsrt's send buffer shrank, which after a tail loss only new data can make
  /// happen: the sender stopped after about 3 s and exited 0. Now the stream keeps flowing for
  /// the whole run and the exit status follows the delivery rule (`--min-delivered`, 50 % of
  /// the video frames).
  @Test func slowLinkKeepsSendingForTheWholeRun() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let received = directory.appending(path: "rx.ts")
    guard let (link, peer) = try shapedLink(tag: 21, output: received) else { return }
    defer {
      peer.stop(signal: SIGKILL)
      link.remove()
    }
    try link.throttle(rate: "400kbit")
    let status = directory.appending(path: "status.jsonl").path
    let result = try CommandRunner.ingest(
      [
        "replay", CommandRunner.fixture("screen.dump"), "--to",
        "srt://\(link.peerAddress):\(peer.port)?latency=120", "--json", "--quiet", "--status",
        status,
      ], timeout: 90)
    #expect(!result.timedOut, "the run hung")
    let summary = try JSONLines.summary(result.stdout)
    let appended = try #require((summary["appended"] as? [String: Int])?["video"])
    let sent = try #require((summary["sent"] as? [String: Int])?["video"])
    let delivered = Double(sent) / Double(appended)
    let ok = try #require(summary["ok"] as? Bool)
    #expect(ok == (delivered >= 0.5), "\(summary)")
    #expect(result.status == (ok ? 0 : 1), "\(result.stderr)")
    if !ok { #expect(result.stderr.contains("video frames"), "\(result.stderr)") }
    // The connection was never given up: it kept delivering.
    #expect(FaultSupport.count("disconnected", in: status) == 0)

    peer.stop(signal: SIGTERM)
    // The receiver's copy spans most of the 10 s of content, not the first seconds only: what
    // the link could not carry at its end went as drops (7.85 s seen once, under load).
    let probe = try FaultSupport.tool([
      "ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0",
      received.path,
    ])
    let duration = Double(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    #expect(duration >= 7, "received \(duration) s: \(probe.stderr)")
    print(
      "SRT at 400 kbit/s, latency 120 ms: \(sent) of \(appended) video frames, received "
        + "\(LoopbackServers.size(of: received)) bytes, \(duration) s, exit \(result.status)")
  }

  /// A link that carries (almost) nothing towards the listener while its keepalives still come
  /// back: libsrt keeps the connection up, the stall watchdog gives it up after `stall_timeout`,
  /// reports it, and the sender reconnects through its backoff once the link is back.
  @Test func stalledConnectionIsReportedAndReconnected() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    guard let made = try shapedLink(tag: 22, output: directory.appending(path: "rx.ts")) else {
      return
    }
    let link = made.0
    var peer = made.1
    defer {
      peer.stop(signal: SIGKILL)
      link.remove()
    }
    let status = directory.appending(path: "status.jsonl").path
    let run = BackgroundIngest(
      [
        "replay", CommandRunner.fixture("screen.dump"), "--to",
        "srt://\(link.peerAddress):\(peer.port)?latency=120&stall_timeout=2", "--json",
        "--quiet", "--status", status,
      ], timeout: 90)
    #expect(
      FaultSupport.waitUntil(seconds: 10) { FaultSupport.count("connected", in: status) == 1 })
    // One 1316-byte packet per ten seconds: nothing to acknowledge for longer than 2 s.
    try link.throttle(rate: "1kbit")
    let stalled = FaultSupport.waitUntil(seconds: 15) {
      FaultSupport.statusEvents(status).contains {
        $0["event"] as? String == "disconnected"
          && ($0["reason"] as? String)?.contains("stall_timeout") == true
      }
    }
    #expect(stalled, "no stall reported: \(FaultSupport.statusEvents(status).suffix(5))")
    try FaultSupport.tool(["tc", "qdisc", "del", "dev", link.hostInterface, "root"])
    // srt-live-transmit ends with its caller (-a:no); a fresh listener takes the reconnect.
    peer.stop(signal: SIGKILL)
    peer = try SRTPeer(
      port: peer.port, output: directory.appending(path: "rx-2.ts"), bind: link.peerAddress,
      namespace: link.name)
    let result = try run.wait()
    #expect(!result.timedOut, "the run hung")
    #expect(FaultSupport.count("retry", in: status) >= 1)
    #expect(FaultSupport.count("connected", in: status) >= 2, "not reconnected")
    #expect(FaultSupport.count("summary", in: status) == 1)
  }
}
