import Foundation
import Glibc
import IngestTestSupport
import Testing

/// An output that cannot reach its receiver says so when the reason is known, while the run
/// goes on with the others, not only in the summary at the end; a stop then still counts it
/// as failed (exit 1, as `--help` says).
@Suite struct DeadOutputNoticeTests {
  @Test func unreachableSRTIsNamedWhileTheRunGoesOn() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let port = try TestServers.freeUDPPort()
    let recording = directory.appending(path: "rec.ts").path
    let status = directory.appending(path: "status.jsonl")
    let run = try ChildProcess(
      CommandRunner.ingest,
      [
        "replay", CommandRunner.fixture("screen.dump"), "--to", "srt://127.0.0.1:\(port)",
        "--to", recording, "--status", status.path,
      ], directory: directory, name: "replay")
    defer { run.kill() }
    try LoopbackServers.waitUntil("the first retry", timeout: 60) {
      LoopbackServers.text(of: status).contains("\"event\":\"retry\"")
    }
    try LoopbackServers.waitUntil("the warning on standard error") {
      run.stderr.contains("not connected: srt://127.0.0.1:\(port)")
    }
    // Said while the run went on: the recording beside it is still being written, and the
    // summary has not come.
    #expect(!LoopbackServers.text(of: status).contains("\"event\":\"summary\""))
    #expect(run.stderr.contains("output 1 (SRT srt://127.0.0.1:\(port)): not connected"))
    kill(run.pid, SIGTERM)
    #expect(run.wait(timeout: 60))
    #expect(run.process.terminationStatus == 1, "\(run.stderr)")
    #expect(run.stderr.contains("the output accepted nothing"), "\(run.stderr)")
    #expect(try CommandRunner.decodeErrors(recording) == "")
  }
}
