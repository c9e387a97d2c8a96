import Testing

@testable import IngestSRT

/// The byte bound on libsrt's send buffer: what the link drains in half the latency.
@Suite struct SRTQueueLimitTests {
  private let ms: Int64 = 1_000_000

  @Test func beforeAMeasurementTheFloorHolds() {
    let limit = SRTQueueLimit()
    #expect(limit.limitBytes(latencyMilliseconds: 200) == SRTQueueLimit.floorBytes)
  }

  /// 162,500 bytes a second drained while data waited (a 1.3 Mb/s link): half of a 200 ms
  /// latency is 16,250 bytes.
  @Test func aBusyLinkSetsTheLimitToHalfTheLatencyAtItsRate() {
    var limit = SRTQueueLimit()
    var acknowledged: Int64 = 0
    for step in 0...20 {
      limit.observe(
        acknowledgedBytes: acknowledged, bufferedBytes: 15_000, now: Int64(step) * 100 * ms)
      acknowledged += 16_250
    }
    let bytes = limit.limitBytes(latencyMilliseconds: 200)
    #expect(abs(bytes - 16_250) < 200, "\(bytes)")
    #expect(limit.limitBytes(latencyMilliseconds: 1000) > 5 * bytes - 1000)
  }

  /// Intervals that start or end with an empty buffer measure what was offered, not what the
  /// link can take: they change nothing.
  @Test func anIdleLinkIsNotMeasured() {
    var limit = SRTQueueLimit()
    limit.observe(acknowledgedBytes: 0, bufferedBytes: 0, now: 0)
    limit.observe(acknowledgedBytes: 1_000, bufferedBytes: 0, now: 100 * ms)
    limit.observe(acknowledgedBytes: 2_000, bufferedBytes: 5_000, now: 200 * ms)
    #expect(limit.drainBytesPerSecond == nil)
    limit.observe(acknowledgedBytes: 30_000, bufferedBytes: 5_000, now: 300 * ms)
    #expect(limit.drainBytesPerSecond == 280_000)
  }

  /// A slower link lowers the limit within a few intervals; it never goes below the floor.
  @Test func aSlowerLinkLowersTheLimitDownToTheFloor() {
    var limit = SRTQueueLimit()
    var acknowledged: Int64 = 0
    var now: Int64 = 0
    for _ in 0...10 {
      limit.observe(acknowledgedBytes: acknowledged, bufferedBytes: 9_000, now: now)
      acknowledged += 50_000
      now += 100 * ms
    }
    let fast = limit.limitBytes(latencyMilliseconds: 200)
    for _ in 0...10 {
      limit.observe(acknowledgedBytes: acknowledged, bufferedBytes: 9_000, now: now)
      acknowledged += 500
      now += 100 * ms
    }
    #expect(fast > 40_000)
    #expect(limit.limitBytes(latencyMilliseconds: 200) == SRTQueueLimit.floorBytes)
  }

  @Test func shortIntervalsWaitForALongerOne() {
    var limit = SRTQueueLimit()
    limit.observe(acknowledgedBytes: 0, bufferedBytes: 5_000, now: 0)
    limit.observe(acknowledgedBytes: 10_000, bufferedBytes: 5_000, now: 10 * ms)
    #expect(limit.drainBytesPerSecond == nil)
    limit.observe(acknowledgedBytes: 20_000, bufferedBytes: 5_000, now: 100 * ms)
    #expect(limit.drainBytesPerSecond == 200_000)
  }

  @Test func aNewConnectionForgetsTheRate() {
    var limit = SRTQueueLimit()
    limit.observe(acknowledgedBytes: 0, bufferedBytes: 5_000, now: 0)
    limit.observe(acknowledgedBytes: 100_000, bufferedBytes: 5_000, now: 100 * ms)
    limit.reset()
    #expect(limit.drainBytesPerSecond == nil)
    #expect(limit.limitBytes(latencyMilliseconds: 200) == SRTQueueLimit.floorBytes)
  }
}
