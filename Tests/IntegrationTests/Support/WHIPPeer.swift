import Foundation
import Glibc
import IngestTestSupport

/// The WHIP endpoint of the tests (`Scripts/whip-peer/whip_peer.py`, aiortc: a WebRTC stack
/// independent of GStreamer) on its own port and directory, stopped by its pid.
final class WHIPPeer {
  let port: Int
  let host: String
  let directory: URL
  let child: ChildProcess
  /// Whether it serves https (`tls`), its certificate signed by `ca.pem` in its directory.
  let tls: Bool

  static let script = CommandRunner.packageRoot.appending(path: "Scripts/whip-peer/whip_peer.py")

  /// Why the peer cannot run here (no script, no aiortc), or nil.
  static var unavailableReason: String? {
    guard FileManager.default.fileExists(atPath: script.path) else {
      return "Scripts/whip-peer/whip_peer.py is missing"
    }
    let check = try? CommandRunner.run("python3", ["-c", "import aiortc, aiohttp, av"])
    guard check?.status == 0 else { return "python3 with aiortc, aiohttp and av is missing" }
    for tool in ["ffmpeg", "ffprobe", "gst-launch-1.0"] where !CommandRunner.has(tool) {
      return "\(tool) is missing"
    }
    return nil
  }

  /// Starts the peer and returns once it listens.
  /// - Parameters:
  ///   - tokenFile: a file holding the bearer token the peer requires.
  ///   - host: the address it listens on; with `namespace`, that namespace's own.
  ///   - namespace: a network namespace to run it in (`ip netns exec`, which execs: the pid
  ///     stays the peer's).
  ///   - tls: serve https with a certificate of a test CA (`caFile`), which no system trusts.
  init(
    directory: URL, tokenFile: URL? = nil, host: String = "127.0.0.1", namespace: String? = nil,
    tls: Bool = false
  ) throws {
    port = try LoopbackServers.freePort(SOCK_STREAM)
    self.host = host
    self.directory = directory
    self.tls = tls
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    var arguments = [
      Self.script.path, "--port", String(port), "--dir", directory.path, "--host", host,
    ]
    if tls {
      try TestCertificates.make(in: directory)
      arguments += [
        "--tls-cert", directory.appending(path: "server.pem").path,
        "--tls-key", directory.appending(path: "server.key").path,
      ]
    }
    if let tokenFile { arguments += ["--token-file", tokenFile.path] }
    if let namespace {
      child = try ChildProcess(
        "ip", ["netns", "exec", namespace, "python3"] + arguments, directory: directory,
        name: "whip-peer")
    } else {
      child = try ChildProcess("python3", arguments, directory: directory, name: "whip-peer")
    }
    try LoopbackServers.waitUntil("the WHIP peer on port \(port)") {
      guard child.process.isRunning else {
        throw LoopbackServers.Failure("whip_peer.py exited: \(child.stderr)")
      }
      return child.stdout.contains("whip-peer listening on \(host):\(port)")
    }
  }

  deinit { kill() }

  /// The `--to` URL for a session recorded as `name`.
  func url(_ name: String, query: String = "") -> String {
    "whip+\(tls ? "https" : "http")://\(host):\(port)/whip/\(name)"
      + (query.isEmpty ? "" : "?" + query)
  }

  /// With `tls`: the test CA that signed the peer's certificate.
  var caFile: URL { directory.appending(path: "ca.pem") }

  func recording(_ name: String) -> URL { directory.appending(path: "\(name).mkv") }

  /// The H.264 profile of a recording's video, as ffprobe names it (`Constrained Baseline`).
  static func videoProfile(_ recording: URL) throws -> String {
    let result = try CommandRunner.run(
      "ffprobe",
      [
        "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=profile", "-of",
        "default=nw=1:nk=1", recording.path,
      ])
    return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
  }

