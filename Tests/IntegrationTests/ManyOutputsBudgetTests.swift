import Foundation
import IngestTestSupport
import Testing

/// Many outputs at the default budget: a run whose outputs leave too little room for a sample
/// is refused at start with the budget that holds them, never started to write nothing.
@Suite struct ManyOutputsBudgetTests {
  @Test(arguments: [("ts", 8), ("mp4", 5)])
  func tooManyOutputsAreRefusedWithTheBudgetThatHoldsThem(fileExtension: String, count: Int) throws
  {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let outputs = (1...count).flatMap {
      ["--to", directory.appending(path: "out\($0).\(fileExtension)").path]
    }
    let refused = try CommandRunner.ingest(
      ["replay", CommandRunner.fixture("screen.dump"), "--speed", "max", "--quiet"] + outputs)
    #expect(refused.status == 1, "\(refused.stderr)")
    #expect(refused.stderr.contains("\(count) output(s) leave room for samples of only"))
    let written = try FileManager.default.contentsOfDirectory(atPath: directory.path)
    #expect(written.isEmpty, "\(written)")
    // The budget the message names runs every output whole.
    let named = try #require(
      refused.stderr.firstMatch(of: /--budget (\d+) or more/).map { String($0.1) })
    let run = try CommandRunner.ingest(
      [
        "replay", CommandRunner.fixture("screen.dump"), "--speed", "max", "--quiet", "--json",
        "--budget", named,
      ] + outputs)
    #expect(run.status == 0, "\(run.stderr)")
    #expect(
      run.stdout.components(separatedBy: "\"sent\":{\"video\":300,").count == count + 1,
      "\(run.stdout)")
  }
}
