import Testing

@testable import IngestCore

/// A link with a capacity and a FIFO queue in front of it, as a shaped link (tbf) with SRT on
/// top looks to the sender: what does not fit waits, the wait is the queue, and what waited
/// longer than the latency is dropped (SRT's too-late drop).
private struct SimulatedLink {
  var capacity: Double
  var latencyMilliseconds: Double = 200
  var baseRoundTripMilliseconds: Double = 20
  var queueBits: Double = 0
  var deliveredBits: Double = 0

  /// Offers `bits` during `seconds`; returns the estimate at the end.
  mutating func step(offering bits: Double, seconds: Double, now: Int64) -> LinkEstimate {
    queueBits += bits
    let sent = min(queueBits, capacity * seconds)
    queueBits -= sent
    deliveredBits += sent
    let limit = capacity * latencyMilliseconds / 1000
    if queueBits > limit { queueBits = limit }
    let queueMilliseconds = capacity > 0 ? queueBits / capacity * 1000 : latencyMilliseconds
    return LinkEstimate(
      time: now, queueMilliseconds: queueMilliseconds + baseRoundTripMilliseconds,
      queueBytes: Int(queueBits / 8),
      roundTripMilliseconds: baseRoundTripMilliseconds + queueMilliseconds,
      deliveredBitsPerSecond: sent / seconds, latencyMilliseconds: latencyMilliseconds)
  }
}

/// An encoder that takes a new target from the next frame and misses it by up to ±10%.
private struct FakeEncoder {
  var target: Double
  var random = SplitMix(seed: 7)

  mutating func bits(seconds: Double) -> Double {
    target * seconds * (0.9 + 0.2 * random.unit())
  }
}

private struct SplitMix {
  var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func unit() -> Double {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return Double((z ^ (z >> 31)) >> 11) / Double(1 << 53)
  }
}

/// One sample of a simulated run.
private struct Sample {
  var seconds: Double
  var target: Int
  var frameRate: Int
  var keyframesOnly: Bool
  var queueMilliseconds: Double
}

private let nominal = 2_000_000

/// Runs the loop for `seconds` at 10 estimates a second; `capacity` gives the link's bits per
/// second at each time.
private func simulate(seconds: Double, capacity: (Double) -> Double) -> (
  [Sample], [RateController.Decision]
) {
  var controller = RateController(configuration: .init(nominalBitsPerSecond: nominal))
  var link = SimulatedLink(capacity: capacity(0))
  var encoder = FakeEncoder(target: Double(nominal))
  var samples: [Sample] = []
  var decisions: [RateController.Decision] = []
  let tick = 0.1
  var t = 0.0
  while t < seconds {
    t += tick
    link.capacity = capacity(t)
    let estimate = link.step(
      offering: encoder.bits(seconds: tick), seconds: tick, now: Int64(t * 1e9))
    if let decision = controller.update(estimate) {
      decisions.append(decision)
      encoder.target = Double(decision.targetBitsPerSecond)
    }
    samples.append(
      Sample(
        seconds: t, target: controller.targetBitsPerSecond, frameRate: controller.frameRate,
        keyframesOnly: controller.keyframesOnly, queueMilliseconds: estimate.queueMilliseconds))
  }
  return (samples, decisions)
}

@Suite struct RateControllerTests {
  @Test func aFullLinkClimbsToTheNominalRateAndStays() {
    let (samples, decisions) = simulate(seconds: 60) { _ in Double(nominal) * 1.3 }
    // The start-up climb from 40% of the nominal rate takes a few steps, never a decrease.
    #expect(decisions.allSatisfy { $0.reason == .probe })
    #expect(samples.first { $0.target == nominal }.map(\.seconds) ?? 99 <= 5)
    #expect(samples.filter { $0.seconds >= 5 }.allSatisfy { $0.target == nominal })
    #expect(samples.allSatisfy { $0.frameRate == 30 && $0.queueMilliseconds < 100 })
  }

  @Test(arguments: [0.7, 0.5, 0.25])
  func settlesUnderTheCapacityAndStaysThere(share: Double) {
    let capacity = Double(nominal) * share
    let (samples, _) = simulate(seconds: 90) { _ in capacity }
    let settled = samples.filter { $0.seconds >= 5 }
    // After five seconds the target stays near the capacity (probing goes a little above it)
    // and the queue never reaches the latency, so nothing is dropped as too late...
    #expect(settled.allSatisfy { Double($0.target) <= capacity * 1.1 })
    #expect(settled.allSatisfy { $0.queueMilliseconds < 200 })
    // ...and it uses the link: it saws by no more than a fifth of the capacity.
    let steady = samples.filter { $0.seconds >= 30 }.map { Double($0.target) }
    #expect(steady.min()! >= capacity * 0.7)
    #expect(steady.max()! - steady.min()! <= capacity * 0.25)
    #expect(samples.allSatisfy { $0.frameRate == 30 && !$0.keyframesOnly })
  }

  @Test func neverUndershootsTheFloor() {
    let (samples, decisions) = simulate(seconds: 60) { _ in 150_000 }
    #expect(samples.allSatisfy { $0.target >= 300_000 })
    #expect(decisions.contains { $0.reason == .congestion })
  }

  @Test func atTheFloorTheFrameRateGoesThenKeyframesOnly() {
    let (samples, decisions) = simulate(seconds: 60) { _ in 120_000 }
    let reasons = decisions.map(\.reason)
    #expect(reasons.contains(.frameRateDown))
    #expect(reasons.contains(.keyframesOnly))
    // The frame rate goes only once the bitrate is at the floor.
    for decision in decisions where decision.reason == .frameRateDown {
      #expect(decision.targetBitsPerSecond == 300_000)
    }
    #expect(samples.last?.frameRate == 15)
    #expect(samples.last?.keyframesOnly == true)
  }

  @Test func aLinkJustUnderTheFloorLowersTheFrameRateButNotToKeyframesOnly() {
    let (samples, decisions) = simulate(seconds: 60) { _ in 250_000 }
    #expect(decisions.contains { $0.reason == .frameRateDown })
    #expect(!samples.contains { $0.keyframesOnly })
  }

  @Test func recoversAfterAStep() {
    // Nominal, then 30% for 20 s, then nominal again.
    let (samples, decisions) = simulate(seconds: 80) { t in
      t >= 20 && t < 40 ? Double(nominal) * 0.3 : Double(nominal) * 1.2
    }
    let duringDip = samples.filter { $0.seconds >= 26 && $0.seconds < 40 }
    #expect(duringDip.allSatisfy { Double($0.target) <= Double(nominal) * 0.3 * 1.05 })
    let back = samples.first { $0.seconds >= 40 && $0.target == nominal }
    #expect(back != nil)
    #expect((back?.seconds ?? 999) - 40 <= 30)
    #expect(decisions.contains { $0.reason == .probe })
    #expect(samples.filter { $0.seconds >= 75 }.allSatisfy { $0.target == nominal })
  }

  @Test func everyDecisionCarriesItsInputs() {
    let (_, decisions) = simulate(seconds: 20) { _ in Double(nominal) * 0.5 }
    let first = try! #require(decisions.first)
    #expect(first.reason == .congestion)
    #expect(first.link.deliveredBitsPerSecond != nil)
    #expect(first.targetBitsPerSecond < nominal)
    #expect(first.link.statusObject.rendered.contains("\"queue_ms\""))
  }
}
