import Testing

@testable import IngestCore

private let second = TimeSpan.seconds(1)
private let nanosecond = TimeSpan.nanoseconds(1)

/// Offers units back to back on a virtual clock for `duration`; returns the bytes taken.
private func run(
  _ shaper: inout LinkShaper, unitBytes: Int, start: MonotonicInstant, duration: TimeSpan
) -> Int {
  var now = start
  var taken = 0
  var rounds = 0
  while now < start + duration {
    rounds += 1
    if let retry = shaper.admit(bytes: unitBytes, now: now) {
      #expect(retry > now)
      now = retry
    } else {
      taken += unitBytes
    }
    if rounds > 10_000_000 { break }
  }
  return taken
}

@Suite struct LinkShaperTests {
  @Test(arguments: [
    (8_000_000, 1316), (2_000_000, 188), (5_000_000, 60_000), (40_000_000, 7 * 188),
  ])
  func longRunRateMatchesTheConfiguredRate(bitsPerSecond: Int64, unitBytes: Int) {
    var shaper = LinkShaper(bitsPerSecond: bitsPerSecond)
    let taken = run(&shaper, unitBytes: unitBytes, start: .at(5 * second), duration: 10 * second)
    let expected = Double(bitsPerSecond) / 8 * 10
    #expect(abs(Double(taken) - expected) / expected < 0.02, "\(taken) vs \(expected)")
  }

  @Test func stallBlocksExactlyBetweenStartAndEnd() {
    var shaper = LinkShaper(stallStart: 2 * second, stallDuration: 3 * second)
    let origin = MonotonicInstant.at(7 * second)
    #expect(shaper.admit(bytes: 100, now: origin) == nil)  // the first offer sets the origin
    #expect(shaper.admit(bytes: 100, now: origin + 2 * second - nanosecond) == nil)
    #expect(shaper.admit(bytes: 100, now: origin + 2 * second) == origin + 5 * second)
    #expect(shaper.admit(bytes: 100, now: origin + 4 * second) == origin + 5 * second)
    #expect(shaper.admit(bytes: 100, now: origin + 5 * second - nanosecond) == origin + 5 * second)
    #expect(shaper.admit(bytes: 100, now: origin + 5 * second) == nil)
    #expect(shaper.admit(bytes: 100, now: origin + 60 * second) == nil)
  }

  @Test func stallAndRateTogether() {
    var shaper = LinkShaper(
      bitsPerSecond: 8_000_000, stallStart: 1 * second, stallDuration: 2 * second)
    let taken = run(&shaper, unitBytes: 1316, start: .at(second), duration: 10 * second)
    // Eight seconds of link at 1 MB/s, plus at most the 100 ms bucket after the outage.
    #expect(taken >= 7_840_000 && taken <= 8_260_000, "\(taken)")
  }

  @Test func unlimitedLinkTakesEverything() {
    var shaper = LinkShaper()
    #expect(!shaper.isActive)
    for step in 0..<1000 {
      #expect(shaper.admit(bytes: 1_000_000, now: .at(.nanoseconds(Int64(step)))) == nil)
    }
    #expect(LinkShaper(bitsPerSecond: 1).isActive)
    #expect(LinkShaper(stallStart: .zero, stallDuration: nanosecond).isActive)
  }
}
