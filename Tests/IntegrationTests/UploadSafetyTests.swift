import Foundation
import Glibc
import IngestHLS
import IngestTestSupport
import Testing

/// What keeps `ingest upload` and `ingest recover` to the files they were given: one uploader per
/// directory, symbolic links refused, a journal outside a read-only recording, one-line server
/// messages, a clean stop on SIGINT, usage mistakes that write nothing, and `--follow` waiting for
/// a recording to start.
@Suite(.serialized) struct UploadSafetyTests {
  /// A finished recording in `work/rec` and a server, for one test.
  private struct Setup {
    let work: URL
    let recording: URL
    let server: NginxWebDAV

    init() throws {
      work = try CommandRunner.temporaryDirectory()
      recording = work.appending(path: "rec")
      try UploadHarness.record(recording)
      server = try NginxWebDAV(directory: work.appending(path: "server"))
    }

    var journal: URL { recording.appending(path: HLSJournal.fileName) }
    var uploadJournal: URL { recording.appending(path: "upload.journal") }

    /// Takes the journal's `end` line away: a recording still being written, as `--follow` sees.
    func unfinish() throws {
      let text = LoopbackServers.text(of: journal)
      #expect(text.hasSuffix("\nend\n"))
      try String(text.dropLast(4)).write(to: journal, atomically: false, encoding: .utf8)
    }

    /// Starts `ingest upload --follow --json` and returns once it has sent the playlist and
    /// journaled it (the server's log shows the PUT before the uploader writes its `done` line),
    /// so that it holds the directory, waits for the recording's end and writes nothing more.
    func startFollowing() throws -> ChildProcess {
      let upload = try UploadHarness.startUpload(
        [recording.path, "--to", server.url, "--follow", "--json"], logs: work, name: "follow")
      try LoopbackServers.waitUntil("the first uploader to send the playlist", timeout: 60) {
        guard upload.process.isRunning else {
          throw LoopbackServers.Failure("the uploader exited: \(upload.stderr)")
        }
        return server.successfulPuts(of: "/rec/index.m3u8") >= 1
          && LoopbackServers.text(of: uploadJournal).contains("\ndone index.m3u8 ")
      }
      return upload
    }

    func remove() {
      server.kill()
      try? FileManager.default.removeItem(at: work)
    }
  }

