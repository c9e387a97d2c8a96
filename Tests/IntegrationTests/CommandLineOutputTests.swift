import Foundation
import Glibc
import IngestTestSupport
import Testing

/// Where the CLI's output goes and what it says about itself: the transport stream on standard
/// output (`--to -`), what may not share standard output with it, `--version`, the reference in
/// docs/cli.md against `--help`, and the README's examples run as written.
@Suite struct CommandLineOutputTests {
  /// What a run with its standard output in a file left: the status, the file's bytes and
  /// standard error.
  struct FileRun {
    var status: Int32
    var stdout: Data
    var stderr: String
  }

  /// Runs `executable` with standard output to a file of its own, so the bytes are kept as
  /// written (`CommandRunner.run` decodes them as text); killed by its pid after `timeout`.
  static func runWithOutputFile(
    _ executable: String, _ arguments: [String], in directory: URL, timeout: TimeInterval = 120
  ) throws -> FileRun {
    let outURL = directory.appending(path: "stdout.bin")
    let errURL = directory.appending(path: "stderr.txt")
    _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.currentDirectoryURL = directory
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = try FileHandle(forWritingTo: outURL)
    process.standardError = try FileHandle(forWritingTo: errURL)
    let done = DispatchSemaphore(value: 0)
    process.terminationHandler = { _ in done.signal() }
    try process.run()
    if done.wait(timeout: .now() + timeout) == .timedOut {
      kill(process.processIdentifier, SIGKILL)
      done.wait()
    }
    let stdout = try Data(contentsOf: outURL)
    let stderr = String(decoding: try Data(contentsOf: errURL), as: UTF8.self)
    try? FileManager.default.removeItem(at: outURL)
    try? FileManager.default.removeItem(at: errURL)
    return FileRun(status: process.terminationStatus, stdout: stdout, stderr: stderr)
  }

  /// The `ingest-upload` binary beside `ingest`.
  static var uploader: String {
    URL(fileURLWithPath: CommandRunner.ingest).deletingLastPathComponent()
      .appending(path: "ingest-upload").path
  }

  // MARK: --to -

