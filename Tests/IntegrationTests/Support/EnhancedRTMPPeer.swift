import Foundation
import Glibc
import IngestTestSupport

/// FFmpeg 9 from PyPI's imageio-ffmpeg wheel (installed by `Scripts/lib/deps.sh`) as an RTMP
/// listener that records one publish: `-listen 1 -i rtmp://127.0.0.1:PORT/app/KEY -c copy
/// OUTPUT`, at the listener's defaults; with `allStreams`, `-map 0` too, since ffmpeg's own
/// stream selection keeps one audio stream of several. Its flv demuxer reads Enhanced RTMP v1
/// and v2, which Debian's FFmpeg 5.1 and nginx-rtmp do not. It exits when the publisher leaves.
final class EnhancedRTMPPeer {
  /// What FFmpeg's RTMP listener prints when the publisher closes the connection, whoever the
  /// publisher (FFmpeg's own included): the end of the input, not a fault of the stream.
  static let endOfInputLine = "Error during demuxing: Input/output error"

  let port: Int
  let output: URL
  let child: ChildProcess

  /// The FFmpeg 9 binary of the imageio-ffmpeg wheel, or nil when the module is not installed.
  static let executable: String? = {
    guard
      let located = try? CommandRunner.run(
        "python3",
        [
          "-c",
          "import imageio_ffmpeg, os; print(os.path.dirname(imageio_ffmpeg.__file__))",
        ]), located.status == 0
    else { return nil }
    let binaries = URL(
      fileURLWithPath: located.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    ).appending(path: "binaries")
    let names = (try? FileManager.default.contentsOfDirectory(atPath: binaries.path)) ?? []
    return names.filter { $0.hasPrefix("ffmpeg-linux-x86_64-") }.sorted().last.map {
      binaries.appending(path: $0).path
    }
  }()

  /// The peer's version line ("ffmpeg version n9.0.2-...").
  static var version: String {
    guard let executable, let result = try? CommandRunner.run(executable, ["-version"]) else {
      return "?"
    }
    return String(result.stdout.split(separator: "\n").first ?? "?")
  }

  /// Starts the listener (on `port`, or a free one) and returns once its socket listens.
  init(output: URL, key: String, allStreams: Bool = false, port: Int? = nil) throws {
    guard let executable = Self.executable else {
      throw LoopbackServers.Failure("imageio-ffmpeg is not installed")
    }
    self.port = try port ?? LoopbackServers.freePort(SOCK_STREAM)
    self.output = output
    child = try ChildProcess(
      executable,
      ["-nostdin", "-hide_banner", "-loglevel", "error", "-listen", "1", "-i"]
        + ["rtmp://127.0.0.1:\(self.port)/app/\(key)"] + (allStreams ? ["-map", "0"] : [])
        + ["-c", "copy", "-y", output.path],
      directory: output.deletingLastPathComponent(),
      name: output.deletingPathExtension().lastPathComponent + "-ffmpeg9")
    // A probe connection would be taken for the publisher: the kernel's socket table says
    // when it listens.
    try LoopbackServers.waitUntil("FFmpeg 9 listening on port \(self.port)") {
      guard child.process.isRunning else {
        throw LoopbackServers.Failure("FFmpeg 9 exited: \(child.stderr)")
      }
      return Self.listens(port: self.port)
    }
  }

  /// The URL to publish to.
  func url(key: String) -> String { "rtmp://127.0.0.1:\(port)/app/\(key)" }

  /// Waits for the listener to finish its recording (it exits once the publisher has left).
  func waitForRecording(timeout: TimeInterval = 30) throws {
    guard child.wait(timeout: timeout) else {
      throw LoopbackServers.Failure("FFmpeg 9 still records \(timeout) s after the publish")
    }
  }

  /// What the listener printed, less the line every publisher's close causes.
  var errors: String {
    child.stderr.split(separator: "\n").filter { !$0.contains(Self.endOfInputLine) }
      .joined(separator: "\n")
  }

  func kill() { child.kill() }

  /// Whether a TCP socket on 127.0.0.1:`port` is in the LISTEN state (`/proc/net/tcp`).
  static func listens(port: Int) -> Bool {
    let local = String(format: "0100007F:%04X", port)
    return LoopbackServers.text(of: URL(fileURLWithPath: "/proc/net/tcp"))
      .split(separator: "\n").contains { line in
        let fields = line.split(separator: " ")
        return fields.count > 3 && fields[1] == local && fields[3] == "0A"
      }
  }
}
