import Testing

@testable import IngestSRT

/// The stream's own byte rate, by decode time rather than by when units were handed over.
@Suite struct SRTStreamRateTests {
  @Test func nothingSeenHasNoRate() {
    #expect(SRTStreamRate().bytesPerSecond == nil)
  }

  /// Before a whole second of media the bytes so far count over the media they span, at least
  /// a tenth of a second: the keyframe that starts a stream reads as about its rate, and the
  /// first units of a backlog as the media's rate.
  @Test func aPartialWindowCountsOverItsOwnSpan() {
    var rate = SRTStreamRate()
    rate.observe(bytes: 60_000, dts: 0)
    #expect(rate.bytesPerSecond == 600_000)
    // 0.3 s of media (27,000 ticks): 90,000 bytes over it.
    rate.observe(bytes: 15_000, dts: 13_500)
    rate.observe(bytes: 15_000, dts: 27_000)
    #expect(rate.bytesPerSecond == 300_000)
  }

  /// 60 frames a second of 100,000 bytes: 6 MB per second of media, however fast they were
  /// handed over (a backlog drained at once).
  @Test func aFullWindowIsTheMediaRate() {
    var rate = SRTStreamRate()
    for frame in 0...60 { rate.observe(bytes: 100_000, dts: Int64(frame) * 1_500) }
    #expect(rate.bytesPerSecond.map { abs($0 - 6_100_000) < 1 } == true)
    // The next window follows a lower rate once it is full.
    for frame in 61...121 { rate.observe(bytes: 10_000, dts: Int64(frame) * 1_500) }
    #expect(rate.bytesPerSecond.map { abs($0 - 600_000) < 1 } == true)
  }

  /// A jump of the timeline (a discontinuity) restarts the window instead of reading as a
  /// long, sparse second.
  @Test func aTimelineJumpRestartsTheWindow() {
    var rate = SRTStreamRate()
    rate.observe(bytes: 50_000, dts: 0)
    rate.observe(bytes: 50_000, dts: 10_000_000)
    #expect(rate.bytesPerSecond == 500_000)
    rate.reset()
    #expect(rate.bytesPerSecond == nil)
  }
}
