import Testing

@testable import IngestCore

private let second = TimeSpan.seconds(1)
private let nanosecond = TimeSpan.nanoseconds(1)

@Suite struct DegradationLadderTests {
  @Test func thresholdsStartEachTier() {
    for (pressure, tier) in [
      (0.79, Tier.normal), (0.80, .reducedBitrate), (0.85, .reducedFrameRate), (0.90, .noMic),
      (0.95, .keyframesOnly), (1.5, .keyframesOnly),
    ] {
      var ladder = DegradationLadder()
      let change = ladder.update(pressure: pressure, now: .origin)
      #expect(ladder.tier == tier, "\(pressure)")
      #expect(
        change == (tier == .normal ? nil : .init(from: .normal, to: tier, pressure: pressure)))
    }
  }

  @Test func jumpsUpToTheHighestTierReached() {
    var ladder = DegradationLadder()
    #expect(ladder.update(pressure: 0.82, now: .origin)?.to == .reducedBitrate)
    #expect(ladder.update(pressure: 0.97, now: .at(.nanoseconds(1)))?.from == .reducedBitrate)
    #expect(ladder.tier == .keyframesOnly)
    // Lower pressure above the recovery line changes nothing.
    #expect(ladder.update(pressure: 0.81, now: .at(.nanoseconds(2))) == nil)
    #expect(ladder.tier == .keyframesOnly)
  }

  @Test func stepsDownOneTierPerFiveSecondsBelowSeventyPercent() {
    var ladder = DegradationLadder()
    _ = ladder.update(pressure: 0.96, now: .origin)
    let start = 10 * second
    #expect(ladder.update(pressure: 0.5, now: .at(start)) == nil)
    #expect(ladder.update(pressure: 0.5, now: .at(start + 5 * second - nanosecond)) == nil)
    #expect(
      ladder.update(pressure: 0.5, now: .at(start + 5 * second))
        == .init(from: .keyframesOnly, to: .noMic, pressure: 0.5))
    // Each step needs a fresh hold.
    #expect(ladder.update(pressure: 0.1, now: .at(start + 10 * second - nanosecond)) == nil)
    #expect(ladder.update(pressure: 0.1, now: .at(start + 10 * second))?.to == .reducedFrameRate)
    #expect(ladder.update(pressure: 0.1, now: .at(start + 15 * second))?.to == .reducedBitrate)
    #expect(ladder.update(pressure: 0.1, now: .at(start + 20 * second))?.to == .normal)
    #expect(ladder.update(pressure: 0.0, now: .at(start + 60 * second)) == nil)
    #expect(ladder.tier == .normal)
  }

  @Test func holdRestartsWhenPressureRisesToSeventyPercent() {
    var ladder = DegradationLadder()
    _ = ladder.update(pressure: 0.86, now: .origin)
    #expect(ladder.update(pressure: 0.6, now: .at(1 * second)) == nil)
    #expect(ladder.update(pressure: 0.75, now: .at(4 * second)) == nil)  // hold broken
    #expect(ladder.update(pressure: 0.6, now: .at(6 * second)) == nil)  // hold starts again here
    #expect(ladder.update(pressure: 0.6, now: .at(10 * second)) == nil)
    #expect(ladder.update(pressure: 0.70, now: .at(10 * second + nanosecond)) == nil)  // exactly 70 %: broken
    #expect(ladder.update(pressure: 0.6, now: .at(11 * second)) == nil)
    #expect(ladder.update(pressure: 0.6, now: .at(16 * second - nanosecond)) == nil)
    #expect(ladder.update(pressure: 0.6, now: .at(16 * second))?.to == .reducedBitrate)
  }

  @Test func pressureOscillatingBetween71And84PercentDoesNotFlap() {
    var ladder = DegradationLadder()
    var changes: [DegradationLadder.Change] = []
    for step in 0..<1200 {
      let pressure = step % 2 == 0 ? 0.84 : 0.71
      if let change = ladder.update(pressure: pressure, now: .at(Int64(step) * .milliseconds(100)))
      {
        changes.append(change)
      }
    }
    #expect(changes == [.init(from: .normal, to: .reducedBitrate, pressure: 0.84)])
  }

  @Test func noStepDownWithoutATier() {
    var ladder = DegradationLadder()
    for step in 0..<100 {
      #expect(ladder.update(pressure: 0.2, now: .at(Int64(step) * second)) == nil)
    }
    #expect(ladder.tier == .normal)
  }
}

/// Link pressure (the ring's backlog, the sink's congestion) grades the ladder and ends as soon
/// as the link keeps up: a 2 s blackout costs a lower bitrate and frame rate for its length,
/// not keyframes only and twenty seconds of recovery.
@Suite struct DegradationLadderLinkTests {
  private let second = TimeSpan.seconds(1)
  private let nanosecond = TimeSpan.nanoseconds(1)

  @Test func linkPressureClimbsOneTierASecondUpToTheFrameRate() {
    var ladder = DegradationLadder()
    #expect(ladder.update(pressure: 0.5, linkPressure: 1, now: .origin)?.to == .reducedBitrate)
    #expect(ladder.update(pressure: 0.5, linkPressure: 1, now: .at(second / 2)) == nil)
    #expect(
      ladder.update(pressure: 0.5, linkPressure: 1, now: .at(second))?.to == .reducedFrameRate)
    // Never to the mic or keyframes only on the link alone.
    for step in 2...10 {
      #expect(ladder.update(pressure: 0.5, linkPressure: 1, now: .at(Int64(step) * second)) == nil)
    }
    #expect(ladder.tier == .reducedFrameRate)
  }

  @Test func aLinkThatKeepsUpAgainEndsItsTiersWithinASecond() {
    var ladder = DegradationLadder()
    _ = ladder.update(pressure: 0.5, linkPressure: 1, now: .origin)
    _ = ladder.update(pressure: 0.5, linkPressure: 1, now: .at(second))
    #expect(ladder.update(pressure: 0.5, linkPressure: 0.2, now: .at(2 * second)) == nil)
    let change = ladder.update(pressure: 0.5, linkPressure: 0.2, now: .at(3 * second))
    #expect(change?.from == .reducedFrameRate && change?.to == .normal)
  }

  @Test func memoryPressureStillJumpsAndHoldsAboveTheLink() {
    var ladder = DegradationLadder()
    _ = ladder.update(pressure: 0.5, linkPressure: 1, now: .origin)
    #expect(
      ladder.update(pressure: 0.97, linkPressure: 1, now: .at(.nanoseconds(1)))?.to
        == .keyframesOnly)
    // The link recovering does not take the memory tier down.
    _ = ladder.update(pressure: 0.97, linkPressure: 0, now: .at(2 * second))
    #expect(ladder.update(pressure: 0.97, linkPressure: 0, now: .at(4 * second)) == nil)
    #expect(ladder.tier == .keyframesOnly)
  }
}
