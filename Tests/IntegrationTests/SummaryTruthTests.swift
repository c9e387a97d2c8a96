import Foundation
import IngestTestSupport
import Testing

/// The summary reports what the output took, not what it was handed.
@Suite struct SummaryTruthTests {
  /// /dev/full takes nothing: every write(2) fails with ENOSPC. Bytes sent are what reached the
  /// file (none), and what was left over is undelivered because the disk is full.
  @Test func aFullDiskAcceptedNothingAndIsNamedAsTheCause() throws {
    let json = try CommandRunner.ingest(
      ["replay", CommandRunner.fixture("screen.dump"), "--to", "file:/dev/full", "--speed", "max"]
        + ["--json"], timeout: 60)
    #expect(json.status == 1)
    #expect(!json.timedOut)
    let summary = try JSONLines.summary(json.stdout)
    #expect(summary["sent_bytes"] as? Int == 0)
    #expect(summary["ok"] as? Bool == false)
    // Nor did any unit: those the file's buffer held when the disk refused them are undelivered.
    let sent = summary["sent"] as? [String: Int] ?? [:]
    #expect(sent.values.allSatisfy { $0 == 0 }, "\(sent)")
    #expect((summary["undelivered"] as? Int ?? 0) > 0)
    #expect(summary["undelivered_cause"] as? String == "the disk is full")
    let text = try CommandRunner.ingest(
      ["replay", CommandRunner.fixture("screen.dump"), "--to", "file:/dev/full", "--speed", "max"],
      timeout: 60)
    #expect(text.stderr.contains("bytes    0 sent"), "\(text.stderr)")
    #expect(text.stderr.contains("samples  video 0/"), "\(text.stderr)")
    #expect(!text.stderr.contains("did not take them in time"))
  }
}
