import Foundation
import Glibc
import IngestTestSupport
import Testing

/// The whole field scenario: a stream pushed over SRT through a congested link while the same
/// run records HLS, and the host app's uploader following the recording to a WebDAV server
/// that is killed for 30 s, with the uploader itself SIGKILLed and restarted. The live side
/// drops; the recording keeps every frame; the server's copy is byte for byte the recording.
@Suite(.serialized) struct StreamRecordUploadTests {
  @Test func streamRecordAndUploadThroughAnOutageAndAKill() throws {
    let work = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    guard let link = LinkedNamespace(tag: 24, subnet: "198.18.24") else {
      TestEnvironment.unavailable(
        "cannot create a network namespace here (needs root and iproute2)")
      return
    }
    defer { link.remove() }
    let peer = try SRTPeer(
      port: 9000, output: work.appending(path: "rx.ts"), bind: link.peerAddress,
      namespace: link.name)
    defer { peer.stop(signal: SIGKILL) }
    try link.throttle(rate: "400kbit")
    // 50 s of content: the outage and the restarts happen while the recording goes on.
    let dump = work.appending(path: "long.dump").path
    try FaultSupport.loopedDump("screen.dump", copies: 5, to: dump)
    let recording = work.appending(path: "rec")
    let server = try NginxWebDAV(directory: work.appending(path: "server"))
    let replay = try ChildProcess(
      CommandRunner.ingest,
      [
        "replay", dump, "--to", "srt://\(link.peerAddress):\(peer.port)?latency=120",
        "--to", "hls:\(recording.path)", "--json", "--quiet", "--min-delivered", "0",
      ], directory: work, name: "replay")
    defer { replay.kill() }
    try LoopbackServers.waitUntil("the recording's journal") {
      FileManager.default.fileExists(atPath: recording.appending(path: "journal").path)
    }
    let follow = [recording.path, "--to", server.url, "--follow", "--json"]
    let first = try UploadHarness.startUpload(follow, logs: work, name: "upload-1")
    defer { first.kill() }
    try LoopbackServers.waitUntil("the first segment on the server", timeout: 30) {
      FileManager.default.fileExists(atPath: server.root.appending(path: "rec/seg00000.ts").path)
    }
    first.kill()
    let second = try UploadHarness.startUpload(follow, logs: work, name: "upload-2")
    defer { second.kill() }
    server.kill()
    // The outage itself (not a synchronisation): recording and uploader go on meanwhile.
    sleep(30)
    try server.start()
    let back = Date()
    let waiting = HLSHarness.journaledSegments(recording.path)
    try LoopbackServers.waitUntil("the segments of the outage on the server", timeout: 60) {
      waiting.allSatisfy {
        FileManager.default.fileExists(atPath: server.root.appending(path: "rec/\($0)").path)
      }
    }
    let drained = Date().timeIntervalSince(back)

    #expect(replay.wait(timeout: 60), "the recording did not end")
    #expect(second.wait(timeout: 60), "the uploader did not end with the recording")
    #expect(replay.process.terminationStatus == 0, "\(replay.stderr)")
    #expect(second.process.terminationStatus == 0, "\(second.stderr)")
    try UploadHarness.expectServerCopy(of: recording, on: server)

    let summary = try JSONLines.summary(replay.stdout)
    let appended = summary["appended"] as? [String: Int] ?? [:]
    let outputs = try #require(summary["outputs"] as? [[String: Any]])
    let live = outputs[0]["sent"] as? [String: Int] ?? [:]
    let recorded = outputs[1]["sent"] as? [String: Int] ?? [:]
    // The recording carries the video and the mix of app and mic (HLS's default): every video
    // frame and every mixed frame.
    #expect(recorded["video"] == appended["video"], "the recording lost frames: \(outputs[1])")
    #expect(recorded["audioApp"] == outputs[1]["mix_frames"] as? Int, "\(outputs[1])")
    #expect((outputs[0]["dropped"] as? Int ?? 0) > 0, "the congested output dropped nothing")
    let upload = UploadHarness.summary(second.stdout)
    let retries = upload["retries"] as? Int ?? 0
    #expect(retries > 0, "\(upload)")
    print(
      "stream + record + upload: video \(live["video"] ?? 0) sent live, "
        + "\(recorded["video"] ?? 0) recorded of \(appended["video"] ?? 0); upload retries "
        + "\(retries), drained \(String(format: "%.1f", drained)) s after the 30 s outage")
  }
}
