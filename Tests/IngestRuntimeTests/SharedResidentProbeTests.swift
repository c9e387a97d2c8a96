import IngestCore
import IngestPOSIX
import Synchronization
import Testing

@testable import IngestRuntime

/// The outputs of a run share one memory reading while it is fresh.
@Suite struct SharedResidentProbeTests {
  private final class CountingProbe: ResidentMemoryProbe {
    let readings = Atomic<Int>(0)
    func residentBytes() -> Int? { 1_000 * readings.add(1, ordering: .relaxed).newValue }
  }

  @Test func aFreshReadingServesEveryOutputThatAsks() {
    let counting = CountingProbe()
    let shared = SharedResidentProbe(counting, clock: SystemClock(), maximumAge: .seconds(60))
    #expect(shared.residentBytes() == 1_000)
    #expect(shared.residentBytes() == 1_000)
    #expect(shared.residentBytes() == 1_000)
    #expect(counting.readings.load(ordering: .relaxed) == 1)
  }

  @Test func anOldReadingIsTakenAgain() {
    let counting = CountingProbe()
    let shared = SharedResidentProbe(counting, clock: SystemClock(), maximumAge: .zero)
    #expect(shared.residentBytes() == 1_000)
    #expect(shared.residentBytes() == 2_000)
    #expect(counting.readings.load(ordering: .relaxed) == 2)
  }
}
