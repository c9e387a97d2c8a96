import Foundation
import Glibc
import Testing
import IngestTestSupport

/// Passphrases, stream ids, stream keys and URL credentials never reach standard output,
/// standard error, status events or any file a run writes: runs to reachable and unreachable
/// peers, with a wrong passphrase, with mistyped URLs, with `--status`, `--json`, the text
/// summary and the progress line, and the contents of every file in the run's directory are
/// searched for each secret.
@Suite(.serialized) struct SecretsTests {
  static let passphrase = "Sekrit-Passphrase-4417"
  static let streamID = "sid-Secret-9912"
  static let streamKey = "rtmpKey-Secret-5531"
  static let user = "user-Secret-7781"
  static let password = "pw-Secret-3319"
  static let all = [passphrase, streamID, streamKey, user, password]

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
}