  @Test func aSecondUploaderOfTheDirectoryIsRefusedAtOnceAndDeletesNothing() throws {
    let setup = try Setup()
    defer { setup.remove() }
    try setup.unfinish()
    let first = try setup.startFollowing()
    defer { first.kill() }
    let journalBefore = LoopbackServers.text(of: setup.uploadJournal)
    let files = try UploadHarness.recordedFiles(setup.recording)

    let second = try UploadHarness.upload(
      [setup.recording.path, "--to", setup.server.url, "--delete-after-upload", "--json"],
      timeout: 30)

    #expect(second.status == 3, "\(second.stderr)")
    #expect(
      second.stderr.contains("\(setup.recording.path) is being uploaded by another ingest upload"))
    #expect(!second.stderr.contains("playlist"))
    #expect(UploadHarness.summary(second.stdout)["ok"] as? Bool == false)
    #expect(LoopbackServers.text(of: setup.uploadJournal) == journalBefore)
    for name in files {
      #expect(FileManager.default.fileExists(atPath: setup.recording.appending(path: name).path))
    }
    kill(first.pid, SIGINT)
    try #require(first.wait(timeout: 30))
    try UploadHarness.expectEachSegmentSentOnce(setup.recording, on: setup.server)
  }

  @Test func sigintStopsAFollowingUploadWithItsSummary() throws {
    let setup = try Setup()
    defer { setup.remove() }
    try setup.unfinish()
    let upload = try setup.startFollowing()
    defer { upload.kill() }

    kill(upload.pid, SIGINT)

    try #require(upload.wait(timeout: 30))
    #expect(upload.process.terminationReason == .exit)
    #expect(upload.process.terminationStatus == 0, "\(upload.stderr)")
    let summary = UploadHarness.summary(upload.stdout)
    #expect(summary["stopped"] as? String == "SIGINT")
    #expect(summary["uploaded"] as? Int == 5)
    #expect(summary["recording_finished"] as? Bool == false)
    #expect(upload.stderr.contains("stopped by SIGINT"))
  }

  @Test func sigintEndsARequestInFlight() throws {
    let setup = try Setup()
    defer { setup.remove() }
    // The relay holds the first connection far longer than the test waits for the stop.
    let relay = try SlowRelay(
      directory: setup.work, upstream: setup.server.port, delay: 600, slowConnections: 1)
    let upload = try UploadHarness.startUpload(
      [setup.recording.path, "--to", relay.url, "--stall-timeout", "900", "--json"],
      logs: setup.work, name: "held")
    defer { upload.kill() }
    try LoopbackServers.waitUntil("the first PUT to start") {
      !UploadHarness.lines("send seg00000.ts", in: setup.recording).isEmpty
    }

    kill(upload.pid, SIGINT)

    try #require(upload.wait(timeout: 60))
    #expect(upload.process.terminationStatus == 0, "\(upload.stderr)")
    let summary = UploadHarness.summary(upload.stdout)
    #expect(summary["stopped"] as? String == "SIGINT")
    #expect(summary["uploaded"] as? Int == 0)
    #expect(UploadHarness.lines("done", in: setup.recording).isEmpty)
    #expect(setup.server.successfulPuts(of: "/rec/seg00000.ts") == 0)
  }

  @Test func aSymlinkedSegmentIsNotSent() throws {
    let setup = try Setup()
    defer { setup.remove() }
    let segment = setup.recording.appending(path: "seg00002.ts")
    let elsewhere = setup.work.appending(path: "elsewhere.ts")
    try FileManager.default.moveItem(at: segment, to: elsewhere)
    try FileManager.default.createSymbolicLink(at: segment, withDestinationURL: elsewhere)

    let result = try UploadHarness.upload([setup.recording.path, "--to", setup.server.url])

    #expect(result.status == 1)
    #expect(result.stderr.contains("\(segment.path) is a symbolic link"), "\(result.stderr)")
    let remote = setup.server.root.appending(path: "rec")
    let onServer = Set((try? FileManager.default.contentsOfDirectory(atPath: remote.path)) ?? [])
    #expect(onServer == ["seg00000.ts", "seg00001.ts"])
    #expect(UploadHarness.lines("send seg00002.ts", in: setup.recording).isEmpty)
  }

  @Test func recoverRefusesASymlinkedPartOrJournalAndChangesNothing() throws {
    let setup = try Setup()
    defer { setup.remove() }
    try setup.unfinish()
    let victim = setup.work.appending(path: "victim.ts")
    try FileManager.default.copyItem(
      at: setup.recording.appending(path: "seg00004.ts"), to: victim)
    let victimSum = try UploadHarness.sha256([victim.path])
    let part = setup.recording.appending(path: "seg00005.ts.part")
    try FileManager.default.createSymbolicLink(at: part, withDestinationURL: victim)
    let journalText = LoopbackServers.text(of: setup.journal)

    let viaPart = try CommandRunner.ingest(["recover", setup.recording.path])

    #expect(viaPart.status == 1)
    #expect(viaPart.stderr.contains("symbolic link \(part.path)"), "\(viaPart.stderr)")
    #expect(try UploadHarness.sha256([victim.path]) == victimSum)
    #expect(LoopbackServers.text(of: setup.journal) == journalText)

    try FileManager.default.removeItem(at: part)
    let outsideJournal = setup.work.appending(path: "outside-journal")
    try FileManager.default.moveItem(at: setup.journal, to: outsideJournal)
    try FileManager.default.createSymbolicLink(
      at: setup.journal, withDestinationURL: outsideJournal)

    let viaJournal = try CommandRunner.ingest(["recover", setup.recording.path])

    #expect(viaJournal.status == 1)
    #expect(
      viaJournal.stderr.contains("symbolic link \(setup.journal.path)"), "\(viaJournal.stderr)")
    #expect(LoopbackServers.text(of: outsideJournal) == journalText)
  }

  @Test func aRefusalIsOneLineWithoutTheStatusLinesCRLF() throws {
    let setup = try Setup()
    defer { setup.remove() }
    setup.server.setFlag("403", true)

    let result = try UploadHarness.upload([
      setup.recording.path, "--to", setup.server.url, "--json",
    ])

    #expect(result.status == 1)
    let error = try #require(UploadHarness.summary(result.stdout)["error"] as? String)
    #expect(error == "the server refused seg00000.ts with 403 Forbidden; not retried")
    #expect(!result.stdout.contains("\\r") && !result.stderr.contains("\r"))
    #expect(result.stderr.contains("with 403 Forbidden; not retried\n"))
  }

  @Test func usageMistakesExitTwoAndWriteNothing() throws {
    let setup = try Setup()
    defer { setup.remove() }
    let journalText = LoopbackServers.text(of: setup.journal)

    let badPort = try UploadHarness.upload([
      setup.recording.path, "--to", "http://127.0.0.1:99999/rec/",
    ])
    let overJournal = try UploadHarness.upload([
      setup.recording.path, "--to", setup.server.url, "--journal", setup.journal.path,
    ])
    let missingCA = try UploadHarness.upload([
      setup.recording.path, "--to", "https://127.0.0.1:8443/rec/", "--ca-file",
      setup.work.appending(path: "no-such-ca.pem").path,
    ])

    #expect(missingCA.status == 2)
    #expect(missingCA.stderr.contains("type --ca-file PEM"), "\(missingCA.stderr)")
    #expect(badPort.status == 2)
    #expect(badPort.stderr.contains("'99999' is not a port"), "\(badPort.stderr)")
    #expect(badPort.stderr.contains("type e.g. --to http://"))
    #expect(overJournal.status == 2)
    #expect(overJournal.stderr.contains("is a file of the recording"), "\(overJournal.stderr)")
    #expect(!FileManager.default.fileExists(atPath: setup.uploadJournal.path))
    #expect(LoopbackServers.text(of: setup.journal) == journalText)
    #expect(setup.server.accessLog.isEmpty)
  }

  @Test func aJournalOutsideTheRecordingLeavesTheRecordingUntouched() throws {
    let setup = try Setup()
    defer { setup.remove() }
    let names = try FileManager.default.contentsOfDirectory(atPath: setup.recording.path).sorted()
    let sums = try UploadHarness.sha256(names.map { setup.recording.appending(path: $0).path })
    let journal = setup.work.appending(path: "rec.upload.journal").path

    let first = try UploadHarness.upload([
      setup.recording.path, "--to", setup.server.url, "--journal", journal, "--json",
    ])
    let again = try UploadHarness.upload([
      setup.recording.path, "--to", setup.server.url, "--journal", journal, "--json",
    ])

    #expect(first.status == 0, "\(first.stderr)")
    #expect(again.status == 0, "\(again.stderr)")
    #expect(UploadHarness.summary(again.stdout)["already_on_server"] as? Int == 5)
    try UploadHarness.expectServerCopy(of: setup.recording, on: setup.server)
    let after = try FileManager.default.contentsOfDirectory(atPath: setup.recording.path).sorted()
    #expect(after == names)
    #expect(
      try UploadHarness.sha256(after.map { setup.recording.appending(path: $0).path }) == sums)
    #expect(LoopbackServers.text(of: URL(fileURLWithPath: journal)).contains("done seg00004.ts "))
  }

  @Test func followOnAnEmptyDirectoryWaitsForTheRecording() throws {
    let work = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let recording = work.appending(path: "rec")
    try FileManager.default.createDirectory(at: recording, withIntermediateDirectories: true)
    let server = try NginxWebDAV(directory: work.appending(path: "server"))
    defer { server.kill() }
    let upload = try UploadHarness.startUpload(
      [recording.path, "--to", server.url, "--follow", "--json"], logs: work, name: "upload")
    defer { upload.kill() }
    try LoopbackServers.waitUntil("the uploader to wait for a recording") {
      guard upload.process.isRunning else {
        throw LoopbackServers.Failure("the uploader exited: \(upload.stderr)")
      }
      return upload.stderr.contains("waiting for a recording in \(recording.path)")
    }

    try UploadHarness.record(recording)

    try #require(upload.wait(timeout: 60))
    #expect(upload.process.terminationStatus == 0, "\(upload.stderr)")
    #expect(UploadHarness.summary(upload.stdout)["recording_finished"] as? Bool == true)
    try UploadHarness.expectServerCopy(of: recording, on: server)
  }
}
