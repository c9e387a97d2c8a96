import Foundation

/// Runs the `ingest` binary and the media tools as child processes, bounded in time, and stops
/// every process it started by its pid.
package enum CommandRunner {
  /// The package root, found from this file so no machine path is written down.
  package static let packageRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

  /// The `ingest` binary built with these tests: `INGEST_BIN` when set, else the one beside the
  /// running test bundle, so debug, release and sanitizer builds each test their own binary.
  package static let ingest: String = {
    if let path = ProcessInfo.processInfo.environment["INGEST_BIN"], !path.isEmpty { return path }
    let bundle = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    return bundle.deletingLastPathComponent().appending(path: "ingest").path
  }()

  /// The `ingest-encode` binary built with these tests: `INGEST_ENCODE_BIN` when set, else the
  /// one beside the running test bundle, as for `ingest`.
  package static let encoder: String = {
    if let path = ProcessInfo.processInfo.environment["INGEST_ENCODE_BIN"], !path.isEmpty {
      return path
    }
    let bundle = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    return bundle.deletingLastPathComponent().appending(path: "ingest-encode").path
  }()

  /// A bundled fixture.
  package static func fixture(_ name: String) -> String {
    packageRoot.appending(path: "Fixtures/\(name)").path
  }

  /// What a finished process left behind.
  package struct Result {
    package var status: Int32
    package var stdout: String
    package var stderr: String
    package var timedOut: Bool

    package init(status: Int32, stdout: String, stderr: String, timedOut: Bool) {
      self.status = status
      self.stdout = stdout
      self.stderr = stderr
      self.timedOut = timedOut
    }
  }

  /// Runs `executable` (a path, or a tool name looked up on PATH) to completion or `timeout`.
  package static func run(_ executable: String, _ arguments: [String], timeout: TimeInterval = 120)
    throws
    -> Result
  {
    let process = Process()
    if executable.contains("/") {
      process.executableURL = URL(fileURLWithPath: executable)
      process.arguments = arguments
    } else {
      process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
      process.arguments = [executable] + arguments
    }
    // Output goes to files, so a chatty child never blocks on a full pipe.
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let outURL = directory.appending(path: "stdout")
    let errURL = directory.appending(path: "stderr")
    _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = try FileHandle(forWritingTo: outURL)
    process.standardError = try FileHandle(forWritingTo: errURL)
    let done = DispatchSemaphore(value: 0)
    process.terminationHandler = { _ in done.signal() }
    try process.run()
    var timedOut = false
    if done.wait(timeout: .now() + timeout) == .timedOut {
      timedOut = true
      kill(process.processIdentifier, SIGKILL)
      done.wait()
    }
    let outData = (try? Data(contentsOf: outURL)) ?? Data()
    let errData = (try? Data(contentsOf: errURL)) ?? Data()
    return Result(
      status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
      stderr: String(decoding: errData, as: UTF8.self), timedOut: timedOut)
  }

  /// Runs `ingest` with arguments.
  package static func ingest(_ arguments: [String], timeout: TimeInterval = 120) throws -> Result {
    try run(ingest, arguments, timeout: timeout)
  }

  /// `ffmpeg -v error -i PATH -map 0 -f null -`: the lines it printed (none for a clean decode).
  package static func decodeErrors(_ path: String) throws -> String {
    let result = try run(
      "ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0", "-f", "null", "-"])
    return result.stderr + (result.status == 0 ? "" : "exit \(result.status)")
  }

  /// ffprobe's streams, one `codec[,rate,channels]` entry per stream in index order.
  package static func streams(_ path: String) throws -> [String] {
    let result = try run(
      "ffprobe",
      [
        "-v", "error", "-show_entries", "stream=index,codec_name,sample_rate,channels", "-of",
        "compact=p=0:nk=1", path,
      ])
    // A transport stream lists its streams twice (in its program and on their own).
    var byIndex: [Int: String] = [:]
    for line in result.stdout.split(separator: "\n") {
      let fields = line.split(separator: "|").map(String.init)
      guard fields.count >= 2, let index = Int(fields[0]) else { continue }
      byIndex[index] = fields.dropFirst().joined(separator: ",")
    }
    return byIndex.keys.sorted().compactMap { byIndex[$0] }
  }

  /// A fresh directory under the system temporary directory.
  package static func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appending(
      path: "ingest-it-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
  }

  /// Whether a tool is on PATH.
  package static func has(_ tool: String) -> Bool {
    (try? run("sh", ["-c", "command -v \(tool)"]).status) == 0
  }
}
