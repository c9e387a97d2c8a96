import Foundation
import IngestCore
import IngestPOSIX
import IngestRuntime
import IngestSinks
import Synchronization
import Testing

/// The capture thread, the sender thread and a status reader working on one pipeline at once, as
/// in a live run: the test that `Scripts/sanitize thread` exists for. A small budget and a slow
/// sink keep the ring full, so appends, drops, sends and snapshots overlap all the time.
@Suite struct SenderThreadStressTests {
  private static let screen = TestServers.packageRoot.appending(path: "Fixtures/screen.dump").path

  @Test(arguments: [400_000, 4_000_000] as [Int64])
  func concurrentAppendSendAndSnapshotsKeepTheAccounts(bitsPerSecond: Int64) throws {
    let clock = SystemClock()
    let tracks = try ReplaySession.trackFormats(dumpPath: Self.screen)
    let sink = NullSink(shaper: LinkShaper(bitsPerSecond: bitsPerSecond))
    var configuration = PipelineConfiguration()
    configuration.bufferMilliseconds = 2000
    configuration.budgetBytes = 16_000_000
    configuration.overheadBytes = 4_000_000
    var budget = try MemoryBudget(
      budget: configuration.budgetBytes, overhead: configuration.overheadBytes)
    try budget.reserve("sink buffers", bytes: sink.bufferBytes)
    let pipeline = try Pipeline(
      configuration: configuration, tracks: tracks, payloadFormat: sink.payloadFormat,
      budget: budget, clock: clock)
    let lines = Mutex<Int>(0)
    let reporter = StatusReporter(
      pipeline: pipeline, clock: clock, writeLine: { _ in lines.withLock { $0 += 1 } })
    let control = ControlLoop(pipeline: pipeline, probe: NoProbe(), clock: clock)
    control.onEvent = { reporter.report($0, now: $1) }
    let sender = Sender(pipeline: pipeline, sink: sink)
    sender.onEvent = { reporter.report($0) }
    let driver = OutputDriver(sender: sender, tickers: [control, reporter])
    let thread = SenderThread(driver: driver, clock: clock)
    control.attach(thread.sink)
    reporter.attach(thread.sink)
    let replayer = Replayer(
      reader: DumpReader(source: try FileByteSource(path: Self.screen)), pipeline: pipeline,
      driver: driver, senderThread: thread, clock: clock, speed: .factor(8), control: control,
      reporter: reporter)
    replayer.drainTimeout = .seconds(2)

    // A third thread reads counters the whole time, as a host app's status display would.
    let done = Atomic<Bool>(false)
    let snapshots = Atomic<Int>(0)
    let peak = Atomic<Int>(0)
    let reader = Thread {
      while !done.load(ordering: .acquiring) {
        let snapshot = pipeline.snapshot()
        peak.store(max(peak.load(ordering: .relaxed), snapshot.ledger), ordering: .relaxed)
        _ = pipeline.tier
        snapshots.add(1, ordering: .relaxed)
      }
    }
    reader.start()
    let summary = replayer.run()
    done.store(true, ordering: .releasing)

    let s = summary.snapshot
    #expect(summary.sinkError == nil)
    #expect(s.totalAppended == 1202)
    #expect(s.totalAppended == s.totalSent + s.drops.total + s.inFlight)
    #expect(s.peakLedger <= s.budget)
    #expect(peak.load(ordering: .relaxed) <= s.budget)
    #expect(snapshots.load(ordering: .relaxed) > 0)
    #expect(lines.withLock { $0 } > 0)
    if bitsPerSecond < 1_000_000 { #expect(s.drops.total > 0) }
  }
}

private struct NoProbe: ResidentMemoryProbe {
  func residentBytes() -> Int? { nil }
}
