import Testing

@testable import IngestCore

/// Pipelines of several outputs under one budget: each ring has its share of the arena, and
/// the ledger each reports counts every ring.
@Suite struct RingShareTests {
  private func sharedPipelines() throws -> (Pipeline, Pipeline, MemoryBudget, VirtualClock) {
    var configuration = PipelineConfiguration()
    configuration.budgetBytes = 4_000_000
    configuration.overheadBytes = 1_000_000
    configuration.recordCapacity = 256
    // Larger than a ring's share, so the share (not the sample limit) is what refuses.
    configuration.maximumSampleBytes = 4_000_000
    var budget = try MemoryBudget(budget: 4_000_000, overhead: 1_000_000)
    for output in 1...2 {
      try budget.reserve(
        "output \(output) ring records", bytes: SendRing.recordTableBytes(capacity: 256))
    }
    let share = RingShare(ledger: RingLedger(), arenaBytes: budget.available / 2)
    let clock = VirtualClock()
    let make = { () throws(BudgetError) -> Pipeline in
      try Pipeline(
        configuration: configuration, tracks: CoreFixtures.allTracks,
        payloadFormat: .accessUnits, budget: budget, clock: clock, share: share)
    }
    return (try make(), try make(), budget, clock)
  }

  @Test func theLedgerCountsEveryRing() throws {
    let (first, second, budget, _) = try sharedPipelines()
    let base = budget.ledger(ringBytes: 0)
    #expect(
      first.append(CoreFixtures.video(frame: 0, key: true, payload: CoreFixtures.idr(fill: 1000))))
    let afterFirst = first.snapshot().ledger
    #expect(afterFirst > base)
    #expect(
      second.append(CoreFixtures.video(frame: 0, key: true, payload: CoreFixtures.idr(fill: 1000))))
    // The second pipeline's ledger holds both rings' bytes; the first sees them on its next change.
    let both = second.snapshot().ledger
    #expect(both - base == 2 * (afterFirst - base))
    // Sending from one ring lowers the ledger of the run.
    let unit = try #require(first.beginSend())
    first.completeSend(unit, bytes: 1000)
    #expect(first.snapshot().ledger == afterFirst)
    // The run's peak is seen by the pipeline whose change made it.
    #expect(second.snapshot().peakLedger == both)
  }

  @Test func eachRingGetsItsShareOfTheArena() throws {
    let (first, _, budget, _) = try sharedPipelines()
    // A frame larger than the share fits the budget's remainder but not this ring: refused.
    let tooLarge = budget.available / 2 + 1
    #expect(
      !first.append(
        CoreFixtures.video(frame: 0, key: true, payload: CoreFixtures.idr(fill: tooLarge))))
  }

  @Test func aShareLargerThanTheBudgetLeavesIsRefused() throws {
    let budget = try MemoryBudget(budget: 4_000_000, overhead: 1_000_000)
    let share = RingShare(ledger: RingLedger(), arenaBytes: budget.available + 1)
    #expect(throws: BudgetError.self) {
      try Pipeline(
        configuration: PipelineConfiguration(), tracks: CoreFixtures.allTracks,
        payloadFormat: .accessUnits, budget: budget, clock: VirtualClock(), share: share)
    }
  }
}
