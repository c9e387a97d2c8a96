import Foundation
import Glibc
import IngestTestSupport
import Testing

/// What the CLI says about input it cannot use: option combinations refused before anything is
/// opened (exit 2) with the limit in the message, and files that are not what a command expects.
@Suite struct CommandLineChecksTests {
  @Test(arguments: [
    (["--to", "null:", "--budget", "32"], "at least 33 MB with --overhead 20"),
    (["--to", "null:", "--budget", "13", "--overhead", "5"], "at least 14 MB with --overhead 5"),
    (["--to", "out.ts", "--segment", "3"], "--segment applies to HLS outputs only"),
    (["--to", "null:", "--hls-window", "6"], "--hls-window applies to HLS outputs only"),
    (["--to", "hls:rec", "--hls-window", "2"], "RFC 8216 6.2.2"),
    (["--to", "null:", "--speed", "2000"], "up to 1000"),
    (["--audio", "--to", "out.ts"], "--audio needs a value: mix, app, mic or both"),
    (["--to", "out.ts", "--audio"], "--audio needs a value: mix, app, mic or both"),
    (["--to", "out.ts", "--audio", "app", "--audio", "mix"], "--audio is given more than once"),
    (["--to", "out.ts", "--mix-gain", "app=1,app=3"], "mix gain of app is given more than once"),
    (["--to", "out.ts", "--mix-gain", "app=0x10"], "must be a plain decimal number"),
    (["--to", "out.ts", "--mix-gain", "app=1", "--mix-gain", "mic=2"], "--mix-gain is given more"),
  ])
  func replayOptionsRefusedUpFront(arguments: [String], message: String) throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let paths = arguments.map { word in
      word == "out.ts"
        ? directory.appending(path: "out.ts").path
        : word == "hls:rec" ? "hls:" + directory.appending(path: "rec").path : word
    }
    let result = try CommandRunner.ingest(
      ["replay", CommandRunner.fixture("video-only.dump")] + paths)
    #expect(result.status == 2, "\(arguments): \(result.stderr)")
    #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
  }

  /// `--mix-gain` in a run where nothing is mixed says on standard error that it has no
  /// effect, and why; where an output mixes, nothing is said.
  @Test(arguments: [
    (
      "screen.dump", ["--audio", "both"],
      "--mix-gain has no effect: no output mixes app and mic audio (--audio both)"
    ),
    ("screen.dump", [], "--mix-gain has no effect: no output mixes app and mic audio"),
    ("video-only.dump", [], "--mix-gain has no effect: the input does not have both app and mic"),
    ("screen.dump", ["--audio", "mix"], nil),
  ])
  func mixGainsWithoutAMixAreWarnedAbout(fixture: String, audio: [String], warning: String?)
    throws
  {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let result = try CommandRunner.ingest(
      [
        "replay", CommandRunner.fixture(fixture), "--to", directory.appending(path: "out.ts").path,
        "--mix-gain", "app=0.5", "--speed", "max", "--quiet",
      ] + audio, timeout: 120)
    #expect(result.status == 0, "\(result.stderr)")
    if let warning {
      #expect(result.stderr.contains("ingest: warning: " + warning), "\(result.stderr)")
    } else {
      #expect(!result.stderr.contains("--mix-gain"), "\(result.stderr)")
    }
  }

  /// The smallest budget `--budget` accepts carries a realtime stream to a file: every frame,
  /// without the ladder ever leaving tier 0.
  @Test func theMinimumBudgetCarriesTheStream() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let output = directory.appending(path: "out.ts").path
    let refused = try CommandRunner.ingest(
      ["replay", CommandRunner.fixture("screen.dump"), "--to", output, "--budget", "4"])
    let match = refused.stderr.firstMatch(of: /at least (\d+) MB/)
    let minimum = try #require(match.flatMap { Int($0.1) }, "\(refused.stderr)")
    let result = try CommandRunner.ingest(
      [
        "replay", CommandRunner.fixture("screen.dump"), "--to", output, "--budget", "\(minimum)",
        "--json",
      ], timeout: 60)
    #expect(result.status == 0, "\(result.stderr)")
    let summary = try JSONLines.summary(result.stdout)
    #expect(
      summary["sent"] as? [String: Int] == summary["appended"] as? [String: Int], "\(summary)")
    #expect(summary["tier_changes"] as? Int == 0, "\(summary)")
    #expect(try CommandRunner.decodeErrors(output) == "")
  }

  /// A mistyped command or option exits 2 and names what to type instead.
  @Test(arguments: [
    ([String](), "missing command"), (["replya"], "did you mean 'replay'?"),
    (["replay", "video-only.dump", "--to", "null:", "--sped", "max"], "did you mean --speed?"),
    (["live", "testsrc", "--to", "null:", "--codec", "vp9"], "--codec must be h264 or hevc"),
    (["capture", "in.mp4", "-o", "video-only.dump"], "add -y (or --force)"),
  ])
  func usageMistakesSayWhatToTypeInstead(arguments: [String], message: String) throws {
    let words = arguments.map { $0 == "video-only.dump" ? CommandRunner.fixture($0) : $0 }
    let result = try CommandRunner.ingest(words)
    #expect(result.status == 2, "\(arguments): \(result.stderr)")
    #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
  }

  /// `--status` naming a FIFO that nobody reads says so and exits 2, instead of hanging
  /// before the run starts.
  @Test func statusFIFOWithoutAReaderIsRefusedAtOnce() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let fifo = directory.appending(path: "status.fifo").path
    #expect(mkfifo(fifo, 0o600) == 0)
    let result = try CommandRunner.ingest(
      ["replay", CommandRunner.fixture("video-only.dump"), "--to", "null:", "--status", fifo],
      timeout: 20)
    #expect(!result.timedOut, "the run hung on a FIFO without a reader")
    #expect(result.status == 2, "\(result.stderr)")
    #expect(result.stderr.contains("no reader"), "\(result.stderr)")
  }

  @Test func replayHelpStatesTheLimits() throws {
    let help = try CommandRunner.ingest(["replay", "--help"]).stdout
    #expect(help.contains("up to 1000"))
    #expect(help.contains("--overhead + 6"))
    #expect(help.contains("HLS only"))
  }

  @Test func inspectOfRandomBytesSaysNotADump() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appending(path: "random.bin").path
    var generator = SystemRandomNumberGenerator()
    try Data((0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) })
      .write(to: URL(fileURLWithPath: path))
    let text = try CommandRunner.ingest(["inspect", path])
    #expect(text.status == 1)
    #expect(text.stderr.contains("not a dump"), "\(text.stderr)")
    #expect(!text.stdout.contains("0 bytes"), "\(text.stdout)")
    let json = try CommandRunner.ingest(["inspect", path, "--json"])
    #expect(json.status == 1)
    let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
    #expect((object?["error"] as? String)?.contains("not a dump") == true, "\(json.stdout)")
    #expect(object?["bytes"] == nil)
  }

  @Test func recoverOfADirectoryThatIsNoRecordingFails() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    try "a diary, not an HLS journal\n".write(
      to: directory.appending(path: "journal"), atomically: true, encoding: .utf8)
    let result = try CommandRunner.ingest(["recover", directory.path])
    #expect(result.status == 1, "\(result.stderr)")
    #expect(result.stderr.contains("not an HLS recording"), "\(result.stderr)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["journal"])
  }

  @Test func progressLineFitsEightyColumnsWithPercentAndSpeed() throws {
    // The progress line is shown only on a terminal: `script` gives the run one.
    guard CommandRunner.has("script") else {
      TestEnvironment.unavailable("no script(1)")
      return
    }
    let command = [
      CommandRunner.ingest, "replay", CommandRunner.fixture("video-only.dump"), "--to", "null:",
      "--speed", "4",
    ].map { "'\($0)'" }.joined(separator: " ")
    let terminal = try CommandRunner.run("script", ["-qec", command, "/dev/null"], timeout: 60)
    let redraws = terminal.stdout.components(separatedBy: "\r\u{1B}[K")
      .map { $0.split(separator: "\r\n").first.map(String.init) ?? "" }
      .filter { $0.contains("Mb/s") }
    #expect(redraws.count >= 2, "no progress line: \(terminal.stdout)")
    for line in redraws {
      #expect(line.count < 80, "\(line.count) columns: \(line)")
      #expect(line.contains("%") && line.contains("x "), "no percent or speed: \(line)")
    }
  }
}
