import Foundation
import Glibc
import IngestTestSupport
import Testing

/// Passphrases, stream ids, stream keys and URL credentials never reach standard output,
/// standard error, status events or any file a run writes: runs to reachable and unreachable
/// peers, with a wrong passphrase, with mistyped URLs, with `--status`, `--json`, the text
/// summary and the progress line, and the contents of every file in the run's directory are
/// searched for each secret. Given through `passphrase_file=`, `streamid_file=`, `key_file=` or
/// the `INGEST_*` variables, they are not on the running process's command line either.
@Suite(.serialized) struct SecretsTests {
  static let passphrase = "Sekrit-Passphrase-4417"
  static let streamID = "sid-Secret-9912"
  static let streamKey = "rtmpKey-Secret-5531"
  static let user = "user-Secret-7781"
  static let password = "pw-Secret-3319"
  static let all = [passphrase, streamID, streamKey, user, password]
  /// The variables that carry secrets; a run inherits none of them unless a test sets it.
  static let secretVariables = ["INGEST_SRT_PASSPHRASE", "INGEST_SRT_STREAMID", "INGEST_RTMP_KEY"]

  /// Everything a run showed and wrote: its output, and every file under `directory`.
  private func expectNoSecret(
    in result: CommandRunner.Result, directory: URL, case name: String,
    sourceLocation: SourceLocation = #_sourceLocation
  ) {
    var places = ["stdout": result.stdout, "stderr": result.stderr]
    let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)
    while let file = files?.nextObject() as? URL {
      guard let data = try? Data(contentsOf: file) else { continue }
      places[file.lastPathComponent] = String(decoding: data, as: UTF8.self)
    }
    for (place, text) in places {
      for secret in Self.all {
        #expect(
          !text.contains(secret), "\(name): \(secret) in \(place)", sourceLocation: sourceLocation)
      }
    }
    #expect(!result.timedOut, "\(name) hung", sourceLocation: sourceLocation)
    #expect(
      result.status == 0 || result.status == 1 || result.status == 2,
      "\(name): exit \(result.status)")
  }

  private func replay(_ target: String, in directory: URL, extra: [String] = []) throws
    -> CommandRunner.Result
  {
    try CommandRunner.ingest(
      [
        "replay", CommandRunner.fixture("audio-only.dump"), "--to", target, "--speed", "4",
        "--status", directory.appending(path: "status.jsonl").path,
      ] + extra, timeout: 90)
  }

  @Test func srtToAListenerWithTheRightAndAWrongPassphraseAndToNobody() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let port = UInt16(try LoopbackServers.freePort(SOCK_DGRAM))
    // The listener's own file sits outside the searched directory: it is the peer's, not ours.
    let received = FileManager.default.temporaryDirectory.appending(path: "rx-\(UUID()).ts")
    defer { try? FileManager.default.removeItem(at: received) }
    let url =
      "srt://127.0.0.1:\(port)?passphrase=\(Self.passphrase)&pbkeylen=32&streamid=\(Self.streamID)"
    do {
      let peer = try SRTPeer(port: port, output: received, passphrase: Self.passphrase)
      defer { peer.stop(signal: SIGKILL) }
      let result = try replay(url, in: directory, extra: ["--json"])
      #expect(result.status == 0, "\(result.stderr)")
      #expect(result.stdout.contains("\"ok\":true"))
      expectNoSecret(in: result, directory: directory, case: "SRT reachable, --json")
    }
    do {
      let peer = try SRTPeer(port: port, output: received, passphrase: "another-passphrase-01")
      defer { peer.stop(signal: SIGKILL) }
      let result = try replay(url, in: directory)
      #expect(result.status == 1)
      expectNoSecret(in: result, directory: directory, case: "SRT wrong passphrase, text summary")
    }
    let nobody = try replay(url, in: directory, extra: ["--json"])
    #expect(nobody.status == 1)
    expectNoSecret(in: nobody, directory: directory, case: "SRT unreachable")
    // The status file held a start and a summary event for each run.
    #expect(FaultSupport.count("summary", in: directory.appending(path: "status.jsonl").path) >= 1)
  }

  @Test func rtmpWithKeyAndCredentialsReachableAndNot() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let unreachable = try replay(
      "rtmp://\(Self.user):\(Self.password)@127.0.0.1:9/live/\(Self.streamKey)", in: directory,
      extra: ["--json"])
    #expect(unreachable.status == 1)
    #expect(unreachable.stderr.contains("rtmp://***@127.0.0.1:9/live/***"))
    expectNoSecret(in: unreachable, directory: directory, case: "RTMP unreachable")
    // The loopback nginx of Scripts/servers, when it runs.
    if (try? FaultSupport.tool(["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/1935"]))?.status == 0 {
      let reachable = try replay("rtmp://127.0.0.1:1935/live/\(Self.streamKey)", in: directory)
      expectNoSecret(in: reachable, directory: directory, case: "RTMP reachable")
    } else {
      print("RTMP reachable case not run: no server on 127.0.0.1:1935 (Scripts/servers start rtmp)")
    }
  }

  @Test func mistypedURLsAreRefusedWithoutQuotingTheirSecrets() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let mistyped = [
      "srtt://127.0.0.1:9000?passphrase=\(Self.passphrase)",
      "srt://127.0.0.1:9000?mode=listener?passphrase=\(Self.passphrase)",
      "srt://127.0.0.1:9000?passphrase=\(Self.passphrase)&streamid=\(Self.streamID)&latncy=20",
      "srt://127.0.0.1:9000?passphrase=\(Self.passphrase)&pbkeylen=7",
      "srt://127.0.0.1:9000?streamid=\(Self.streamID)&streamid=\(Self.streamID)",
      "rtmp://\(Self.user):\(Self.password)@[::1]x/live/\(Self.streamKey)",
      "rtmpx://\(Self.user):\(Self.password)@host/live/\(Self.streamKey)",
      "rtmp://\(Self.user):\(Self.password)@host:99999/live/\(Self.streamKey)",
      "out.mp4?passphrase=\(Self.passphrase)",
    ]
    for url in mistyped {
      let result = try replay(url, in: directory)
      #expect(result.status == 2, "\(url): exit \(result.status)")
      #expect(result.stderr.contains("--to"), "\(result.stderr)")
      expectNoSecret(in: result, directory: directory, case: "usage error")
    }
  }

  @Test func progressLineAndHLSOutputCarryNoSecret() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    // The progress line is shown only on a terminal: `script` gives the run one.
    guard CommandRunner.has("script") else {
      print("progress case not run: no script(1)")
      return
    }
    let command = [
      CommandRunner.ingest, "replay", CommandRunner.fixture("audio-only.dump"), "--to",
      "rtmp://\(Self.user):\(Self.password)@127.0.0.1:9/live/\(Self.streamKey)", "--speed", "4",
    ].map { "'\($0)'" }.joined(separator: " ")
    let terminal = try CommandRunner.run("script", ["-qec", command, "/dev/null"], timeout: 90)
    #expect(terminal.stdout.contains("Mb/s"), "no progress line: \(terminal.stdout)")
    expectNoSecret(in: terminal, directory: directory, case: "progress on a terminal")

    let hls = try replay(
      "hls:\(directory.appending(path: "hls").path)", in: directory, extra: ["--json"])
    #expect(hls.status == 0, "\(hls.stderr)")
    expectNoSecret(in: hls, directory: directory, case: "HLS output")
  }

  /// The secrets in files of a directory of their own (outside the one searched for them).
  private func secretFiles() throws
    -> (directory: URL, passphrase: String, streamID: String, key: String)
  {
    let directory = try CommandRunner.temporaryDirectory()
    let files = [
      ("passphrase", Self.passphrase), ("streamid", Self.streamID), ("key", Self.streamKey),
    ]
    for (name, secret) in files {
      try Data((secret + "\n").utf8).write(to: directory.appending(path: name))
    }
    return (
      directory, directory.appending(path: "passphrase").path,
      directory.appending(path: "streamid").path, directory.appending(path: "key").path
    )
  }

  /// Runs `ingest replay` in the background with `environment` added, reads its command line
  /// from /proc once it has connected, and waits for it to end.
  /// - Returns: what it printed, and its command line with the NULs between arguments as spaces.
  private func replayInBackground(
    _ target: String, in directory: URL, environment: [String: String]
  ) throws -> (result: CommandRunner.Result, commandLine: String) {
    let status = directory.appending(path: "status.jsonl")
    let run = try SecretRun(
      [
        "replay", CommandRunner.fixture("video-only.dump"), "--to", target, "--json", "--status",
        status.path,
      ], environment: environment, removing: Self.secretVariables, directory: directory)
    defer { run.kill() }
    // Realtime: the run is still streaming for seconds after it connects.
    try LoopbackServers.waitUntil("the run to connect", timeout: 30) {
      guard run.isRunning else { throw LoopbackServers.Failure("ingest ended: \(run.stderr)") }
      return JSONLines.events(in: status).contains { $0["event"] as? String == "connected" }
    }
    let commandLine = run.commandLine()
    let result = run.finish(timeout: 60)
    return (result, commandLine ?? "")
  }

  @Test(arguments: ["file", "environment"])
  func srtSecretsFromAFileOrTheEnvironmentReachAnEncryptedListener(source: String) throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let secrets = try secretFiles()
    defer { try? FileManager.default.removeItem(at: secrets.directory) }
    let received = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: received) }
    let listener = try SRTListener(
      port: try LoopbackServers.freePort(SOCK_DGRAM), output: received.appending(path: "in.ts"),
      passphrase: Self.passphrase)
    defer { listener.kill() }

    var url = "srt://127.0.0.1:\(listener.port)?latency=200&pbkeylen=32"
    var environment: [String: String] = [:]
    if source == "file" {
      url += "&passphrase_file=\(secrets.passphrase)&streamid_file=\(secrets.streamID)"
    } else {
      environment = [
        "INGEST_SRT_PASSPHRASE": Self.passphrase, "INGEST_SRT_STREAMID": Self.streamID,
      ]
    }
    let (result, commandLine) = try replayInBackground(
      url, in: directory, environment: environment)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(commandLine.contains("replay") && commandLine.contains("pbkeylen=32"), "\(commandLine)")
    for secret in Self.all { #expect(!commandLine.contains(secret), "\(secret) in cmdline") }
    expectNoSecret(in: result, directory: directory, case: "SRT secrets from the \(source)")

    // The listener decrypted what it received (it exits once the caller has gone).
    #expect(listener.child.wait(timeout: 10))
    let summary = try JSONLines.summary(result.stdout)
    #expect(LoopbackServers.size(of: listener.output) == summary["sent_bytes"] as? Int)
    #expect(try CommandRunner.streams(listener.output.path) == ["h264"])
    #expect(try CommandRunner.decodeErrors(listener.output.path) == "")
    #expect(
      JSONLines.events(in: directory.appending(path: "status.jsonl")).contains {
        ($0["event"] as? String) == "start"
          && ($0["output"] as? String)?.contains("passphrase=***")
            == true
      })
  }

  @Test(arguments: ["file", "environment"])
  func rtmpKeyFromAFileOrTheEnvironmentIsPublishedTo(source: String) throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let secrets = try secretFiles()
    defer { try? FileManager.default.removeItem(at: secrets.directory) }
    // nginx's directory holds the recording named after the key: it is the server's, not ours.
    let serverDirectory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: serverDirectory) }
    let server = try NginxRTMP(
      port: try LoopbackServers.freePort(SOCK_STREAM), directory: serverDirectory)
    defer { server.kill() }

    let url =
      source == "file"
      ? "rtmp://127.0.0.1:\(server.port)/live?key_file=\(secrets.key)"
      : "rtmp://127.0.0.1:\(server.port)/live"
    let environment = source == "file" ? [:] : ["INGEST_RTMP_KEY": Self.streamKey]
    let (result, commandLine) = try replayInBackground(
      url, in: directory, environment: environment)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(commandLine.contains("rtmp://127.0.0.1:\(server.port)/live"), "\(commandLine)")
    for secret in Self.all { #expect(!commandLine.contains(secret), "\(secret) in cmdline") }
    expectNoSecret(in: result, directory: directory, case: "RTMP key from the \(source)")

    try server.waitForSessionEnd()
    server.kill()
    let recording = try FLVReport(server.recording(key: Self.streamKey).path)
    #expect(recording.codecs == ["h264"])
    #expect(recording.decodeErrors == "")
    let start = JSONLines.events(in: directory.appending(path: "status.jsonl")).first {
      $0["event"] as? String == "start"
    }
    #expect(
      (start?["output"] as? String)?.hasSuffix("rtmp://127.0.0.1:\(server.port)/live/***") == true,
      "\(String(describing: start))")
  }

  /// Every environment variable that carries an output's secret (`docs/secrets.md`).
  static let allSecretVariables = [
    "INGEST_SRT_PASSPHRASE": passphrase, "INGEST_SRT_STREAMID": streamID,
    "INGEST_RTMP_KEY": streamKey, "INGEST_WHIP_TOKEN": "whip-Token-Secret-6620",
  ]

  /// `ingest live` keeps the outputs' secret variables to itself: the encoder child it starts
  /// gets the rest of the environment, not one of them, the WHIP token included (its
  /// /proc/PID/environ would show them).
  @Test func theEncoderChildDoesNotInheritTheSecretVariables() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let marker = "INGEST_TEST_MARKER=kept"
    let run = try SecretRun(
      ["live", "testsrc", "--to", "null:", "--duration", "60", "--quiet"],
      environment: Self.allSecretVariables.merging(["INGEST_TEST_MARKER": "kept"]) { $1 },
      removing: [], directory: directory)
    defer { run.kill() }
    var environments = run.environments()
    #expect(
      FaultSupport.waitUntil(seconds: 20) {
        environments = run.environments()
        return !environments.children.isEmpty && !environments.children[0].isEmpty
      }, "no encoder child appeared: \(run.stderr)")
    for child in environments.children {
      #expect(child.contains(marker), "the child's environment was not passed on")
      for (name, value) in Self.allSecretVariables {
        #expect(!child.contains { $0.hasPrefix(name + "=") }, "\(name) reached the encoder")
        #expect(!child.contains { $0.contains(value) }, "\(name)'s value reached the encoder")
      }
    }
  }

  /// A run that holds an output's secret forbids core dumps (`PR_SET_DUMPABLE` 0), so a crash
  /// cannot write the passphrase or key to a core file; one without a secret is left as it
  /// is. The kernel shows the setting as the owner of the files in /proc/PID (environ): root
  /// for a process that may not dump, the process's user otherwise. As root, the runs are made as nobody, so the two
  /// owners differ.
  @Test func aRunHoldingASecretMayNotDumpCore() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    var executable = CommandRunner.ingest
    var prefix: [String] = []
    var user = getuid()
    if user == 0 {
      guard CommandRunner.has("setpriv") else {
        TestEnvironment.unavailable("setpriv (util-linux) is not installed")
        return
      }
      executable = "setpriv"
      prefix = ["--reuid=65534", "--regid=65534", "--clear-groups", "--", CommandRunner.ingest]
      user = 65534
    }
    for (query, holdsSecret) in [
      ("&passphrase=\(Self.passphrase)", true), ("", false), ("&streamid=\(Self.streamID)", true),
    ] {
      let port = try LoopbackServers.freePort(SOCK_DGRAM)
      // A listener waits for a caller that never comes: the run stays up to be looked at,
      // and its `start` event comes after the options (and the secret) have been read.
      let run = try ChildProcess(
        executable,
        prefix + [
          "replay", CommandRunner.fixture("screen.dump"), "--quiet", "--status", "-", "--to",
          "srt://127.0.0.1:\(port)?mode=listener\(query)",
        ], directory: directory, name: "run-\(port)")
      defer { run.kill() }
      let started = FaultSupport.waitUntil(seconds: 20) {
        run.stdout.contains("\"event\":\"start\"")
      }
      try #require(started, "no start event: \(run.stderr)")
      var status = stat()
      #expect(stat("/proc/\(run.pid)/environ", &status) == 0)
      #expect(
        status.st_uid == (holdsSecret ? 0 : user),
        "secret \(holdsSecret): /proc/\(run.pid)/environ is owned by \(status.st_uid): \(run.stderr)"
      )
    }
  }

  /// A secret file or variable that cannot be used stops the run before anything is sent: a
  /// usage error that names the option and the file or variable, never the content.
  @Test func unusableSecretFilesAndVariablesAreUsageErrorsNamingThem() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let secrets = try secretFiles()
    defer { try? FileManager.default.removeItem(at: secrets.directory) }
    let empty = secrets.directory.appending(path: "empty").path
    try Data("\n".utf8).write(to: URL(fileURLWithPath: empty))
    let short = secrets.directory.appending(path: "short").path
    try Data("pw-4417\n".utf8).write(to: URL(fileURLWithPath: short))
    let missing = secrets.directory.appending(path: "missing").path
    let srt = "srt://127.0.0.1:9000"
    let cases: [(url: String, variables: [String: String], named: [String])] = [
      ("\(srt)?passphrase_file=\(missing)", [:], ["passphrase_file", missing]),
      ("\(srt)?streamid_file=\(empty)", [:], ["streamid_file", empty, "empty"]),
      ("\(srt)?passphrase_file=\(short)&pbkeylen=16", [:], ["passphrase_file", short, "10 to 79"]),
      (
        "\(srt)?passphrase=\(Self.passphrase)&passphrase_file=\(secrets.passphrase)", [:],
        ["passphrase", "passphrase_file"]
      ),
      (srt, ["INGEST_SRT_PASSPHRASE": "too-short"], ["INGEST_SRT_PASSPHRASE", "10 to 79"]),
      ("rtmp://127.0.0.1:9/live?key_file=\(missing)", [:], ["key_file", missing]),
      ("rtmp://127.0.0.1:9/live", ["INGEST_RTMP_KEY": ""], ["INGEST_RTMP_KEY"]),
    ]
    for (url, variables, named) in cases {
      let run = try SecretRun(
        ["replay", CommandRunner.fixture("audio-only.dump"), "--to", url],
        environment: variables, removing: Self.secretVariables, directory: directory)
      let result = run.finish(timeout: 30)
      #expect(result.status == 2, "\(url): exit \(result.status), \(result.stderr)")
      #expect(result.stderr.contains("--to"), "\(result.stderr)")
      for name in named { #expect(result.stderr.contains(name), "\(name): \(result.stderr)") }
      expectNoSecret(in: result, directory: directory, case: "secret source error for \(url)")
    }
  }
}