  /// The session's frame lines (kind, keyframe, decoded, …), as JSON objects.
  func frames(_ name: String) -> [[String: Any]] {
    LoopbackServers.text(of: directory.appending(path: "\(name).frames.jsonl"))
      .split(separator: "\n").compactMap {
        try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
      }
  }

  /// The session's event lines (post, ICE states, delete, closed), as JSON objects.
  func events(_ name: String) -> [[String: Any]] {
    LoopbackServers.text(of: directory.appending(path: "\(name).events.jsonl"))
      .split(separator: "\n").compactMap {
        try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
      }
  }

  /// Waits until the session's recording is closed (after its DELETE).
  func waitForClose(_ name: String) throws {
    try LoopbackServers.waitUntil("the WHIP peer to close \(name)") {
      events(name).contains { $0["event"] as? String == "closed" }
    }
  }

  func kill() { child.kill() }
}

/// The WHIP endpoint whose receiver is Chromium's own WebRTC stack, headless
/// (`Scripts/whip-peer/chromium_peer.py`): a second receiver, independent of aiortc and of
/// GStreamer, at Chromium's defaults. One per test, on its own port and directory.
final class ChromiumPeer {
  let port: Int
  let host: String
  let directory: URL
  let child: ChildProcess

  static let script = CommandRunner.packageRoot.appending(
    path: "Scripts/whip-peer/chromium_peer.py")

  /// Why the peer cannot run here (no script, no Chromium), or nil.
  static var unavailableReason: String? {
    guard FileManager.default.fileExists(atPath: script.path) else {
      return "Scripts/whip-peer/chromium_peer.py is missing"
    }
    guard CommandRunner.has("chromium") else {
      return "chromium is missing (Scripts/lib/deps.sh installs it)"
    }
    guard CommandRunner.has("python3") else { return "python3 is missing" }
    return nil
  }

  /// Starts the peer and returns once Chromium has loaded its page.
  /// - Parameter relay: udp_relay.py impairments on each session's path (`--relay`).
  init(directory: URL, relay: String? = nil) throws {
    port = try LoopbackServers.freePort(SOCK_STREAM)
    host = "127.0.0.1"
    self.directory = directory
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    var arguments = [
      Self.script.path, "--port", String(port), "--dir", directory.path, "--host", host,
    ]
    if let relay { arguments += ["--relay", relay] }
    child = try ChildProcess("python3", arguments, directory: directory, name: "chromium-peer")
    try LoopbackServers.waitUntil("the Chromium peer on port \(port)", timeout: 90) {
      guard child.process.isRunning else {
        throw LoopbackServers.Failure("chromium_peer.py exited: \(child.stderr)")
      }
      return child.stdout.contains("chromium-peer listening on \(host):\(port)")
    }
  }

  deinit { stop() }

  /// The `--to` URL for a session named `name`.
  func url(_ name: String) -> String { "whip+http://\(host):\(port)/whip/\(name)" }

  /// Chromium's version, as the peer read it.
  var browserVersion: String {
    let text = LoopbackServers.text(of: directory.appending(path: "browser.json"))
    let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
    return object?["version"] as? String ?? "unknown"
  }

  /// The session's event lines (post, answered, connection, stats, delete, closed).
  func events(_ name: String) -> [[String: Any]] {
    LoopbackServers.text(of: directory.appending(path: "\(name).events.jsonl"))
      .split(separator: "\n").compactMap {
        try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
      }
  }

  /// The session's last statistics (the `closed` line), once it is closed (after its DELETE).
  func waitForClose(_ name: String) throws -> [String: Any] {
    var closed: [String: Any]?
    try LoopbackServers.waitUntil("the Chromium peer to close \(name)") {
      closed = events(name).first { $0["event"] as? String == "closed" }
      return closed != nil
    }
    return closed ?? [:]
  }

  /// SIGTERM, so that the peer ends Chromium; SIGKILL if it does not end.
  func stop() {
    guard child.process.isRunning else { return }
    kill(child.pid, SIGTERM)
    if !child.wait(timeout: 15) { child.kill() }
  }
}
