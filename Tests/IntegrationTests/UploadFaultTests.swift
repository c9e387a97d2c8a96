import Foundation
import Glibc
import IngestTestSupport
import Testing

/// The uploader against a real nginx WebDAV server that goes away, fails, stalls and refuses,
/// and the uploader itself killed; after each, the server's copy is checked byte for byte.
@Suite(.serialized) struct UploadFaultTests {
  @Test func serverDownInTheMiddleOfAFollowedRecording() throws {
    let work = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let recording = work.appending(path: "rec")
    let server = try NginxWebDAV(directory: work.appending(path: "server"))
    let replay = try UploadHarness.startRecording(recording, logs: work)
    try LoopbackServers.waitUntil("the recording's journal") {
      FileManager.default.fileExists(atPath: recording.appending(path: "journal").path)
    }
    let upload = try UploadHarness.startUpload(
      [recording.path, "--to", server.url, "--follow", "--retry-max", "1", "--json"], logs: work,
      name: "upload")
    try LoopbackServers.waitUntil("the first segment on the server", timeout: 30) {
      FileManager.default.fileExists(atPath: server.root.appending(path: "rec/seg00000.ts").path)
    }
    server.kill()
    // The outage itself (not a synchronisation): the recording goes on meanwhile.
    sleep(5)
    try server.start()
    #expect(replay.wait(timeout: 60))
    #expect(upload.wait(timeout: 60))
    #expect(upload.process.terminationStatus == 0, "\(upload.stderr)")
    let summary = UploadHarness.summary(upload.stdout)
    #expect((summary["retries"] as? Int ?? 0) > 0)
    #expect(summary["uploaded"] as? Int == 5)
    try UploadHarness.expectServerCopy(of: recording, on: server)
  }

  @Test func serverAnswering503ForAWhile() throws {
    let work = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let recording = work.appending(path: "rec")
    try UploadHarness.record(recording)
    let server = try NginxWebDAV(directory: work.appending(path: "server"))
    server.setFlag("503", true)
    let upload = try UploadHarness.startUpload(
      [recording.path, "--to", server.url, "--retry-max", "0.5", "--json"], logs: work,
      name: "upload")
    try LoopbackServers.waitUntil("three 503 answers") { server.count(status: 503) >= 3 }
    server.setFlag("503", false)
    #expect(upload.wait(timeout: 60))
    #expect(upload.process.terminationStatus == 0, "\(upload.stderr)")
    #expect((UploadHarness.summary(upload.stdout)["retries"] as? Int ?? 0) >= 3)
    #expect(upload.stderr.contains("503"))
    try UploadHarness.expectServerCopy(of: recording, on: server)
  }

  @Test func serverAnsweringSlowly() throws {
    let work = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let recording = work.appending(path: "rec")
    try UploadHarness.record(recording)
    let server = try NginxWebDAV(directory: work.appending(path: "server"))
    // The first two connections hang for 3 s, longer than the 1 s stall timeout.
    let relay = try SlowRelay(
      directory: work, upstream: server.port, delay: 3, slowConnections: 2)
    let result = try UploadHarness.upload(
      [recording.path, "--to", relay.url, "--stall-timeout", "1", "--retry-max", "0.5", "--json"])
    #expect(result.status == 0, "\(result.stderr)")
    #expect((UploadHarness.summary(result.stdout)["retries"] as? Int ?? 0) >= 2)
    // The held connections reach nginx late (with the same bytes); wait until nginx logged both,
    // so no late PUT is in progress while the copy is compared.
    try LoopbackServers.waitUntil("the held requests at nginx") {
      server.accessLog.components(separatedBy: "\"PUT /rec/seg00000.ts ").count > 3
    }
    relay.child.kill()
    try UploadHarness.expectServerCopy(of: recording, on: server)
  }

