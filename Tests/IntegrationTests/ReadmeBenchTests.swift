import Foundation
import IngestTestSupport
import Testing

/// The `ingest bench` line of the README's CLI examples, read from README.md so the two cannot
/// drift, run as written (through `sh`, with `BIN` the built `ingest` and the package root as
/// the working directory, as the README's block assumes).
@Suite struct ReadmeBenchTests {
  /// The README's example line that runs `$BIN bench`.
  static func benchLine() throws -> String {
    let readme = try String(
      contentsOf: CommandRunner.packageRoot.appending(path: "README.md"), encoding: .utf8)
    let lines = readme.split(separator: "\n").filter { $0.hasPrefix("$BIN bench") }
    try #require(lines.count == 1, "README.md has \(lines.count) '$BIN bench' lines")
    return String(lines[0])
  }

  @Test func theReadmeBenchExampleRunsAndReportsMemoryAndSpeed() throws {
    let line = try Self.benchLine()
    let result = try CommandRunner.run(
      "sh",
      [
        "-c", "cd \"$1\" && BIN=\"$2\" && \(line)", "sh", CommandRunner.packageRoot.path,
        CommandRunner.ingest,
      ], timeout: 300)
    #expect(!result.timedOut, "\(line)")
    #expect(result.status == 0, "\(line): \(result.stderr)")
    // What the comment promises: the memory ceiling (peak ledger and RSS per scenario, within
    // the bounds) and the speed (the MPEG-TS writer's MB/s).
    #expect(result.stdout.contains("| scenario |"), "\(result.stdout)")
    #expect(result.stdout.contains("peak ledger / budget (MB)"))
    #expect(result.stdout.contains("peak RSS, VmHWM (MB)"))
    #expect(result.stdout.contains("| steady |"))
    #expect(result.stdout.contains("### MPEG-TS writer (one core)"))
    #expect(result.stdout.contains("| ledger never above the budget |"))
    #expect(
      result.stdout.split(separator: "\n").contains {
        $0.hasPrefix("| ledger never above the budget |") && $0.hasSuffix("| yes |")
      })
  }
}
