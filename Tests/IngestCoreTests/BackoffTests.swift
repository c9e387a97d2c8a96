import Testing

@testable import IngestCore

@Suite struct BackoffTests {
  static let nominal: [TimeSpan] = [
    .milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(10),
    .seconds(10), .seconds(10),
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
      #expect(delay >= .seconds(8) && delay <= .seconds(12))
    }
  }

  @Test func resetStartsAgainFromTheInitialDelay() {
    var backoff = Backoff(seed: 7)
    for _ in 0..<6 { _ = backoff.next() }
    backoff.reset()
    #expect(backoff.attempts == 0)
    let delay = backoff.next()
    #expect(delay >= .milliseconds(400) && delay <= .milliseconds(600))
  }

  @Test func jitterSpreadsDelaysAndIsReproducible() {
    var a = Backoff(seed: 11)
    var b = Backoff(seed: 11)
    var firstDelays = Set<TimeSpan>()
    for _ in 0..<50 {
      let delay = a.next()
      #expect(delay == b.next())
      a.reset()
      b.reset()
      firstDelays.insert(delay)
    }
    // Fifty draws of ±100 ms around 500 ms are not all the same value.
    #expect(firstDelays.count > 10)
    #expect(firstDelays.min()! < .milliseconds(480) && firstDelays.max()! > .milliseconds(520))
  }

  @Test func manyAttemptsNeverOverflow() {
    var backoff = Backoff(seed: 3)
    for _ in 0..<10_000 { #expect(backoff.next() <= .seconds(12)) }
  }
}