  /// `--to -` and `file:-` write the transport stream to standard output, whole 188-byte
  /// packets that decode without an error, with the summary on standard error and no file
  /// named `-` left behind.
  @Test(arguments: ["-", "file:-"])
  func theStreamGoesToStandardOutput(to: String) throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let run = try Self.runWithOutputFile(
      CommandRunner.ingest,
      ["replay", CommandRunner.fixture("screen.dump"), "--to", to, "--speed", "max"],
      in: directory)
    #expect(run.status == 0, "\(run.stderr)")
    #expect(run.stdout.count > 100_000 && run.stdout.count % 188 == 0, "\(run.stdout.count)")
    #expect(run.stdout.first == 0x47)
    #expect(run.stderr.contains("replayed"), "the summary is on standard error: \(run.stderr)")
    #expect(!FileManager.default.fileExists(atPath: directory.appending(path: "-").path))
    let ts = directory.appending(path: "out.ts")
    try run.stdout.write(to: ts)
    #expect(try CommandRunner.decodeErrors(ts.path) == "")
    #expect(try CommandRunner.streams(ts.path).map { $0.prefix(4) } == ["h264", "aac,", "aac,"])
  }

  /// `live` shares the output options: its stream reaches standard output too, apart from the
  /// encoder child's own standard output, which carries the dump.
  @Test func aLiveStreamGoesToStandardOutput() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let run = try Self.runWithOutputFile(
      CommandRunner.ingest,
      ["live", "testsrc", "--size", "320x240", "--duration", "2", "--to", "-", "--quiet"],
      in: directory)
    #expect(run.status == 0, "\(run.stderr)")
    #expect(run.stdout.count % 188 == 0 && run.stdout.first == 0x47, "\(run.stdout.count)")
    let ts = directory.appending(path: "live.ts")
    try run.stdout.write(to: ts)
    #expect(try CommandRunner.decodeErrors(ts.path) == "")
    #expect(try CommandRunner.streams(ts.path).first == "h264")
  }

  /// The README's use: the stream through a pipe into a player reading standard input, here
  /// ffmpeg decoding every track of `-` with no error printed.
  @Test func theStreamPipesIntoADecoder() throws {
    let script =
      "\"$1\" replay \"$2\" --to - --speed max --quiet"
      + " | ffmpeg -nostdin -v error -i - -map 0 -f null - 2>&1; echo \"decoder exit $?\""
    let result = try CommandRunner.run(
      "sh", ["-c", script, "sh", CommandRunner.ingest, CommandRunner.fixture("screen.dump")],
      timeout: 120)
    #expect(result.stdout == "decoder exit 0\n", "\(result.stdout) \(result.stderr)")
    #expect(result.stderr.contains("replayed"), "\(result.stderr)")
  }

  /// What would write standard output besides the stream is refused before anything runs,
  /// naming what to give instead.
  @Test(arguments: [
    (["--json"], "--status FILE"), (["--status", "-"], "give --status a FILE"),
    (["--to", "file:-"], "twice"),
  ])
  func whatWouldShareStandardOutputIsRefused(extra: [String], message: String) throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let run = try Self.runWithOutputFile(
      CommandRunner.ingest,
      ["replay", CommandRunner.fixture("video-only.dump"), "--to", "-"] + extra, in: directory)
    #expect(run.status == 2, "\(extra): \(run.stderr)")
    #expect(run.stderr.contains(message), "\(extra): \(run.stderr)")
    #expect(run.stdout.isEmpty)
  }

  /// A terminal cannot show a transport stream: refused, with the pipe to use instead.
  @Test func theStreamIsNotWrittenToATerminal() throws {
    guard CommandRunner.has("script") else {
      TestEnvironment.unavailable("no script(1)")
      return
    }
    let command =
      [CommandRunner.ingest, "replay", CommandRunner.fixture("video-only.dump")]
      .map { "'\($0)'" }.joined(separator: " ") + " --to -; echo \"exit $?\""
    let terminal = try CommandRunner.run("script", ["-qec", command, "/dev/null"], timeout: 60)
    #expect(terminal.stdout.contains("exit 2"), "\(terminal.stdout)")
    #expect(terminal.stdout.contains("| ffplay -"), "\(terminal.stdout)")
  }

  // MARK: outputs that cannot be written

  /// An output in a directory that does not exist, or a path that is a directory, is a usage
  /// error like an unwritable `--status`, and nothing is created.
  @Test(arguments: [
    ("missing/out.ts", "does not exist"), ("adir", "is a directory"),
    ("hls:missing/deeper/rec", "does not exist"),
  ])
  func anUnwritableOutputIsAUsageError(to: String, message: String) throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let place = directory.appending(path: "adir.ts")
    try FileManager.default.createDirectory(at: place, withIntermediateDirectories: false)
    let target =
      to == "adir"
      ? place.path
      : to.hasPrefix("hls:")
        ? "hls:" + directory.appending(path: String(to.dropFirst(4))).path
        : directory.appending(path: to).path
    let result = try CommandRunner.ingest(
      ["replay", CommandRunner.fixture("video-only.dump"), "--to", target, "--speed", "max"])
    #expect(result.status == 2, "\(to): \(result.stderr)")
    #expect(result.stderr.contains(message), "\(to): \(result.stderr)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["adir.ts"])
  }

  // MARK: live encoder options

  /// A value `ingest-encode` would refuse is a usage error of `ingest live` itself, found
  /// before the encoder starts, with what to give instead.
  @Test(arguments: [
    (["--codec", "vp9"], "--codec must be h264 or hevc"),
    (["--size", "1281x720"], "e.g. 1280x720"),
    (["--preset", "quick"], "veryfast"),
    (["--fps", "0"], "--fps must be a whole number from 1 to 240"),
    (["--duration", "soon"], "--duration must be a number of seconds"),
    (["--loop"], "--loop applies to a media file"),
  ])
  func liveEncoderMistakesAreUsageErrors(extra: [String], message: String) throws {
    let result = try CommandRunner.ingest(["live", "testsrc", "--to", "null:"] + extra)
    #expect(result.status == 2, "\(extra): \(result.stderr)")
    #expect(result.stderr.contains(message), "\(extra): \(result.stderr)")
    #expect(result.stderr.contains("--help"), "\(extra): \(result.stderr)")
  }

  // MARK: capture

  /// `capture` keeps an existing file unless told `-y` (or `--force`), as ffmpeg does.
  @Test func captureRefusesAnExistingOutputUnlessForced() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let input = directory.appending(path: "in.mp4").path
    let made = try CommandRunner.run(
      "ffmpeg",
      [
        "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=30", "-t", "1",
        "-c:v", "libx264", "-preset", "veryfast", input,
      ], timeout: 60)
    try #require(made.status == 0, "ffmpeg: \(made.stderr)")
    let output = directory.appending(path: "kept.dump")
    let kept = Data("precious\n".utf8)
    try kept.write(to: output)

    let refused = try CommandRunner.ingest(["capture", input, "-o", output.path])
    #expect(refused.status == 2, "\(refused.stderr)")
    #expect(refused.stderr.contains("add -y (or --force)"), "\(refused.stderr)")
    #expect(try Data(contentsOf: output) == kept)

    for force in ["-y", "--force"] {
      let forced = try CommandRunner.ingest(["capture", input, "-o", output.path, force])
      #expect(forced.status == 0, "\(force): \(forced.stderr)")
      let inspected = try CommandRunner.ingest(["inspect", output.path])
      #expect(inspected.status == 0, "\(force): \(inspected.stderr)")
    }
  }

  // MARK: replay and live file outputs

  /// `replay` and `live` keep an existing `.ts`, `.mp4` or `.mov` file unless told `-y` (or
  /// `--force`), as `capture` does; the message names the file and the option.
  @Test(arguments: ["out.ts", "rec.mp4", "rec.mov"])
  func runsRefuseAnExistingOutputFileUnlessForced(name: String) throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let output = directory.appending(path: name)
    let kept = Data("precious\n".utf8)
    try kept.write(to: output)

    for command in [
      ["replay", CommandRunner.fixture("screen.dump")], ["live", "testsrc", "--duration", "1"],
    ] {
      let refused = try CommandRunner.ingest(command + ["--to", output.path, "--quiet"])
      #expect(refused.status == 2, "\(command[0]): \(refused.stderr)")
      #expect(
        refused.stderr.contains("--to \(output.path) exists: add -y (or --force)"),
        "\(command[0]): \(refused.stderr)")
      #expect(try Data(contentsOf: output) == kept, "\(command[0])")
    }
    for force in ["-y", "--force"] {
      let forced = try CommandRunner.ingest([
        "replay", CommandRunner.fixture("screen.dump"), "--to", output.path, force, "--speed",
        "max", "--quiet",
      ])
      #expect(forced.status == 0, "\(force): \(forced.stderr)")
      #expect(try CommandRunner.decodeErrors(output.path) == "", "\(force)")
    }
  }

  /// `-y` never lets a run write over its own input.
  @Test func forcingDoesNotOverwriteTheInput() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let dump = directory.appending(path: "in.dump").path
    try FileManager.default.copyItem(atPath: CommandRunner.fixture("screen.dump"), toPath: dump)
    // file: names a transport stream output whatever the name ends with.
    let result = try CommandRunner.ingest(["replay", dump, "--to", "file:" + dump, "-y"])
    #expect(result.status == 2, "\(result.stderr)")
    #expect(result.stderr.contains("would be overwritten"), "\(result.stderr)")
    #expect(
      FileManager.default.contentsEqual(
        atPath: dump, andPath: CommandRunner.fixture("screen.dump")))
  }

  // MARK: --version

  /// Every executable answers `--version` with its name and the one version number.
  @Test func everyExecutableHasTheSameVersion() throws {
    let ingest = try CommandRunner.ingest(["--version"])
    #expect(ingest.status == 0, "\(ingest.stderr)")
    let line = ingest.stdout
    #expect(line.wholeMatch(of: /ingest \d+\.\d+\.\d+\n/) != nil, "\(line)")
    let number = line.dropFirst("ingest ".count)
    for (executable, arguments, name) in [
      (CommandRunner.ingest, ["upload", "--version"], "ingest upload"),
      (Self.uploader, ["--version"], "ingest upload"),
      (CommandRunner.ingest, ["replay", "--version"], "ingest replay"),
      (CommandRunner.encoder, ["--version"], "ingest-encode"),
    ] {
      let result = try CommandRunner.run(executable, arguments)
      #expect(result.status == 0, "\(arguments): \(result.stderr)")
      #expect(result.stdout == "\(name) \(number)", "\(arguments): \(result.stdout)")
    }
  }

  /// With libfaketime preloaded the runtime sees no arguments at all (argc 0): `ingest` reads
  /// them from the kernel's copy and runs the command, instead of dying of a trap.
  @Test func aPreloadedLibfaketimeDoesNotKillTheCommand() throws {
    let library = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
    guard FileManager.default.fileExists(atPath: library) else {
      TestEnvironment.unavailable("no libfaketime (apt-get install faketime)")
      return
    }
    let preload = ["LD_PRELOAD=\(library)", "FAKETIME=@2020-01-01 00:00:00", CommandRunner.ingest]
    let version = try CommandRunner.run("env", preload + ["--version"])
    #expect(version.status == 0, "\(version.status): \(version.stderr)")
    #expect(version.stdout.hasPrefix("ingest "), "\(version.stdout)")
    let help = try CommandRunner.run("env", preload + ["replay", "--help"])
    #expect(help.status == 0, "\(help.status): \(help.stderr)")
    #expect(help.stdout.hasPrefix("usage: ingest replay"), "\(help.stdout)")
    let mistake = try CommandRunner.run("env", preload + ["replay"])
    #expect(mistake.status == 2, "\(mistake.status): \(mistake.stderr)")
    #expect(mistake.stderr.contains("expected one DUMP path"), "\(mistake.stderr)")
  }

  // MARK: docs/cli.md

  /// docs/cli.md is what `Scripts/make-cli-reference` writes from this build's `--help`, for
  /// every command the top-level help lists.
  @Test func theCLIReferenceMatchesTheHelp() throws {
    let result = try CommandRunner.run(
      "env",
      [
        "INGEST_BIN=\(CommandRunner.ingest)",
        CommandRunner.packageRoot.appending(path: "Scripts/make-cli-reference").path, "--check",
      ])
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    let reference = try String(
      contentsOf: CommandRunner.packageRoot.appending(path: "docs/cli.md"), encoding: .utf8)
    for command in ["replay", "live", "inspect", "capture", "recover", "bench", "upload"] {
      #expect(reference.contains("\n## ingest \(command)\n"), "no section for \(command)")
    }
  }

  // MARK: README

  /// The README's CLI lines with `what` in them, as written.
  static func readmeLines(containing what: String) throws -> [String] {
    let readme = try String(
      contentsOf: CommandRunner.packageRoot.appending(path: "README.md"), encoding: .utf8)
    return readme.split(separator: "\n").map(String.init).filter {
      $0.hasPrefix("$BIN ") && $0.contains(what)
    }
  }

  /// The simulated-link example runs as written and succeeds, in a directory of its own (with
  /// the fixtures linked in), so its output file lands there.
  @Test func theReadmeSimulatedLinkExampleSucceeds() throws {
    let lines = try Self.readmeLines(containing: "congested.ts")
    try #require(lines.count == 1, "\(lines)")
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    try FileManager.default.createSymbolicLink(
      at: directory.appending(path: "Fixtures"),
      withDestinationURL: CommandRunner.packageRoot.appending(path: "Fixtures"))
    let result = try CommandRunner.run(
      "sh",
      ["-c", "cd \"$1\" && BIN=\"$2\" && \(lines[0])", "sh", directory.path, CommandRunner.ingest],
      timeout: 120)
    #expect(result.status == 0, "\(lines[0]): \(result.stderr)")
    #expect(result.stdout.contains("\"event\":\"summary\""), "\(result.stdout)")
    let ts = directory.appending(path: "congested.ts").path
    #expect(LoopbackServers.size(of: URL(fileURLWithPath: ts)) > 0)
  }

  /// The SRT example's passphrase is one the parser takes (and plainly one to replace): the run
  /// gets past the URL and fails only for want of a listener.
  @Test func theReadmeSRTExampleParses() throws {
    let lines = try Self.readmeLines(containing: "passphrase=")
    try #require(!lines.isEmpty)
    for line in lines {
      let url = try #require(line.firstMatch(of: /'(srt:\/\/[^']*)'/)?.1)
      #expect(url.contains("REPLACE"), "the placeholder says it is one: \(url)")
      let port = try LoopbackServers.freePort(SOCK_DGRAM)
      let local = url.replacing(/127\.0\.0\.1:\d+/, with: "127.0.0.1:\(port)")
      let result = try CommandRunner.ingest(
        [
          "replay", CommandRunner.fixture("video-only.dump"), "--to",
          String(local) + "&conntimeo=500",
          "--speed", "max", "--quiet",
        ], timeout: 60)
      #expect(result.status == 1, "\(result.stderr)")
      #expect(!result.stderr.contains("passphrase must"), "\(result.stderr)")
      #expect(!result.stderr.contains("--help"), "not a usage error: \(result.stderr)")
    }
  }
}
