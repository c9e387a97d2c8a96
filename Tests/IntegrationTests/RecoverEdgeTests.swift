import Foundation
import Glibc
import IngestTestSupport
import Testing

/// `ingest recover` where it only reads: a finished recording it may not write (a read-only
/// mount, another user's files), and the answer `--json` gives when recovery fails.
@Suite struct RecoverEdgeTests {
  /// The recording's directory and files made read-only, and recovery run by a user the
  /// permissions hold for (root ignores them: as root it runs as nobody, via setpriv).
  @Test func finishedRecordingThatCannotBeWrittenIsReportedAsFinished() throws {
    let asNobody = getuid() == 0
    if asNobody && !CommandRunner.has("setpriv") {
      TestEnvironment.unavailable("setpriv (util-linux) is missing")
      return
    }
    let directory = try CommandRunner.temporaryDirectory()
    defer {
      _ = chmod(directory.appending(path: "rec").path, 0o755)
      try? FileManager.default.removeItem(at: directory)
    }
    let recording = directory.appending(path: "rec").path
    let replay = try CommandRunner.ingest([
      "replay", CommandRunner.fixture("screen.dump"), "--to", "hls:\(recording)", "--speed",
      "max", "--quiet",
    ])
    #expect(replay.status == 0, "\(replay.stderr)")
    let before = try FileManager.default.contentsOfDirectory(atPath: recording).sorted()
    for name in before { #expect(chmod(recording + "/" + name, 0o444) == 0) }
    #expect(chmod(recording, 0o555) == 0)
    #expect(chmod(directory.path, 0o755) == 0)

    let arguments = ["recover", recording, "--json"]
    let recover =
      asNobody
      ? try CommandRunner.run(
        "setpriv",
        ["--reuid=nobody", "--regid=nogroup", "--clear-groups", CommandRunner.ingest] + arguments)
      : try CommandRunner.ingest(arguments)
    #expect(recover.status == 0, "\(recover.stderr)")
    #expect(recover.stdout.contains("\"was_finished\":true"), "\(recover.stdout)")
    #expect(recover.stdout.contains("\"segments\":5"), "\(recover.stdout)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: recording).sorted() == before)
  }

  @Test(arguments: ["missing.mp4", "missing-dir"])
  func failureIsAnsweredInJSONToo(name: String) throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let recover = try CommandRunner.ingest([
      "recover", directory.appending(path: name).path, "--json",
    ])
    #expect(recover.status == 1)
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(recover.stdout.utf8)) as? [String: Any])
    #expect(object["ok"] as? Bool == false)
    #expect((object["error"] as? String)?.contains(name) == true, "\(recover.stdout)")
  }
}
