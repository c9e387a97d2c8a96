import Foundation
import Glibc
import IngestHLS
import IngestTestSupport
import Testing

/// Recordings, uploads and the checks every upload test ends with.
enum UploadHarness {
  /// Records Fixtures/screen.dump (10 s, five 2 s segments) into `directory` as fast as possible.
  static func record(_ directory: URL) throws {
    let result = try CommandRunner.ingest(
      [
        "replay", CommandRunner.fixture("screen.dump"), "--to", "hls:\(directory.path)",
        "--speed", "max", "--quiet",
      ])
    guard result.status == 0 else { throw LoopbackServers.Failure("replay: \(result.stderr)") }
  }

  /// Starts a real-time recording (it takes the dump's 10 s).
  static func startRecording(_ directory: URL, logs: URL) throws -> ChildProcess {
    try ChildProcess(
      CommandRunner.ingest,
      [
        "replay", CommandRunner.fixture("screen.dump"), "--to", "hls:\(directory.path)",
        "--speed", "realtime", "--quiet",
      ], directory: logs, name: "replay")
  }

  static func upload(_ arguments: [String], timeout: TimeInterval = 120) throws
    -> CommandRunner.Result
  {
    try CommandRunner.ingest(["upload"] + arguments, timeout: timeout)
  }

  static func startUpload(_ arguments: [String], logs: URL, name: String) throws -> ChildProcess {
    try ChildProcess(CommandRunner.ingest, ["upload"] + arguments, directory: logs, name: name)
  }

  /// The `--json` summary of a run.
  static func summary(_ stdout: String) -> [String: Any] {
    guard let line = stdout.split(separator: "\n").last,
      let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
    else { return [:] }
    return object
  }

  /// The files a finished recording consists of: its segments (from its journal) and playlist.
  static func recordedFiles(_ directory: URL) throws -> [String] {
    let text = LoopbackServers.text(of: directory.appending(path: HLSJournal.fileName))
    let journal = HLSJournal.parse(text)
    return journal.segments.map(\.name) + [try #require(journal.playlistName)]
  }

  static func sha256(_ paths: [String]) throws -> [String] {
    let result = try CommandRunner.run("sha256sum", paths)
    return result.stdout.split(separator: "\n").map { String($0.prefix(64)) }
  }

  /// The server's copy equals `local` byte for byte (checksums), holds nothing else (nothing
  /// partial, no temporary upload), and its playlist plays over HTTP with ffmpeg without an error.
  static func expectServerCopy(
    of local: URL, on server: NginxWebDAV, files: [String]? = nil, authorization: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    let names = try files ?? recordedFiles(local)
    let remote = server.root.appending(path: "rec")
    let onServer = Set((try? FileManager.default.contentsOfDirectory(atPath: remote.path)) ?? [])
    #expect(
      onServer == Set(names), "server holds \(onServer.sorted())", sourceLocation: sourceLocation)
    #expect(server.temporaryFiles.isEmpty, sourceLocation: sourceLocation)
    let localSums = try sha256(names.map { local.appending(path: $0).path })
    let remoteSums = try sha256(names.map { remote.appending(path: $0).path })
    #expect(
      localSums.count == names.count && localSums == remoteSums, sourceLocation: sourceLocation)
    let playlist = try #require(names.last)
    let headers = authorization.map { ["-headers", "Authorization: \($0)\r\n"] } ?? []
    let play = try CommandRunner.run(
      "ffmpeg",
      ["-nostdin", "-v", "error"] + headers + ["-i", server.url + playlist, "-f", "null", "-"])
    #expect(
      play.status == 0 && play.stderr.isEmpty, "ffmpeg: \(play.stderr)",
      sourceLocation: sourceLocation)
  }

  /// Each segment was stored by exactly one successful PUT.
  static func expectEachSegmentSentOnce(
    _ local: URL, on server: NginxWebDAV, sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    for name in try recordedFiles(local).dropLast() {
      #expect(
        server.successfulPuts(of: "/rec/\(name)") == 1, "\(name)", sourceLocation: sourceLocation)
    }
  }

  static func lines(_ prefix: String, in directory: URL) -> [String] {
    LoopbackServers.text(of: directory.appending(path: "upload.journal")).split(separator: "\n")
      .map(String.init).filter { $0.hasPrefix(prefix) }
  }
}

