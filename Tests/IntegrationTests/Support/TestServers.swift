import Foundation
import Glibc
import IngestTestSupport

/// Test peers started per test on their own loopback ports and stopped by pid.
enum TestServers {
  /// The package root, found from this file so no machine path is written down.
  static var packageRoot: URL { CommandRunner.packageRoot }

  static var serversScript: URL { packageRoot.appending(path: "Scripts/servers") }

  /// A UDP port on 127.0.0.1 the kernel just handed out, so nothing is bound to it, and that no
  /// other test of this process was given.
  static func freeUDPPort() throws -> UInt16 {
    UInt16(try LoopbackServers.freePort(SOCK_DGRAM))
  }

  /// A fresh directory under the system temporary directory.
  static func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory
      .appending(path: "ingest-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
  }

  /// Runs a tool to completion and returns its exit status.
  @discardableResult
  static func run(_ tool: String, _ arguments: [String]) throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [tool] + arguments
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus
  }
}

enum TestServerError: Error, CustomStringConvertible {
  case exitedBeforeReady(String)

  var description: String {
    switch self {
    case .exitedBeforeReady(let output): "server exited before it was ready: \(output)"
    }
  }
}

/// One `srt-live-transmit` listener (through `Scripts/servers srt-listener`) writing what it
/// receives to a file. It exits by itself when its caller disconnects; `kill()` stops it early.
final class SRTListenerProcess {
  let port: UInt16
  let output: URL
  private let process = Process()
  private let exited = DispatchSemaphore(value: 0)

  /// Starts the listener and returns once it reports that it listens.
  init(port: UInt16, output: URL, passphrase: String? = nil) throws {
    self.port = port
    self.output = output
    process.executableURL = TestServers.serversScript
    process.arguments =
      ["srt-listener", String(port), output.path] + (passphrase.map { [$0] } ?? [])
    let errors = Pipe()
    process.standardError = errors
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    process.terminationHandler = { [exited] _ in exited.signal() }
    try process.run()

    // Ready when it prints " listen..."; end of file first means it died (port taken, bad args).
    var seen = Data()
    let reader = errors.fileHandleForReading
    while !String(decoding: seen, as: UTF8.self).contains(" listen...") {
      let chunk = reader.availableData
      if chunk.isEmpty {
        throw TestServerError.exitedBeforeReady(String(decoding: seen, as: UTF8.self))
      }
      seen.append(chunk)
    }
    // Keep draining so a chatty listener never blocks on a full pipe.
    reader.readabilityHandler = { handle in
      if handle.availableData.isEmpty { handle.readabilityHandler = nil }
    }
  }

  deinit {
    kill()
  }

  var pid: Int32 { process.processIdentifier }

  /// Waits up to `seconds` for the listener to exit on its own; `false` if it is still running.
  func waitForExit(seconds: Double) -> Bool {
    if !process.isRunning { return true }
    guard exited.wait(timeout: .now() + seconds) == .success else { return false }
    exited.signal()  // later waits see it too
    return true
  }

  func stop() { Glibc.kill(pid, SIGSTOP) }
  func resume() { Glibc.kill(pid, SIGCONT) }

  /// Kills the listener by its pid and waits for it to go.
  func kill() {
    guard process.isRunning else { return }
    Glibc.kill(pid, SIGCONT)
    Glibc.kill(pid, SIGKILL)
    _ = waitForExit(seconds: 10)
  }
}
