import Foundation
import Glibc
import IngestTestSupport
import Testing

/// A stop signal ends a run whatever it waits on: an input that never comes (a FIFO without a
/// writer, a producer that stalls mid-dump), an output nobody reads (`--to -` into a pipe), an
/// encoder that stopped. Each test waits for the run to be blocked (the kernel says where its
/// main thread sleeps, or a status event), sends SIGTERM, and gives it a bound to end in.
@Suite struct BlockedStopTests {
  /// A run of `ingest` with its standard streams as given.
  final class Run {
    let process = Process()
    let stderr = Pipe()
    private let ended = DispatchSemaphore(value: 0)

    init(_ arguments: [String], input: Any = FileHandle.nullDevice, output: Any? = nil) throws {
      process.executableURL = URL(fileURLWithPath: CommandRunner.ingest)
      process.arguments = arguments
      process.standardInput = input
      process.standardOutput = output ?? FileHandle.nullDevice
      process.standardError = stderr
      process.terminationHandler = { [ended] _ in ended.signal() }
      try process.run()
    }

    deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }

    /// Whether the main thread sleeps in the kernel waiting on a descriptor (poll or read).
    var waitsOnADescriptor: Bool {
      let wchan = LoopbackServers.text(
        of: URL(fileURLWithPath: "/proc/\(process.processIdentifier)/wchan"))
      return wchan.contains("poll") || wchan.contains("pipe") || wchan.contains("fifo")
    }

    /// Whether one of its threads sleeps in poll(2): the file writer waiting for a reader that
    /// takes nothing (the input here is a regular file, which is never polled).
    var aThreadPolls: Bool {
      let tasks = "/proc/\(process.processIdentifier)/task"
      let threads = (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? []
      return threads.contains {
        LoopbackServers.text(of: URL(fileURLWithPath: "\(tasks)/\($0)/wchan")).contains("poll")
      }
    }

    /// Sends SIGTERM and waits up to `seconds` for the end; the standard error read to its end.
    func stop(within seconds: TimeInterval) -> (ended: Bool, stderr: String) {
      kill(process.processIdentifier, SIGTERM)
      let ended = ended.wait(timeout: .now() + seconds) == .success
      if !ended { kill(process.processIdentifier, SIGKILL) }
      let text = String(
        decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      return (ended, text)
    }
  }

  @Test func fifoWithoutAWriterStopsCleanly() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let fifo = directory.appending(path: "input.fifo").path
    #expect(mkfifo(fifo, 0o600) == 0)
    let output = directory.appending(path: "out.ts").path
    let run = try Run(["replay", fifo, "--to", output])
    try LoopbackServers.waitUntil("the run waiting for a writer") { run.waitsOnADescriptor }
    let (ended, stderr) = run.stop(within: 30)
    #expect(ended, "\(stderr)")
    #expect(run.process.terminationStatus == 0, "\(stderr)")
    #expect(stderr.contains("stopped by SIGTERM while waiting for"), "\(stderr)")
    #expect(!FileManager.default.fileExists(atPath: output))
  }

  @Test func producerStalledMidDumpStopsWithWhatCame() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let dump = try Data(contentsOf: URL(fileURLWithPath: CommandRunner.fixture("screen.dump")))
    let producer = Pipe()
    let output = directory.appending(path: "out.ts").path
    let status = directory.appending(path: "status.jsonl")
    let run = try Run(
      ["replay", "-", "--to", output, "--speed", "max", "--status", status.path],
      input: producer)
    // A third of the dump, then nothing: the write end stays open.
    producer.fileHandleForWriting.write(dump.prefix(dump.count / 3))
    try LoopbackServers.waitUntil("the run waiting for more input") {
      LoopbackServers.text(of: status).contains("\"event\":\"start\"") && run.waitsOnADescriptor
    }
    let (ended, stderr) = run.stop(within: 30)
    #expect(ended, "\(stderr)")
    #expect(run.process.terminationStatus == 0, "\(stderr)")
    #expect(stderr.contains("stopped by SIGTERM"), "\(stderr)")
    #expect(try CommandRunner.decodeErrors(output) == "")
    try? producer.fileHandleForWriting.close()
  }

  /// `--to -` into a pipe nobody reads: the drain time bounds the blocked write, at the end of
  /// the input and after a stop alike.
  @Test(arguments: [false, true]) func outputNobodyReadsEndsAfterTheDrain(stopped: Bool) throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let unread = Pipe()
    let status = directory.appending(path: "status.jsonl")
    let run = try Run(
      [
        "replay", CommandRunner.fixture("screen.dump"), "--to", "-", "--speed", "max",
        "--status", status.path,
      ], output: unread)
    try LoopbackServers.waitUntil("the run's start") {
      LoopbackServers.text(of: status).contains("\"event\":\"start\"")
    }
    let result: (ended: Bool, stderr: String)
    if stopped {
      // Stopped once the write waits for the reader, not before it had filled the pipe.
      try LoopbackServers.waitUntil("the write waiting for a reader") { run.aThreadPolls }
      result = run.stop(within: 60)
    } else {
      run.process.waitUntilExit()
      result = (
        true,
        String(
          decoding: run.stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      )
    }
    #expect(result.ended, "\(result.stderr)")
    #expect(run.process.terminationStatus == 1, "\(result.stderr)")
    #expect(result.stderr.contains("/dev/stdout"), "\(result.stderr)")
    _ = unread
  }

  @Test func liveRunWithAStoppedEncoderStops() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let status = directory.appending(path: "status.jsonl")
    let output = directory.appending(path: "live.ts").path
    let run = try Run(["live", "testsrc", "--to", output, "--status", status.path])
    try LoopbackServers.waitUntil("the encoder's first frames", timeout: 60) {
      LoopbackServers.size(of: URL(fileURLWithPath: output)) > 100_000
    }
    let children = LoopbackServers.text(
      of: URL(
        fileURLWithPath:
          "/proc/\(run.process.processIdentifier)/task/\(run.process.processIdentifier)/children"))
    let encoder = try #require(children.split(separator: " ").first.flatMap { Int32($0) })
    #expect(kill(encoder, SIGSTOP) == 0)
    defer { kill(encoder, SIGKILL) }
    try LoopbackServers.waitUntil("the run waiting on the stopped encoder") {
      run.waitsOnADescriptor
    }
    let (ended, stderr) = run.stop(within: 60)
    #expect(ended, "\(stderr)")
    #expect(stderr.contains("did not end within 5 s of being asked to; killed"), "\(stderr)")
    #expect(try CommandRunner.decodeErrors(output) == "")
  }
}
