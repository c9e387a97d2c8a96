import Testing

@testable import IngestCore

/// The path's round trip: a windowed minimum that follows a handover (an outage) or a step
/// that stays, and does not take a queue that grows or drains for a new distance. Readings five
/// times a second on a virtual clock.
@Suite struct PathRoundTripTests {
  private let tick = TimeSpan.milliseconds(200)

  /// 0 to `amplitude`, varying from reading to reading (jitter without randomness).
  private func wobble(_ t: Double, _ amplitude: Double) -> Double {
    Double(Int((t * 5).rounded()) * 7 % 5) / 4 * amplitude
  }

  /// Feeds `rtt(t)` (t in seconds) from `from` to `to`, with `outage(t)`.
  private func feed(
    _ path: inout PathRoundTrip, from: Double, to: Double,
    outage: (Double) -> Bool = { _ in false }, rtt: (Double) -> Double?
  ) -> [(Double, PathRoundTrip.Change)] {
    var changes: [(Double, PathRoundTrip.Change)] = []
    var now = MonotonicInstant.at(TimeSpan(seconds: from))
    while now < .at(TimeSpan(seconds: to)) {
      let t = now.sinceOrigin.inSeconds
      if let change = path.observe(rtt(t), at: now, outage: outage(t)) {
        changes.append((t, change))
      }
      now += tick
    }
    return changes
  }

  @Test func aSteadyPathIsItsOwnBaseline() {
    var path = PathRoundTrip()
    let changes = feed(&path, from: 0, to: 30) { t in 35 + wobble(t, 10) }
    #expect(changes.isEmpty)
    #expect(path.baseline(at: .at(.seconds(30))) == 35)
  }

  /// A handover: 1.5 s dark, then 180 ms where 40 ms was. The window starts again after the
  /// outage and its settling time, so the old 40 ms is gone at once, not after 10 s.
  @Test func anOutageStartsTheBaselineAgain() {
    var path = PathRoundTrip()
    _ = feed(&path, from: 0, to: 20) { _ in 40 }
    let changes = feed(&path, from: 20, to: 30, outage: { $0 < 21.5 }) { t in
      // libsrt's figure right after the outage is still the old path's.
      t < 21.6 ? 40 : 180
    }
    #expect(changes.map(\.1) == [.outage])
    #expect(path.baseline(at: .at(.milliseconds(22400))) == 180)
    #expect(path.baseline(at: .at(.seconds(30))) == 180)
  }

  /// libsrt's smoothed figure takes most of a second after a blackout to move to the new
  /// path (41, 59, 133, 181 ms): the window starts from where it settled, not from 133 ms,
  /// which would have counted 48 ms of the new distance as queue for 10 s.
  @Test func afterAnOutageTheBaselineWaitsForTheFigureToSettle() {
    var path = PathRoundTrip()
    _ = feed(&path, from: 0, to: 20) { _ in 41 }
    _ = feed(&path, from: 20, to: 30, outage: { $0 < 21.6 }) { t in
      switch t {
      case ..<21.9: 41
      case ..<22.1: 59
      case ..<22.3: 133
      default: 181
      }
    }
    #expect(path.baseline(at: .at(.seconds(30))) == 181)
  }

  /// No outage, the round trip steps from 40 ms to 180 ms and stays: followed within a few
  /// seconds (the last second's minimum must show it, then stand for the hold).
  @Test func aStepThatStaysIsFollowed() {
    var path = PathRoundTrip()
    _ = feed(&path, from: 0, to: 20) { _ in 40 }
    let changes = feed(&path, from: 20, to: 30) { t in t < 20.4 ? 40 : 180 + wobble(t, 6) }
    #expect(changes.count == 1)
    #expect(changes.first?.1 == .step)
    let at = changes.first?.0 ?? 99
    #expect(at - 20.4 <= 5, "followed at \(at) s")
    #expect((path.baseline(at: .at(.seconds(30))) ?? 0) >= 175)
  }

  /// A queue that grows (we send more than the link takes) or drains is no new distance: the
  /// baseline stays at the path's own round trip.
  @Test func aGrowingOrDrainingQueueIsNotFollowed() {
    var path = PathRoundTrip()
    _ = feed(&path, from: 0, to: 10) { _ in 40 }
    // 100 ms more every second for 3 s, then draining for 3 s, then again.
    let changes = feed(&path, from: 10, to: 40) { t in
      let phase = (t - 10).truncatingRemainder(dividingBy: 6)
      return 40 + (phase < 3 ? 100 * phase : 300 - 100 * (phase - 3))
    }
    #expect(changes.isEmpty)
    #expect(path.baseline(at: .at(.seconds(40))) == 40)
  }

  /// A bottleneck's queue that builds up over seconds while the rate climbs to the link's
  /// capacity, then stands while the rate stays there (3 to 60 ms over 5 s, then flat): no
  /// new distance, though flat for longer than the hold. The same level reached at once is.
  @Test func aQueueThatBuiltUpSlowlyAndStandsIsNotFollowed() {
    var path = PathRoundTrip()
    _ = feed(&path, from: 0, to: 10) { _ in 3 }
    let changes = feed(&path, from: 10, to: 19) { t in
      t < 15 ? 3 + 57 * (t - 10) / 5 : 60 + wobble(t, 4)
    }
    #expect(changes.isEmpty, "\(changes)")
    #expect(path.baseline(at: .at(.seconds(19))) == 3)

    var stepped = PathRoundTrip()
    _ = feed(&stepped, from: 0, to: 10) { _ in 3 }
    let step = feed(&stepped, from: 10, to: 19) { t in t < 10.4 ? 3 : 60 + wobble(t, 4) }
    #expect(step.map(\.1) == [.step])
  }

  /// Without readings (libsrt's initial figure left out by the caller) there is no baseline;
  /// a short outage changes nothing.
  @Test func noReadingNoBaselineAndAShortOutageKeepsIt() {
    var path = PathRoundTrip()
    _ = feed(&path, from: 0, to: 1) { _ in nil }
    #expect(path.baseline(at: .at(.seconds(1))) == nil)
    _ = feed(&path, from: 1, to: 5) { _ in 300 }
    let changes = feed(&path, from: 5, to: 8, outage: { $0 >= 6 && $0 < 6.6 }) { _ in 300 }
    #expect(changes.isEmpty)
    #expect(path.baseline(at: .at(.seconds(8))) == 300)
  }
}
