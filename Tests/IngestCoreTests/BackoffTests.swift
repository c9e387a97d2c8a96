import Testing

@testable import IngestCore

@Suite struct BackoffTests {
  static let nominal: [Int64] = [
    500_000_000, 1_000_000_000, 2_000_000_000, 4_000_000_000, 8_000_000_000, 10_000_000_000,
    10_000_000_000, 10_000_000_000,
  ]

  @Test(arguments: [UInt64(1), 2, 3, 0xDEAD_BEEF])
  func delaysGrowToTheCapWithTwentyPercentJitter(seed: UInt64) {
    var backoff = Backoff(seed: seed)
    for (attempt, nominal) in Self.nominal.enumerated() {
      let delay = backoff.next()
      #expect(delay >= nominal * 8 / 10 && delay <= nominal * 12 / 10, "attempt \(attempt)")
      #expect(backoff.attempts == attempt + 1)
    }
    for _ in 0..<100 {
      let delay = backoff.next()
      #expect(delay >= 8_000_000_000 && delay <= 12_000_000_000)
    }
  }

  @Test func resetStartsAgainFromTheInitialDelay() {
    var backoff = Backoff(seed: 7)
    for _ in 0..<6 { _ = backoff.next() }
    backoff.reset()
    #expect(backoff.attempts == 0)
    let delay = backoff.next()
    #expect(delay >= 400_000_000 && delay <= 600_000_000)
  }

  @Test func jitterSpreadsDelaysAndIsReproducible() {
    var a = Backoff(seed: 11)
    var b = Backoff(seed: 11)
    var firstDelays = Set<Int64>()
    for _ in 0..<50 {
      let delay = a.next()
      #expect(delay == b.next())
      a.reset()
      b.reset()
      firstDelays.insert(delay)
    }
    // Fifty draws of ±100 ms around 500 ms are not all the same value.
    #expect(firstDelays.count > 10)
    #expect(firstDelays.min()! < 480_000_000 && firstDelays.max()! > 520_000_000)
  }

  @Test func manyAttemptsNeverOverflow() {
    var backoff = Backoff(seed: 3)
    for _ in 0..<10_000 { #expect(backoff.next() <= 12_000_000_000) }
  }
}
