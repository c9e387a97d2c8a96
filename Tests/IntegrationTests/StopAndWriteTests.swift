import Foundation
import Glibc
import IngestTestSupport
import Testing

/// `ingest` started by pid, with its standard output and error in files, so a test can signal it
/// while it runs and read what it wrote.
final class SignalledIngest {
  let process = Process()
  let stdoutPath: String
  let stderrPath: String
  private let exited = DispatchSemaphore(value: 0)

  init(_ arguments: [String], in directory: URL) throws {
    stdoutPath = directory.appending(path: "ingest.stdout").path
    stderrPath = directory.appending(path: "ingest.stderr").path
    _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
    _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
    process.executableURL = URL(fileURLWithPath: CommandRunner.ingest)
    process.arguments = arguments
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: stdoutPath))
    process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: stderrPath))
    process.terminationHandler = { [exited] _ in exited.signal() }
    try process.run()
  }

  deinit { stop() }

  /// Sends `signal` to the process (by its pid).
  func send(_ signal: Int32) { Glibc.kill(process.processIdentifier, signal) }

  /// Waits for the exit, at most `seconds` (then kills it); the exit status, nil on a timeout.
  func wait(seconds: Double = 60) -> Int32? {
    if exited.wait(timeout: .now() + seconds) == .timedOut {
      stop()
      return nil
    }
    exited.signal()
    return process.terminationStatus
  }

  var stdout: String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }
  var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

  private func stop() {
    guard process.isRunning else { return }
    Glibc.kill(process.processIdentifier, SIGKILL)
    exited.wait()
    exited.signal()
  }
}

/// Stopping is finishing, and nothing is claimed that was not written: SIGINT/SIGTERM end a run
/// with finished outputs and a summary, a closed status pipe ends only the status output, and a
/// failed write of a report gives a non-zero exit status.
@Suite(.serialized) struct StopAndWriteTests {
  private func summary(_ text: String) -> [String: Any]? {
    guard let line = text.split(separator: "\n").last else { return nil }
    return try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
  }

  /// SIGINT, and a closed terminal (SIGHUP) or SIGUSR1 alike, finish the recording.
  @Test(arguments: [(SIGINT, "SIGINT"), (SIGHUP, "SIGHUP"), (SIGUSR1, "SIGUSR1")])
  func aStopSignalFinishesTheHLSRecording(signal: Int32, name: String) throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let recording = directory.appending(path: "rec").path
    let status = directory.appending(path: "status.jsonl").path
    let run = try SignalledIngest(
      [
        "replay", CommandRunner.fixture("screen.dump"), "--to", "hls:" + recording, "--status",
        status, "--json", "--quiet",
      ], in: directory)
    // One segment complete and the next one being written: the stop lands mid-segment.
    #expect(FaultSupport.waitUntil(seconds: 30) { FaultSupport.count("segment", in: status) >= 1 })
    run.send(signal)
    let exit = run.wait()
    #expect(exit == 0, "\(run.stderr)")

    let json = try #require(summary(run.stdout), "no JSON summary: \(run.stdout) \(run.stderr)")
    #expect(json["ok"] as? Bool == true)
    #expect(json["stopped"] as? String == name)
    let last = try #require(FaultSupport.statusEvents(status).last)
    #expect(last["event"] as? String == "summary")
    #expect(last["stopped"] as? String == name)
    #expect(FaultSupport.count("stopping", in: status) == 1)

