import Foundation
import IngestCore
import IngestRuntime
import IngestSinks
import IngestTestSupport
import Testing

/// The pipeline under a simulated congested or dead link, replayed at "realtime" on a virtual
/// clock so a 10 s dump takes a fraction of a second.
@Suite struct CongestionTests {
  private func replay(_ fixture: String, to target: OutputTarget, status: StatusLog? = nil) throws
    -> ReplaySummary
  {
    var options = ReplayOptions(target: target)
    options.speed = .factor(1)
    // These runs are about how the pipeline drops on a link far below the stream's rate, where
    // the ladder keeps fewer than half of the video frames; the delivery rule is tested apart.
    options.minimumDeliveredFraction = 0
    if let status { options.statusLine = { status.append($0) } }
    // In-process, the kernel's figure would be the test runner's; the ledger is what is tested.
    options.residentProbe = NoResidentProbe()
    return try ReplaySession.run(
      dumpPath: CommandRunner.fixture(fixture), options: options, clock: VirtualClock(),
      senders: .inline)
  }

  @Test func throttledLinkDropsWholeGOPsAndDecodesCleanly() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appending(path: "congested.ts").path
    let status = StatusLog()
    let summary = try replay(
      "screen.dump", to: .file(path: path, shaper: LinkShaper(bitsPerSecond: 400_000)),
      status: status)
    let snapshot = summary.snapshot
    #expect(summary.succeeded)
    #expect(snapshot.drops.total(.video) > 0)
    #expect(snapshot.peakLedger <= snapshot.budget)
    #expect(snapshot.totalAppended == snapshot.totalSent + snapshot.drops.total + snapshot.inFlight)
    #expect(status.lines.contains { $0.contains("\"event\":\"tier\"") })
    #expect(status.lines.contains { $0.contains("\"event\":\"drops\"") })
    #expect(try CommandRunner.decodeErrors(path) == "")
    let check = try TransportStreamCheck(path: path)
    let continuityErrors = check.continuityErrors
    #expect(continuityErrors == 0)
  }

  @Test func stallKeepsTheLedgerBoundedAndRecovers() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appending(path: "stall.ts").path
    let shaper = LinkShaper(stallStart: .seconds(2), stallDuration: .seconds(5))
    let status = StatusLog()
    let summary = try replay("screen.dump", to: .file(path: path, shaper: shaper), status: status)
    let snapshot = summary.snapshot
    #expect(summary.succeeded)
    #expect(snapshot.drops.total > 0)
    #expect(snapshot.peakLedger <= snapshot.budget)
    #expect(snapshot.inFlight == 0)
    #expect(snapshot.totalAppended == snapshot.totalSent + snapshot.drops.total)
    // Before the outage everything flows; after it, delivery resumes at keyframes (the ladder
    // steps back down only after 5 s below 70 %, so the end of this short dump stays at tier 4).
    #expect(snapshot.sent[0] >= 60 + 2)
    #expect(snapshot.sent[1] * 2 > snapshot.appended[1])
    #expect(try CommandRunner.decodeErrors(path) == "")
    let check = try TransportStreamCheck(path: path)
    let continuityErrors = check.continuityErrors
    #expect(continuityErrors == 0)
  }
}

/// The exit of a run that delivered too little: `ok: false`, a one-line reason, exit status 1.
@Suite struct DeliveryRuleTests {
  /// 100 kbit/s for a stream of about 850 kbit/s at full speed: almost every frame is dropped.
  /// Such a run used to end with `ok: true` and exit 0.
  @Test func runThatDeliversTooLittleFails() throws {
    let result = try CommandRunner.ingest(
      [
        "replay", CommandRunner.fixture("screen.dump"), "--to", "null:?rate=100k", "--speed",
        "max", "--json", "--quiet",
      ], timeout: 60)
    #expect(!result.timedOut)
    #expect(result.status == 1, "\(result.stderr)")
    let summary = try JSONLines.summary(result.stdout)
    #expect(summary["ok"] as? Bool == false)
    #expect((summary["failure"] as? String)?.contains("video frames") == true)
    let reasons = result.stderr.split(separator: "\n").filter { $0.contains("--min-delivered") }
    #expect(reasons.count == 1, "\(result.stderr)")
  }

  /// The threshold is the user's: with `--min-delivered 0` the same run succeeds.
  @Test func thresholdIsConfigurable() throws {
    let result = try CommandRunner.ingest(
      [
        "replay", CommandRunner.fixture("screen.dump"), "--to", "null:?rate=100k", "--speed",
        "max", "--min-delivered", "0", "--json", "--quiet",
      ], timeout: 60)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(try JSONLines.summary(result.stdout)["ok"] as? Bool == true)
  }
}

/// A probe that cannot tell, so pressure comes from the ledger, the ring and the sink only.
struct NoResidentProbe: ResidentMemoryProbe {
  func residentBytes() -> Int? { nil }
}

/// Collects status lines from the reporter (which may call from another thread).
final class StatusLog: @unchecked Sendable {
  private let lock = NSLock()
  private var stored: [String] = []

  func append(_ line: String) {
    lock.lock()
    stored.append(line)
    lock.unlock()
  }

  var lines: [String] {
    lock.lock()
    defer { lock.unlock() }
    return stored
  }
}
