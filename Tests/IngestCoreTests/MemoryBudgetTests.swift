import Testing

@testable import IngestCore

@Suite struct MemoryBudgetTests {
  @Test func availableAndLedgerArithmetic() throws {
    var budget = try MemoryBudget(budget: 50_000_000, overhead: 20_000_000)
    #expect(budget.available == 30_000_000)
    try budget.reserve("reader", bytes: 1_000_000)
    try budget.reserve("sink", bytes: 2_500_000)
    #expect(budget.fixedBytes == 3_500_000)
    #expect(budget.available == 26_500_000)
    #expect(budget.entries.map(\.name) == ["reader", "sink"])
    #expect(budget.ledger(ringBytes: 0) == 23_500_000)
    #expect(budget.ledger(ringBytes: budget.available) == 50_000_000)
  }

  @Test func reservationBeyondTheBudgetThrowsNamingTheBuffer() throws {
    var budget = try MemoryBudget(budget: 1000, overhead: 400)
    try budget.reserve("scratch", bytes: 500)
    let before = budget.entries
    #expect(throws: BudgetError.exceeded(name: "ring records", bytes: 101, available: 100)) {
      try budget.reserve("ring records", bytes: 101)
    }
    #expect(budget.entries == before)
    #expect(budget.available == 100)
    #expect(throws: BudgetError.exceeded(name: "negative", bytes: -1, available: 100)) {
      try budget.reserve("negative", bytes: -1)
    }
    try budget.reserve("exact", bytes: 100)
    #expect(budget.available == 0)
    let error = BudgetError.exceeded(name: "ring records", bytes: 101, available: 100)
    #expect(error.description.contains("ring records"))
  }

  @Test func overheadMustLeaveRoom() {
    #expect(throws: BudgetError.overheadExceedsBudget(budget: 100, overhead: 100)) {
      try MemoryBudget(budget: 100, overhead: 100)
    }
    #expect(throws: BudgetError.overheadExceedsBudget(budget: 0, overhead: 0)) {
      try MemoryBudget(budget: 0, overhead: 0)
    }
    #expect(throws: BudgetError.overheadExceedsBudget(budget: 100, overhead: -1)) {
      try MemoryBudget(budget: 100, overhead: -1)
    }
  }

  @Test func pipelineRefusesBuffersThatDoNotFit() throws {
    let tracks = CoreFixtures.allTracks
    var configuration = PipelineConfiguration()
    configuration.recordCapacity = 1_000_000
    let budget = try MemoryBudget(budget: 1_000_000, overhead: 100_000)
    do {
      _ = try Pipeline(
        configuration: configuration, tracks: tracks, payloadFormat: .accessUnits, budget: budget,
        clock: VirtualClock())
      Issue.record("a record table larger than the budget was accepted")
    } catch {
      guard case .exceeded(let name, _, _) = error else {
        Issue.record("unexpected \(error)")
        return
      }
      #expect(name == "ring records")
    }
    configuration.recordCapacity = 16
    // Units are packetized in place in the ring: a large sample limit reserves no scratch.
    configuration.maximumSampleBytes = 2_000_000
    let pipeline = try Pipeline(
      configuration: configuration, tracks: tracks, payloadFormat: .transportStream,
      budget: budget, clock: VirtualClock())
    #expect(pipeline.budget.entries.map(\.name) == ["ring records"])
    // What fits leaves the ring the rest: the ledger starts at overhead + fixed buffers.
    let snapshot = pipeline.snapshot()
    #expect(snapshot.ledger == 100_000 + pipeline.budget.fixedBytes)
    #expect(snapshot.budget == 1_000_000)
  }
}
