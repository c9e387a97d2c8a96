import IngestCore
import Testing

@Suite struct BitRateTests {
  @Test func ordinaryRate() {
    #expect(BitRate.bitsPerSecond(bytes: 375_000, over: .seconds(1)) == 3_000_000)
    #expect(BitRate.bitsPerSecond(bytes: 187_500, over: .milliseconds(500)) == 3_000_000)
  }

  /// An hour of a 3 Mb/s stream is 1.35 GB: `bytes * 8 * 1e9` no longer fits in 64 bits, and
  /// the control loop trapped on it at the end of a one-hour replay.
  @Test func anHourOfAStreamDoesNotOverflow() {
    let hour = TimeSpan.seconds(3_600)
    #expect(BitRate.bitsPerSecond(bytes: 1_350_000_000, over: hour) == 3_000_000)
    #expect(BitRate.bitsPerSecond(bytes: 1_500_000_000, over: .milliseconds(500)) == 24_000_000_000)
  }

  @Test func degenerateIntervalsSaturate() {
    #expect(BitRate.bitsPerSecond(bytes: 1_000, over: .zero) == 8_000_000_000_000)
    #expect(BitRate.bitsPerSecond(bytes: .max, over: .nanoseconds(1)) == .max)
  }
}
