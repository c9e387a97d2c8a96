import Foundation
import Glibc

/// Servers and the `ingest` process started per test on loopback ports the kernel hands out, each
/// stopped by its pid on every path (the owners kill in `deinit` as well).
package enum LoopbackServers {
  package struct Failure: Error, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
  }

  /// A port on 127.0.0.1 that the kernel just handed out for `type` (SOCK_DGRAM or SOCK_STREAM),
  /// never one handed out before in this process: tests run in parallel, and a port one test got
  /// and closed is free again until its server binds it, so the kernel may give it to another.
  package static func freePort(_ type: __socket_type) throws -> Int {
    for _ in 0..<64 {
      let port = try kernelPort(type)
      if handedOut.claim(port) { return port }
    }
    throw Failure("no port on 127.0.0.1 that this process has not handed out already")
  }

  /// A UDP socket bound to a fresh port on 127.0.0.1 that never answers: a peer that is absent,
  /// whose port nothing else can take while the socket is held. Close it with `close(_:)`.
  package static func silentUDPPort() throws -> (port: Int, descriptor: Int32) {
    for _ in 0..<64 {
      let (fd, port) = try boundSocket(SOCK_DGRAM)
      if handedOut.claim(port) { return (port, fd) }
      close(fd)
    }
    throw Failure("no port on 127.0.0.1 that this process has not handed out already")
  }

  private static let handedOut = PortRegistry()

  private static func kernelPort(_ type: __socket_type) throws -> Int {
    let (fd, port) = try boundSocket(type)
    close(fd)
    return port
  }

  private static func boundSocket(_ type: __socket_type) throws -> (Int32, Int) {
    let fd = socket(AF_INET, Int32(type.rawValue), 0)
    guard fd >= 0 else { throw Failure("socket: errno \(errno)") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
        bind(fd, raw, length) == 0 && getsockname(fd, raw, &length) == 0
      }
    }
    guard bound else {
      let code = errno
      close(fd)
      throw Failure("bind: errno \(code)")
    }
    return (fd, Int(UInt16(bigEndian: address.sin_port)))
  }

  /// Waits until `condition` holds, checking every 20 ms, for at most `timeout` seconds.
  package static func waitUntil(
    _ what: String, timeout: TimeInterval = 20, _ condition: () throws -> Bool
  ) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while try !condition() {
      guard Date() < deadline else { throw Failure("timed out waiting for \(what)") }
      usleep(20_000)
    }
  }

  package static func size(of url: URL) -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? Int) ?? 0
  }

  package static func text(of url: URL) -> String {
    (try? String(contentsOf: url, encoding: .utf8)) ?? ""
  }
}

/// A child process with stdout and stderr in files, killed by its pid when it outlives its owner.
package final class ChildProcess {
  package let process = Process()
  package let stdoutURL: URL
  package let stderrURL: URL
  private let exited = DispatchSemaphore(value: 0)

  /// Starts `executable` (a path, or a tool looked up on PATH through /usr/bin/env, which execs it
  /// so the pid stays the tool's) with output in `directory/name.{out,err}`.
  /// - Parameter environment: the child's whole environment; nil passes this process's on.
  package init(
    _ executable: String, _ arguments: [String], directory: URL, name: String,
    environment: [String: String]? = nil
  ) throws {
    if let environment { process.environment = environment }
    if executable.contains("/") {
      process.executableURL = URL(fileURLWithPath: executable)
      process.arguments = arguments
    } else {
      process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
      process.arguments = [executable] + arguments
    }
    stdoutURL = directory.appending(path: "\(name).out")
    stderrURL = directory.appending(path: "\(name).err")
    for url in [stdoutURL, stderrURL] {
      _ = FileManager.default.createFile(atPath: url.path, contents: nil)
    }
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = try FileHandle(forWritingTo: stdoutURL)
    process.standardError = try FileHandle(forWritingTo: stderrURL)
    process.terminationHandler = { [exited] _ in exited.signal() }
    try process.run()
  }

  deinit { kill() }

  package var pid: Int32 { process.processIdentifier }
  package var stdout: String { LoopbackServers.text(of: stdoutURL) }
  package var stderr: String { LoopbackServers.text(of: stderrURL) }

  /// Waits up to `timeout` seconds for the process to exit; `false` if it is still running.
  @discardableResult
  package func wait(timeout: TimeInterval) -> Bool {
    if !process.isRunning { return true }
    guard exited.wait(timeout: .now() + timeout) == .success else { return false }
    exited.signal()  // later waits see it too
    return true
  }

  /// Sends SIGKILL to the pid (if it still runs) and reaps it.
  package func kill() {
    guard process.isRunning else { return }
    Glibc.kill(pid, SIGKILL)
    wait(timeout: 10)
  }
}

