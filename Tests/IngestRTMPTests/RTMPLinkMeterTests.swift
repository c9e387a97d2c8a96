import IngestCore
import Testing

@testable import IngestRTMP

/// What the RTMP sink reads of its socket: the acknowledged rate, the queue, and the bound on
/// what the kernel may hold.
@Suite struct RTMPLinkMeterTests {
  private let ms = TimeSpan.milliseconds(1)

  /// 125,000 bytes a second acknowledged while 100 KB waited: 100 KB is 800 ms of queue,
  /// over the flight (20 ms) and half a second: the socket is full.
  @Test func aSlowLinkFillsTheSocketBound() {
    var meter = RTMPLinkMeter()
    meter.reset(now: .origin)
    for step in 0...40 {
      meter.wrote(12_500)
      meter.observe(unacknowledged: 100_000, now: .at(Int64(step) * 100 * ms))
    }
    let rate = meter.drainBytesPerSecond ?? 0
    #expect(abs(rate - 125_000) < 2_000, "\(rate)")
    #expect(meter.isQueueFull(unacknowledged: 100_000, roundTripMilliseconds: 20))
    #expect(!meter.isQueueFull(unacknowledged: 50_000, roundTripMilliseconds: 20))
    let estimate = meter.estimate(
      now: .at(4_000 * ms), unacknowledged: 100_000, roundTripMilliseconds: 20)
    #expect(abs(estimate.queueMilliseconds - 800) < 20, "\(estimate.queueMilliseconds)")
    #expect(abs((estimate.deliveredBitsPerSecond ?? 0) - 1_000_000) < 20_000)
    #expect(estimate.roundTripMilliseconds == 20)
  }

  /// Nothing acknowledged while data waits: the stall grows; an empty socket is never stalled.
  @Test func aStalledSocketShowsNoProgress() {
    var meter = RTMPLinkMeter()
    meter.reset(now: .origin)
    meter.wrote(10_000)
    meter.observe(unacknowledged: 10_000, now: .at(100 * ms))
    meter.observe(unacknowledged: 10_000, now: .at(900 * ms))
    #expect(meter.sinceProgress(now: .at(900 * ms)) == 900 * ms)
    meter.observe(unacknowledged: 0, now: .at(1_000 * ms))
    #expect(meter.sinceProgress(now: .at(1_000 * ms)) == .zero)
  }

  /// Before a rate is measured the bound cannot be judged: nothing is held back.
  @Test func withoutARateNothingIsHeldBack() {
    let meter = RTMPLinkMeter()
    #expect(!meter.isQueueFull(unacknowledged: 400_000, roundTripMilliseconds: 5))
  }
}