@Suite(.serialized) struct UploadIntegrationTests {
  @Test func uploadsAFinishedRecordingAndARerunSendsNoSegmentAgain() throws {
    let work = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let recording = work.appending(path: "rec")
    try UploadHarness.record(recording)
    let server = try NginxWebDAV(directory: work.appending(path: "server"))

    let first = try UploadHarness.upload([recording.path, "--to", server.url, "--json"])
    #expect(first.status == 0, "\(first.stderr)")
    let summary = UploadHarness.summary(first.stdout)
    #expect(summary["uploaded"] as? Int == 5)
    #expect(summary["retries"] as? Int == 0)
    #expect(summary["recording_finished"] as? Bool == true)
    try UploadHarness.expectServerCopy(of: recording, on: server)

    let again = try UploadHarness.upload([recording.path, "--to", server.url, "--json"])
    #expect(again.status == 0)
    #expect(UploadHarness.summary(again.stdout)["already_on_server"] as? Int == 5)
    try UploadHarness.expectEachSegmentSentOnce(recording, on: server)
  }

  @Test func resendsWhatTheServerLost() throws {
    let work = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let recording = work.appending(path: "rec")
    try UploadHarness.record(recording)
    let server = try NginxWebDAV(directory: work.appending(path: "server"))
    #expect(try UploadHarness.upload([recording.path, "--to", server.url]).status == 0)
    try FileManager.default.removeItem(at: server.root.appending(path: "rec/seg00002.ts"))

    let again = try UploadHarness.upload([recording.path, "--to", server.url, "--json"])
    #expect(again.status == 0)
    let summary = UploadHarness.summary(again.stdout)
    #expect(summary["uploaded"] as? Int == 1)
    #expect(summary["resent"] as? Int == 1)
    try UploadHarness.expectServerCopy(of: recording, on: server)
  }

  @Test func deleteAfterUploadRemovesOnlyWhatTheServerConfirmed() throws {
    let work = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let recording = work.appending(path: "rec")
    try UploadHarness.record(recording)
    let snapshot = work.appending(path: "snapshot")
    try FileManager.default.copyItem(at: recording, to: snapshot)
    let server = try NginxWebDAV(directory: work.appending(path: "server"))

    let result = try UploadHarness.upload(
      [recording.path, "--to", server.url, "--delete-after-upload", "--json"])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(UploadHarness.summary(result.stdout)["deleted"] as? Int == 6)
    let left = try FileManager.default.contentsOfDirectory(atPath: recording.path).sorted()
    #expect(left == ["journal", "upload.journal"])
    try UploadHarness.expectServerCopy(of: snapshot, on: server)
  }

  @Test func followsARecordingUntilItsJournalSaysItEnded() throws {
    let work = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let recording = work.appending(path: "rec")
    let server = try NginxWebDAV(directory: work.appending(path: "server"))
    let replay = try UploadHarness.startRecording(recording, logs: work)
    // The uploader may start before the recorder created anything: it waits for the journal.
    try LoopbackServers.waitUntil("the recording's journal") {
      FileManager.default.fileExists(atPath: recording.appending(path: "journal").path)
    }
    let upload = try UploadHarness.startUpload(
      [recording.path, "--to", server.url, "--follow", "--json"], logs: work, name: "upload")
    #expect(replay.wait(timeout: 60))
    #expect(upload.wait(timeout: 60))
    #expect(upload.process.terminationStatus == 0, "\(upload.stderr)")
    let summary = UploadHarness.summary(upload.stdout)
    #expect(summary["uploaded"] as? Int == 5)
    // A live playlist goes up after each segment, the final one once more.
    #expect((summary["playlist_uploads"] as? Int ?? 0) >= 2)
    try UploadHarness.expectServerCopy(of: recording, on: server)
    #expect(!server.accessLog.contains(".part"))
  }

