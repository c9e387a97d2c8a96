import Foundation
import IngestTestSupport

/// A real player at its defaults (`Scripts/players/play.py`): GStreamer's `playbin3` and
/// `playbin`, VLC, hls.js in headless Chromium, and Chromium's own `<video>`, each reading the
/// recording over HTTP from a loopback server of the script's own.
enum Player: String, CaseIterable, CustomStringConvertible {
  case playbin3
  case playbin
  case vlc
  case hlsjs
  case chromiumVideo

  static let script = CommandRunner.packageRoot.appending(path: "Scripts/players/play.py")

  var description: String { rawValue }

  /// What the player said: `ok` when it played as asked, and its JSON line for the message.
  struct Verdict {
    var ok: Bool
    var line: String
    var fields: [String: Any]
  }

  /// Why this player cannot run here, or nil.
  var unavailableReason: String? {
    let tools: [String]
    switch self {
    case .playbin3, .playbin: tools = ["gst-launch-1.0"]
    case .vlc: tools = ["cvlc", "setpriv"]
    case .hlsjs, .chromiumVideo: tools = ["chromium"]
    }
    if let missing = (["python3"] + tools).first(where: { !CommandRunner.has($0) }) {
      return "\(missing) is missing"
    }
    if self == .hlsjs {
      let directory =
        ProcessInfo.processInfo.environment["PLAYERS_DIR"].map {
          URL(filePath: $0)
        } ?? CommandRunner.packageRoot.appending(path: ".build/players")
      let assets = directory.appending(path: "hlsjs").path
      let names = (try? FileManager.default.contentsOfDirectory(atPath: assets)) ?? []
      if !names.contains(where: { $0.hasPrefix("hls-") }) {
        return "hls.js is missing in \(assets) (Scripts/lib/deps.sh fetches it)"
      }
    }
    return nil
  }

  /// hls.js only: follows the live playlist of the recording directory `path` for `seconds` of
  /// playing; the verdict fails when the position stood still longer than `maximumStall` s.
  func follow(_ path: String, seconds: Int, maximumStall: Double) throws -> Verdict {
    precondition(self == .hlsjs, "only hls.js follows a live playlist here")
    return try run([
      "hlsjs", path, "--follow", String(seconds), "--max-stall", String(maximumStall),
      "--timeout", String(seconds + 120),
    ])
  }

  /// Plays `path` (a recording directory's `playlist`, or a file) and returns the verdict.
  /// - Parameter switchAudio: hls.js only: also switch to the other audio rendition and play on.
  /// - Parameter timeout: how long the player may take, in seconds (following a live
  ///   playlist to its end takes as long as the recording runs).
  func play(
    _ path: String, playlist: String = "index.m3u8", switchAudio: Bool = false,
    timeout: Int = 90
  ) throws -> Verdict {
    var arguments: [String]
    switch self {
    case .playbin3, .playbin: arguments = ["gst", path, "--element", rawValue]
    case .vlc: arguments = ["vlc", path]
    case .hlsjs: arguments = ["hlsjs", path]
    case .chromiumVideo: arguments = ["video", path]
    }
    arguments += ["--playlist", playlist, "--timeout", String(timeout)]
    if switchAudio { arguments.append("--switch-audio") }
    return try run(arguments)
  }

  /// Runs the script with `arguments` and reads its verdict.
  private func run(_ arguments: [String]) throws -> Verdict {
    let result = try CommandRunner.run("python3", [Self.script.path] + arguments, timeout: 400)
    let line = result.stdout.split(separator: "\n").last.map(String.init) ?? ""
    let fields =
      (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
    return Verdict(
      ok: result.status == 0 && fields["ok"] as? Bool == true,
      line: line.isEmpty ? "no verdict: \(result.stderr.suffix(2000))" : line, fields: fields)
  }
}