/// One `ingest` run started in the background with variables added to (or removed from) the
/// environment the tests run in, so that its command line can be read while it runs; killed by
/// its pid when the test ends first.
private final class SecretRun {
  private let child: ChildProcess
  private var process: Process { child.process }

  init(
    _ arguments: [String], environment: [String: String], removing: [String], directory: URL
  ) throws {
    var variables = ProcessInfo.processInfo.environment
    for name in removing { variables[name] = nil }
    variables.merge(environment) { $1 }
    child = try ChildProcess(
      CommandRunner.ingest, arguments, directory: directory, name: UUID().uuidString,
      environment: variables)
  }

  var isRunning: Bool { process.isRunning }
  var stderr: String { child.stderr }

  /// /proc/PID/cmdline with the NULs between arguments as spaces; `nil` once the process ended.
  func commandLine() -> String? {
    Self.rawCommandLine(of: "\(process.processIdentifier)").map {
      String(decoding: $0.map { $0 == 0 ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
    }
  }

  /// /proc/PID/cmdline as the kernel shows it; `nil` once the process ended (a zombie's is
  /// empty).
  private static func rawCommandLine(of pid: String) -> Data? {
    guard let handle = FileHandle(forReadingAtPath: "/proc/\(pid)/cmdline") else { return nil }
    defer { try? handle.close() }
    let bytes = handle.readDataToEndOfFile()
    return bytes.isEmpty ? nil : bytes
  }

  /// /proc/PID/environ of the run, and of each of its children that has started its own
  /// program, as raw `NAME=value` entries.
  ///
  /// A child between posix_spawn's clone and its exec shares the run's memory, so the kernel
  /// shows the run's environment (and command line) as the child's: such a child is left out
  /// until its command line is its own.
  func environments() -> (own: [String], children: [[String]]) {
    func entries(_ pid: String) -> [String] {
      guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/environ") else {
        return []
      }
      return data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    }
    let pid = "\(process.processIdentifier)"
    let own = Self.rawCommandLine(of: pid)
    let children = LoopbackServers.text(
      of: URL(fileURLWithPath: "/proc/\(pid)/task/\(pid)/children")
    ).split(separator: " ").map(String.init).filter {
      guard let line = Self.rawCommandLine(of: $0) else { return false }
      return line != own
    }
    return (entries(pid), children.map(entries))
  }

  /// Waits up to `timeout` seconds for the run to end (then kills it by pid) and collects what
  /// it printed. Its output files are removed, so they are not searched as the run's own files.
  func finish(timeout: TimeInterval) -> CommandRunner.Result {
    let timedOut = !child.wait(timeout: timeout)
    if timedOut { child.kill() }
    let result = CommandRunner.Result(
      status: process.terminationStatus, stdout: child.stdout, stderr: child.stderr,
      timedOut: timedOut)
    try? FileManager.default.removeItem(at: child.stdoutURL)
    try? FileManager.default.removeItem(at: child.stderrURL)
    return result
  }

  /// Sends SIGKILL to the pid if the run is still going, and reaps it.
  func kill() { child.kill() }
}
