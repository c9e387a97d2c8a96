import Testing

@testable import IngestSRT

/// The stream's own byte rate, by decode time rather than by when units were handed over.
@Suite struct SRTStreamRateTests {
  @Test func nothingSeenHasNoRate() {
    #expect(SRTStreamRate().bytesPerSecond == nil)
  }

  /// Before a whole second of media the bytes so far count over a whole second: the keyframe
  /// that starts a stream does not read as its rate.
  @Test func aPartialWindowCountsOverAWholeSecond() {
    var rate = SRTStreamRate()
    rate.observe(bytes: 600_000, dts: 0)
    #expect(rate.bytesPerSecond == 600_000)
    rate.observe(bytes: 100_000, dts: 1_500)
    #expect(rate.bytesPerSecond == 700_000)
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
    #expect(rate.bytesPerSecond == 50_000)
    rate.reset()
    #expect(rate.bytesPerSecond == nil)
  }
}