/// One `srt-live-transmit` listener, through `Scripts/servers srt-listener` (which execs it), that
/// writes what it receives to `output` and exits when its caller disconnects.
package final class SRTListener {
  package let port: Int
  package let output: URL
  package let child: ChildProcess

  /// Starts the listener on `port` and returns once it says it listens.
  package init(port: Int, output: URL, passphrase: String? = nil) throws {
    self.port = port
    self.output = output
    let script = CommandRunner.packageRoot.appending(path: "Scripts/servers").path
    child = try ChildProcess(
      script, ["srt-listener", String(port), output.path] + (passphrase.map { [$0] } ?? []),
      directory: output.deletingLastPathComponent(),
      name: output.deletingPathExtension().lastPathComponent + "-listener")
    try LoopbackServers.waitUntil("the SRT listener on port \(port)") {
      guard child.process.isRunning else {
        throw LoopbackServers.Failure("srt-live-transmit exited: \(child.stderr)")
      }
      return child.stderr.contains(" listen...")
    }
  }

  /// Kills the listener by pid (also what `deinit` does).
  package func kill() { child.kill() }

  /// The latency, in milliseconds, for a loopback push whose every byte must arrive. The receiver
  /// drops a packet it has not got one latency after it was sent, and on loopback the only
  /// delay is the scheduler's: on two cores busy with other work a push at 200 ms lost packets
  /// (an SRT packet handed to libsrt but sent, or read, late). Two seconds holds through a
  /// loaded machine; it costs the run the play-out wait at its end once.
  package static let toleratedLatency = 2000
}

/// A private nginx with the rtmp module on its own port: app `live` records each publish to
/// `directory/KEY.flv`; app `denied` refuses every publish by rule (`deny publish all`); the
/// rtmp access log (`access.log`) gets one line per finished session.
package final class NginxRTMP {
  package let port: Int
  package let directory: URL
  package let child: ChildProcess

  package init(port: Int, directory: URL) throws {
    self.port = port
    self.directory = directory
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let prefix = directory.path
    let config = """
      daemon off;
      master_process off;
      pid \(prefix)/nginx.pid;
      error_log stderr notice;
      load_module /usr/lib/nginx/modules/ngx_rtmp_module.so;
      events { worker_connections 64; }
      rtmp {
        access_log \(prefix)/access.log;
        server {
          listen 127.0.0.1:\(port);
          application live { live on; record all; record_path \(prefix); }
          application denied { live on; deny publish all; }
        }
      }
      """
    try config.write(to: directory.appending(path: "nginx.conf"), atomically: true, encoding: .utf8)
    child = try ChildProcess(
      "nginx", ["-p", prefix + "/", "-c", prefix + "/nginx.conf", "-e", "stderr"],
      directory: directory, name: "nginx")
    // The rlimit notice is logged once the listening sockets are open.
    try LoopbackServers.waitUntil("nginx on port \(port)") {
      guard child.process.isRunning else {
        throw LoopbackServers.Failure("nginx exited: \(child.stderr)")
      }
      return child.stderr.contains("getrlimit")
    }
  }

  /// The recording of a publish with `key`.
  package func recording(key: String) -> URL { directory.appending(path: "\(key).flv") }

  /// Waits until nginx has logged the end of a publish session (its recording is then closed).
  package func waitForSessionEnd(timeout: TimeInterval = 20) throws {
    try LoopbackServers.waitUntil("nginx to log the end of the publish", timeout: timeout) {
      LoopbackServers.text(of: directory.appending(path: "access.log")).contains("PUBLISH")
    }
  }

  /// Kills nginx by pid (also what `deinit` does).
  package func kill() { child.kill() }
}

/// The ports this process has handed out, so no two tests are given the same one.
private final class PortRegistry: @unchecked Sendable {
  private let lock = NSLock()
  private var ports = Set<Int>()

  /// Records `port`; false when it was handed out before.
  func claim(_ port: Int) -> Bool {
    lock.withLock { ports.insert(port).inserted }
  }
}