  @Test func serverRefusingWith403StopsAndTheRerunSendsEverything() throws {
    let work = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let recording = work.appending(path: "rec")
    try UploadHarness.record(recording)
    let server = try NginxWebDAV(directory: work.appending(path: "server"))
    server.setFlag("403", true)
    let refused = try UploadHarness.upload([recording.path, "--to", server.url, "--json"])
    #expect(refused.status == 1)
    #expect(refused.stderr.contains("refused seg00000.ts with 403 Forbidden"), "\(refused.stderr)")
    #expect(UploadHarness.summary(refused.stdout)["ok"] as? Bool == false)
    // nginx logs a refused PUT once it has drained the body, which can be after the uploader read
    // the 403 and exited: wait for the line rather than read the log at once.
    try LoopbackServers.waitUntil("the 403 in nginx's log") { server.count(status: 403) >= 1 }
    #expect(UploadHarness.lines("done", in: recording).isEmpty)

    server.setFlag("403", false)
    let again = try UploadHarness.upload([recording.path, "--to", server.url])
    #expect(again.status == 0, "\(again.stderr)")
    try UploadHarness.expectServerCopy(of: recording, on: server)
    // By now any late line of the first run is in the log: the refusal was not retried.
    #expect(server.count(status: 403) == 1)
  }

  /// An uploader killed once the whole body of a PUT went out, in front of a server that
  /// answers slowly (the request reaches it seconds later): the run after it finds the
  /// `sent` line, and HEADs until the late request is stored instead of sending the segment a
  /// second time (it did, while HEAD still answered 404).
  @Test func aPUTThatReachesASlowServerAfterAKillIsNotSentAgain() throws {
    let work = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let recording = work.appending(path: "rec")
    try UploadHarness.record(recording)
    let server = try NginxWebDAV(directory: work.appending(path: "server"))
    // The first connection's request is taken in at once and reaches nginx 3 s late; the
    // ones after it at once.
    let relay = try SlowRelay(
      directory: work, upstream: server.port, delay: 3, slowConnections: 1, reading: true)
    defer { relay.child.kill() }
    let first = try UploadHarness.startUpload(
      [recording.path, "--to", relay.url, "--json"], logs: work, name: "killed")
    try LoopbackServers.waitUntil("the first segment's body sent", timeout: 30) {
      !UploadHarness.lines("sent seg00000.ts ", in: recording).isEmpty
        || !first.process.isRunning
    }
    kill(first.pid, SIGKILL)
    #expect(first.wait(timeout: 10))
    #expect(UploadHarness.lines("done seg00000.ts ", in: recording).isEmpty)

    let again = try UploadHarness.upload([recording.path, "--to", relay.url, "--json"])
    #expect(again.status == 0, "\(again.stderr)")
    #expect(
      (UploadHarness.summary(again.stdout)["already_on_server"] as? Int ?? 0) >= 1,
      "\(again.stdout)")
    try UploadHarness.expectServerCopy(of: recording, on: server)
    #expect(server.successfulPuts(of: "/rec/seg00000.ts") == 1, "\(server.accessLog)")
  }

  @Test func uploaderKilledAtTenPointsAndRestarted() throws {
    let work = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let recording = work.appending(path: "rec")
    try UploadHarness.record(recording)
    let server = try NginxWebDAV(directory: work.appending(path: "server"))
    // 400 kB/s: a segment takes about 0.6 s, so a kill right after a `send` line lands mid-PUT.
    let arguments = [recording.path, "--to", server.url, "--limit-rate", "400k", "--json"]
    var points: [(String, String)] = []
    for index in 0..<5 {
      points.append(("send", "seg0000\(index).ts"))
      points.append(("done", "seg0000\(index).ts"))
    }
    for (number, (word, name)) in points.enumerated() {
      let upload = try UploadHarness.startUpload(arguments, logs: work, name: "upload-\(number)")
      try LoopbackServers.waitUntil("\(word) \(name)", timeout: 30) {
        UploadHarness.lines("\(word) \(name) ", in: recording).count > 0
          || !upload.process.isRunning
      }
      upload.kill()
    }
    let last = try UploadHarness.upload(arguments)
    #expect(last.status == 0, "\(last.stderr)")
    try UploadHarness.expectServerCopy(of: recording, on: server)
    try UploadHarness.expectEachSegmentSentOnce(recording, on: server)
  }
}