  @Test func uploadsARecordingThatWasKilledAndRecovered() throws {
    let work = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let recording = work.appending(path: "rec")
    let replay = try UploadHarness.startRecording(recording, logs: work)
    try LoopbackServers.waitUntil("two segments recorded", timeout: 30) {
      LoopbackServers.text(of: recording.appending(path: "journal")).components(
        separatedBy: "\nsegment "
      ).count > 2
    }
    replay.kill()
    let recover = try CommandRunner.ingest(["recover", recording.path])
    #expect(recover.status == 0, "\(recover.stderr)")
    let server = try NginxWebDAV(directory: work.appending(path: "server"))

    let result = try UploadHarness.upload([recording.path, "--to", server.url, "--json"])
    #expect(result.status == 0, "\(result.stderr)")
    #expect((UploadHarness.summary(result.stdout)["uploaded"] as? Int ?? 0) >= 2)
    try UploadHarness.expectServerCopy(of: recording, on: server)
  }

  @Test func httpsWithACAFileAndSecretHeadersThatNeverShow() throws {
    let work = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let recording = work.appending(path: "rec")
    try UploadHarness.record(recording)
    let secret = "Bearer s3cr3t-\(UUID().uuidString)"
    let server = try NginxWebDAV(
      directory: work.appending(path: "server"), tls: true, requiredAuthorization: secret)
    let headers = work.appending(path: "headers")
    try "# auth\nAuthorization: \(secret)\n".write(to: headers, atomically: true, encoding: .utf8)

    // The system trust store does not know the test CA.
    let untrusted = try UploadHarness.upload(
      [recording.path, "--to", server.tlsURL, "--header-file", headers.path])
    #expect(untrusted.status == 1)
    #expect(untrusted.stderr.lowercased().contains("certificate"), "\(untrusted.stderr)")

    let anonymous = try UploadHarness.upload(
      [recording.path, "--to", server.tlsURL, "--ca-file", server.caFile.path])
    #expect(anonymous.status == 1)
    #expect(anonymous.stderr.contains("401"), "\(anonymous.stderr)")

    let fromFile = try UploadHarness.upload(
      [
        recording.path, "--to", server.tlsURL, "--ca-file", server.caFile.path, "--header-file",
        headers.path, "--json",
      ])
    #expect(fromFile.status == 0, "\(fromFile.stderr)")
    try UploadHarness.expectServerCopy(of: recording, on: server, authorization: secret)

    try FileManager.default.removeItem(at: server.root.appending(path: "rec/index.m3u8"))
    // The variable goes into the child's environment only: setenv here would race with every
    // other test's Process.run, which copies this process's environment.
    var variables = ProcessInfo.processInfo.environment
    variables["INGEST_TEST_UPLOAD_HEADERS"] = "Authorization: \(secret)"
    let logs = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: logs) }
    let child = try ChildProcess(
      CommandRunner.ingest,
      [
        "upload", recording.path, "--to", server.tlsURL, "--ca-file", server.caFile.path,
        "--header-env", "INGEST_TEST_UPLOAD_HEADERS", "--json",
      ], directory: logs, name: "from-environment", environment: variables)
    let ended = child.wait(timeout: 120)
    if !ended { child.kill() }
    let fromEnvironment = CommandRunner.Result(
      status: child.process.terminationStatus, stdout: child.stdout, stderr: child.stderr,
      timedOut: !ended)
    #expect(fromEnvironment.status == 0, "\(fromEnvironment.stderr)")

    let journal = LoopbackServers.text(of: recording.appending(path: "upload.journal"))
    for output in [untrusted, anonymous, fromFile, fromEnvironment].flatMap({
      [$0.stdout, $0.stderr]
    })
      + [journal]
    {
      #expect(!output.contains("s3cr3t"))
    }
  }

  @Test func refusesBadDestinations() throws {
    let work = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let withCredentials = try UploadHarness.upload(
      [work.path, "--to", "http://user:pw@127.0.0.1:1/rec/"])
    #expect(withCredentials.status == 2)
    #expect(!withCredentials.stderr.contains("pw@"))
    let notARecording = try UploadHarness.upload([work.path, "--to", "http://127.0.0.1:1/rec/"])
    #expect(notARecording.status == 1)
    #expect(notARecording.stderr.contains("no HLS journal"))
  }
}
