import Testing

@testable import IngestCore

/// The drain rate as SRT's and RTMP's pacing read it: what the link acknowledged while data
/// waited, over intervals long enough to say so.
@Suite struct DrainRateTests {
  private let ms = TimeSpan.milliseconds(1)

  /// A loss on a 300 ms path holds the acknowledgements back for a round trip, then they come
  /// at once: one reading over the whole wait, at the link's rate, not zero then double.
  @Test func aLossWaitIsAveragedOverTheInterval() {
    var drain = DrainRate()
    var acknowledged: Int64 = 0
    for step in 0...60 {
      // 250 kB/s, delivered in bursts every 400 ms.
      if step % 8 == 0 { acknowledged += 100_000 }
      drain.observe(
        delivered: acknowledged, waiting: 50_000, now: .at(Int64(step) * 50 * ms),
        minimumInterval: 300 * ms)
    }
    let rate = drain.bytesPerSecond ?? 0
    #expect(abs(rate - 250_000) < 40_000, "\(rate)")
  }

  /// A 1.5 s blackout (nothing acknowledged) and the backlog that goes out after it are no
  /// reading: the rate stays what the link carried before.
  @Test func aBlackoutAndItsBacklogAreNoReading() {
    var drain = DrainRate()
    var acknowledged: Int64 = 0
    var now = MonotonicInstant.origin
    func run(until end: TimeSpan, bytesPerStep: Int64) {
      while now < .at(end) {
        acknowledged += bytesPerStep
        drain.observe(delivered: acknowledged, waiting: 20_000, now: now, minimumInterval: 40 * ms)
        now += 20 * ms
      }
    }
    run(until: 5_000 * ms, bytesPerStep: 6_000)  // 300 kB/s
    let before = drain.bytesPerSecond ?? 0
    #expect(abs(before - 300_000) < 10_000)
    run(until: 6_500 * ms, bytesPerStep: 0)
    run(until: 6_600 * ms, bytesPerStep: 60_000)  // the backlog at once
    #expect(
      abs((drain.bytesPerSecond ?? 0) - before) < 0.1 * before, "\(drain.bytesPerSecond ?? 0)")
    run(until: 8_000 * ms, bytesPerStep: 6_000)
    #expect(abs((drain.bytesPerSecond ?? 0) - 300_000) < 10_000)
  }

  /// During a blackout messages go on entering the send buffer before they leave, so the
  /// acknowledged figure (sent less buffered) dips and comes back: no delivery, and no reading.
  @Test func aDipInTheDeliveredFigureIsNoReading() {
    var drain = DrainRate()
    var acknowledged: Int64 = 0
    var now = MonotonicInstant.origin
    while now < .at(5_000 * ms) {
      acknowledged += 6_000  // 300 kB/s
      drain.observe(delivered: acknowledged, waiting: 20_000, now: now, minimumInterval: 40 * ms)
      now += 20 * ms
    }
    let before = drain.bytesPerSecond ?? 0
    // 1.5 s dark: every 100 ms a message is queued (the figure dips by it), then sent (back).
    for step in 0..<75 {
      let dip: Int64 = step % 5 == 0 ? 1_316 : 0
      drain.observe(
        delivered: acknowledged - dip, waiting: 20_000 + step * 1_316, now: now,
        minimumInterval: 40 * ms)
      now += 20 * ms
    }
    #expect(
      abs((drain.bytesPerSecond ?? 0) - before) < 0.1 * before, "\(drain.bytesPerSecond ?? 0)")
  }

  /// A keyframe handed over at once dips the figure by its size for longer than the longest
  /// interval (a slow link sends it over seconds); its leaving brings the figure back, which is
  /// no delivery: the rate stays the link's.
  @Test func aLongDipAndItsRecoveryAreNoDelivery() {
    var drain = DrainRate()
    var acknowledged: Int64 = 0
    var now = MonotonicInstant.origin
    func run(for span: TimeSpan, dip: (TimeSpan) -> Int64) {
      let start = now
      while now - start < span {
        acknowledged += 3_200  // 160 kB/s
        drain.observe(
          delivered: acknowledged - dip(now - start), waiting: 50_000, now: now,
          minimumInterval: 80 * ms)
        now += 20 * ms
      }
    }
    run(for: 5_000 * ms) { _ in 0 }
    // 200 kB queued at once, leaving over 2.5 s while the link goes on delivering.
    run(for: 2_500 * ms) { elapsed in 200_000 - Int64(elapsed.inSeconds * 80_000) }
    run(for: 2_000 * ms) { _ in 0 }
    let rate = drain.bytesPerSecond ?? 0
    #expect(rate < 1.2 * 160_000, "\(rate)")
    #expect(rate > 0.8 * 160_000, "\(rate)")
  }
}
