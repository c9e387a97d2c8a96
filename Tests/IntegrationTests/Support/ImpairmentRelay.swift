import Foundation
import Glibc
import IngestTestSupport
import Testing

/// A child process (inside a network namespace when one is given) started by pid, whose output
/// is watched: a start waits for the text that says it is ready, bounded in time, and a stop
/// signals the pid and waits for it, bounded too.
final class WatchedProcess {
  private let process = Process()
  private let exited = DispatchSemaphore(value: 0)
  private let captured = CapturedOutput()
  private var started = false

  /// Starts `command` and returns once its watched output holds `readyMarker`.
  /// - Parameters:
  ///   - stdout: where standard output goes; nil: it is watched, with standard error.
  ///   - timeout: seconds to wait for the marker; the process is killed if it never comes.
  init(
    _ command: [String], namespace: String?, stdout: URL?, readyMarker: String,
    timeout: TimeInterval = 10
  ) throws {
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    // `ip netns exec` and env both exec, so the pid stays the command's own.
    process.arguments = (namespace.map { ["ip", "netns", "exec", $0] } ?? []) + command
    process.standardInput = FileHandle.nullDevice
    let watched = Pipe()
    if let stdout {
      _ = FileManager.default.createFile(atPath: stdout.path, contents: nil)
      process.standardOutput = try FileHandle(forWritingTo: stdout)
    } else {
      process.standardOutput = watched
    }
    process.standardError = watched
    process.terminationHandler = { [exited] _ in exited.signal() }
    watched.fileHandleForReading.readabilityHandler = { [captured] handle in
      let chunk = handle.availableData
      if chunk.isEmpty { handle.readabilityHandler = nil }
      captured.append(chunk)
    }
    try process.run()
    started = true
    let deadline = DispatchTime.now() + timeout
    while !captured.text.contains(readyMarker) {
      if captured.isEnded || captured.grew.wait(timeout: deadline) == .timedOut {
        stop(signal: SIGKILL)
        throw FaultError.failed("\(command[0]) did not get ready: \(captured.text)")
      }
    }
  }

  deinit { stop(signal: SIGKILL) }

  var pid: Int32 { process.processIdentifier }

  /// What the watched stream carried so far.
  var output: String { captured.text }

  /// Waits up to `seconds` for the process to exit by itself; whether it did.
  func waitForExit(seconds: Double) -> Bool {
    if !process.isRunning { return true }
    guard exited.wait(timeout: .now() + seconds) == .success else { return false }
    exited.signal()  // later waits see it too
    return true
  }

  /// Sends `signal` to the pid (SIGKILL after 10 s), waits for the exit, then for the end of
  /// the watched stream, so `output` holds everything the process wrote.
  func stop(signal: Int32) {
    guard started else { return }
    if process.isRunning {
      Glibc.kill(pid, signal)
      if !waitForExit(seconds: 10) {
        Glibc.kill(pid, SIGKILL)
        _ = waitForExit(seconds: 10)
      }
    }
    let deadline = DispatchTime.now() + 5
    while !captured.isEnded && captured.grew.wait(timeout: deadline) == .success {}
  }
}

/// A child's output, appended on the pipe's reading thread and read by the test, under a lock.
private final class CapturedOutput: @unchecked Sendable {
  private let lock = NSLock()
  private var data = Data()
  private var ended = false
  /// Signalled for every chunk read, and once more at end of file.
  let grew = DispatchSemaphore(value: 0)

  /// Adds a chunk; an empty one is the end of file.
  func append(_ chunk: Data) {
    lock.withLock {
      if chunk.isEmpty { ended = true } else { data.append(chunk) }
    }
    grew.signal()
  }

  var text: String { lock.withLock { String(decoding: data, as: UTF8.self) } }
  var isEnded: Bool { lock.withLock { ended } }
}

/// `Scripts/bench-support/udp_relay.py`, the impairment relay of the shaped-link benchmark,
/// inside a network namespace: packets to `listen` go to `forward` with the delay, jitter, loss
/// or blackouts of `options`, and back. Stopped by pid; its final line gives its counters.
final class ImpairmentRelay {
  let listen: String
  private let child: WatchedProcess

  static let script = CommandRunner.packageRoot.appending(
    path: "Scripts/bench-support/udp_relay.py"
  ).path

  /// Starts the relay and returns once it prints its ready line.
  init(namespace: String, listen: String, forward: String, options: [String]) throws {
    self.listen = listen
    // A fixed seed: the same packets are lost on every run. --realtime keeps a busy machine's
    // scheduling out of the path's delays.
    child = try WatchedProcess(
      [
        "python3", Self.script, "--listen", listen, "--forward", forward, "--seed", "1",
        "--realtime",
      ] + options, namespace: namespace, stdout: nil, readyMarker: #"{"ready":true"#)
  }

  /// Stops the relay (SIGTERM by pid) and returns its counters.
  func stop() throws -> RelayCounters {
    child.stop(signal: SIGTERM)
    let final = child.output.split(separator: "\n").compactMap {
      try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }.last { $0["final"] as? Bool == true }
    guard let final, let counters = RelayCounters(final) else {
      throw FaultError.failed("the relay printed no final counters: \(child.output)")
    }
    return counters
  }
}

/// The relay's counters per direction: up is sender to receiver, down the way back.
struct RelayCounters: CustomStringConvertible {
  struct Direction {
    var received: Int
    var forwarded: Int
    var droppedLoss: Int
    var droppedBlackout: Int
    var reordered: Int
  }

  var up: Direction
  var down: Direction
  var blackouts: Int

  init?(_ object: [String: Any]) {
    func direction(_ name: String) -> Direction? {
      guard let counts = object[name] as? [String: Any],
        let received = counts["received"] as? Int, let forwarded = counts["forwarded"] as? Int,
        let loss = counts["dropped_loss"] as? Int, let dark = counts["dropped_blackout"] as? Int,
        let reordered = counts["reordered"] as? Int
      else { return nil }
      return Direction(
        received: received, forwarded: forwarded, droppedLoss: loss, droppedBlackout: dark,
        reordered: reordered)
    }
    guard let up = direction("up"), let down = direction("down"),
      let blackouts = object["blackouts"] as? Int
    else { return nil }
    self.up = up
    self.down = down
    self.blackouts = blackouts
  }

  var description: String {
    func text(_ d: Direction) -> String {
      "\(d.received) received, \(d.forwarded) forwarded, \(d.droppedLoss) lost, "
        + "\(d.droppedBlackout) blacked out, \(d.reordered) reordered"
    }
    return "up: \(text(up)); down: \(text(down)); \(blackouts) blackouts"
  }
}

/// The tools the impaired-path tests need.
enum ImpairedPathEnvironment {
  /// The first tool these tests need that is not on PATH, if any.
  static var missingTool: String? {
    ["ip", "python3", "srt-live-transmit", "ffmpeg", "ffprobe"].first { !CommandRunner.has($0) }
  }
}