    let playlist = try HLSHarness.Playlist(path: recording + "/index.m3u8")
    #expect(playlist.ended, "\(playlist.lines)")
    #expect(playlist.entries.count >= 2, "the segment in progress is closed and listed")
    let names = try FileManager.default.contentsOfDirectory(atPath: recording)
    #expect(!names.contains { $0.hasSuffix(".part") }, "\(names)")
    for entry in playlist.entries {
      let size =
        try FileManager.default.attributesOfItem(atPath: recording + "/" + entry.name)[
          .size] as? Int
      #expect((size ?? 0) > 0, "\(entry.name)")
    }
    #expect(try CommandRunner.decodeErrors(recording + "/index.m3u8") == "")
  }

  @Test func sigtermFlushesTheTransportStream() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let output = directory.appending(path: "out.ts").path
    let status = directory.appending(path: "status.jsonl").path
    let run = try SignalledIngest(
      [
        "replay", CommandRunner.fixture("screen.dump"), "--to", output, "--status", status,
        "--json", "--quiet",
      ], in: directory)
    #expect(FaultSupport.waitUntil(seconds: 30) { FaultSupport.count("stats", in: status) >= 2 })
    run.send(SIGTERM)
    #expect(run.wait() == 0, "\(run.stderr)")
    let json = try #require(summary(run.stdout), "no JSON summary: \(run.stdout) \(run.stderr)")
    #expect(json["ok"] as? Bool == true)
    #expect(json["stopped"] as? String == "SIGTERM")
    let sentBytes = json["sent_bytes"] as? Int ?? -1
    let size = try FileManager.default.attributesOfItem(atPath: output)[.size] as? Int
    #expect(size == sentBytes, "every byte reported sent is in the file")
    #expect(sentBytes > 0)
    #expect(try CommandRunner.decodeErrors(output) == "")
  }

  /// SIGQUIT, as in ffmpeg, stops at once: the file is closed with what was written, the
  /// summary says the run did not succeed, and the exit status is 1.
  @Test func sigquitStopsAtOnceAndFails() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let output = directory.appending(path: "out.ts").path
    let status = directory.appending(path: "status.jsonl").path
    let run = try SignalledIngest(
      [
        "replay", CommandRunner.fixture("screen.dump"), "--to", output, "--status", status,
        "--json", "--quiet",
      ], in: directory)
    #expect(FaultSupport.waitUntil(seconds: 30) { FaultSupport.count("stats", in: status) >= 2 })
    run.send(SIGQUIT)
    #expect(run.wait() == 1, "\(run.stderr)")
    let json = try #require(summary(run.stdout), "no JSON summary: \(run.stdout) \(run.stderr)")
    #expect(json["ok"] as? Bool == false)
    #expect(json["stopped"] as? String == "SIGQUIT")
    #expect((json["failure"] as? String ?? "").contains("SIGQUIT"))
    let size = try FileManager.default.attributesOfItem(atPath: output)[.size] as? Int
    #expect(size == json["sent_bytes"] as? Int, "every byte reported sent is in the file")
    #expect(try CommandRunner.decodeErrors(output) == "")
  }

  @Test func sigintEndsAnSRTRunWithASummary() throws {
    guard CommandRunner.has("srt-live-transmit") else {
      TestEnvironment.unavailable("no srt-live-transmit")
      return
    }
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let port = UInt16(try LoopbackServers.freePort(SOCK_DGRAM))
    let received = directory.appending(path: "rx.ts")
    let peer = try SRTPeer(port: port, output: received)
    let status = directory.appending(path: "status.jsonl").path
    let run = try SignalledIngest(
      [
        "replay", CommandRunner.fixture("screen.dump"), "--to",
        "srt://127.0.0.1:\(port)?latency=120", "--status", status, "--json", "--quiet",
      ], in: directory)
    #expect(
      FaultSupport.waitUntil(seconds: 30) {
        FaultSupport.count("connected", in: status) == 1
          && FaultSupport.count("stats", in: status) >= 3
      })
    run.send(SIGINT)
    #expect(run.wait() == 0, "\(run.stderr)")
    let json = try #require(summary(run.stdout), "no JSON summary: \(run.stdout) \(run.stderr)")
    #expect(json["ok"] as? Bool == true)
    #expect(json["stopped"] as? String == "SIGINT")
    #expect(FaultSupport.statusEvents(status).last?["event"] as? String == "summary")
    peer.stop(signal: SIGINT)
    let size = try FileManager.default.attributesOfItem(atPath: received.path)[.size] as? Int
    #expect((size ?? 0) > 0, "the peer received the stream")
  }

  /// SIGINT ends `ingest live` whose output is slow to finish: meanwhile the encoder fills the
  /// pipe the run no longer reads and blocks writing, and must still end, cleanly.
  @Test func sigintEndsALiveRunWhoseOutputIsSlowToFinish() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let status = directory.appending(path: "status.jsonl").path
    let run = try SignalledIngest(
      [
        "live", "testsrc", "--size", "640x360", "--duration", "120", "--to",
        directory.appending(path: "slow.ts").path + "?rate=100k", "--status", status, "--json",
        "--quiet",
        // The link takes a few per cent of the frames: what is asked here is the stop.
        "--min-delivered", "0",
      ], in: directory)
    #expect(FaultSupport.waitUntil(seconds: 30) { FaultSupport.count("stats", in: status) >= 2 })
    run.send(SIGINT)
    #expect(run.wait() == 0, "\(run.stderr)")
    let json = try #require(summary(run.stdout), "no JSON summary: \(run.stdout) \(run.stderr)")
    #expect(json["stopped"] as? String == "SIGINT")
    let encoder = json["encoder"] as? [String: Any]
    #expect(encoder?["exit"] as? String == "exited with status 0", "\(json)")
  }

  @Test func aSecondSignalEndsTheRunAtOnce() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let status = directory.appending(path: "status.jsonl").path
    // A slow link keeps the ring full, so the bounded drain after the first signal takes a while.
    let run = try SignalledIngest(
      [
        "replay", CommandRunner.fixture("screen.dump"), "--to",
        directory.appending(path: "slow.ts").path + "?rate=100k", "--status", status, "--quiet",
      ], in: directory)
    #expect(FaultSupport.waitUntil(seconds: 30) { FaultSupport.count("stats", in: status) >= 2 })
    run.send(SIGTERM)
    #expect(FaultSupport.waitUntil(seconds: 30) { FaultSupport.count("stopping", in: status) == 1 })
    run.send(SIGINT)
    #expect(run.wait() == 130, "\(run.stderr)")
  }

  @Test func closedStatusPipeEndsOnlyTheStatusOutput() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let output = directory.appending(path: "out.ts").path
    // `head` leaves after the first event; the run paces in real time, so later events meet a
    // closed pipe.
    let script =
      "'\(CommandRunner.ingest)' replay '\(CommandRunner.fixture("video-only.dump"))' --to '\(output)'"
      + " --status - --quiet | head -n 1 > /dev/null; echo \"exit ${PIPESTATUS[0]}\""
    let result = try CommandRunner.run("bash", ["-c", script])
    #expect(result.stdout == "exit 0\n", "\(result.stdout) \(result.stderr)")
    #expect(result.stderr.contains("closed by its reader"), "\(result.stderr)")
    #expect(result.stderr.contains("video 120/120 sent"), "\(result.stderr)")
    #expect(try CommandRunner.decodeErrors(output) == "")
  }

  @Test func anOutputNamingTheInputIsAUsageError() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let fixture = try Data(
      contentsOf: URL(fileURLWithPath: CommandRunner.fixture("video-only.dump")))
    let input = directory.appending(path: "same.ts").path
    try fixture.write(to: URL(fileURLWithPath: input))
    let hardLink = directory.appending(path: "link.ts").path
    try FileManager.default.linkItem(atPath: input, toPath: hardLink)
    let symbolicLink = directory.appending(path: "symlink.ts").path
    try FileManager.default.createSymbolicLink(atPath: symbolicLink, withDestinationPath: input)
    let runs: [[String]] = [
      ["replay", input, "--to", input, "--speed", "max"],
      ["replay", input, "--to", "file:" + hardLink, "--speed", "max"],
      ["replay", input, "--to", symbolicLink, "--speed", "max"],
      ["replay", input, "--to", "hls:" + directory.path, "--speed", "max"],
      ["replay", input, "--to", "null:", "--status", hardLink, "--speed", "max"],
      ["capture", input, "-o", hardLink],
    ]
    for arguments in runs {
      let result = try CommandRunner.ingest(arguments)
      #expect(result.status == 2, "\(arguments): \(result.stderr)")
      #expect(result.stderr.contains(input), "\(arguments): \(result.stderr)")
      #expect(try Data(contentsOf: URL(fileURLWithPath: input)) == fixture, "\(arguments)")
    }
    #expect(
      !FileManager.default.fileExists(atPath: directory.appending(path: "journal").path),
      "nothing was written into the directory holding the input")
  }

  @Test(arguments: [
    ["replay", "video-only.dump", "--to", "null:", "--speed", "max", "--status", "/dev/full"],
    ["replay", "video-only.dump", "--to", "null:", "--speed", "max", "--json", ">", "/dev/full"],
    ["inspect", "video-only.dump", "--json", ">", "/dev/full"],
    ["inspect", "video-only.dump", ">", "/dev/full"],
  ])
  func aFailedReportWriteIsAnError(arguments: [String]) throws {
    // Through a shell, for the redirection of standard output to /dev/full (ENOSPC on every write).
    let words = arguments.map { word in
      word.hasSuffix(".dump") ? "'\(CommandRunner.fixture(word))'" : word
    }
    let result = try CommandRunner.run(
      "sh", ["-c", "'\(CommandRunner.ingest)' " + words.joined(separator: " ")])
    #expect(result.status == 1, "\(arguments): \(result.stderr)")
    #expect(result.stderr.contains("No space left on device"), "\(arguments): \(result.stderr)")
  }
}
