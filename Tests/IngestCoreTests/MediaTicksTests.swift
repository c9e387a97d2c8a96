import IngestCore
import Testing

@Suite struct MediaTicksTests {
  @Test func constructorsAndConstants() {
    #expect(MediaTicks.perSecond == 90_000)
    #expect(MediaTicks.perMillisecond == 90)
    #expect(MediaTicks.seconds(5).value == 450_000)
    #expect(MediaTicks.seconds(-1).value == -90_000)
    #expect(MediaTicks.milliseconds(33).value == 2_970)
    #expect(MediaTicks.zero.value == 0)
    #expect(MediaTime.ticks90kTimescale == 90_000)
    #expect(MediaTime.nanosecondTimescale == 1_000_000_000)
  }

  @Test func constructorsAndArithmeticSaturate() {
    #expect(MediaTicks.seconds(.max).value == .max)
    #expect(MediaTicks.seconds(.min).value == .min)
    #expect(MediaTicks.milliseconds(Int64.max / 90 + 1).value == .max)
    #expect((MediaTicks(.max) + MediaTicks(1)).value == .max)
    #expect((MediaTicks(.min) - MediaTicks(1)).value == .min)
    #expect((MediaTicks(.max) * -2).value == .min)
    #expect(MediaTicks(3) + MediaTicks(4) == MediaTicks(7))
    #expect(MediaTicks(3) - MediaTicks(4) == MediaTicks(-1))
    #expect(MediaTicks(-1) < .zero)
  }

  /// As `ticks * 1_000_000_000 / 90_000` (and `TimeConversion.nanoseconds(ticks:)`): truncated
  /// toward zero, so one tick is 11 111 ns both ways.
  @Test func spanTruncatesTowardZero() {
    #expect(MediaTicks(1).span == .nanoseconds(11_111))
    #expect(MediaTicks(-1).span == .nanoseconds(-11_111))
    #expect(MediaTicks(9).span == .nanoseconds(100_000))
    #expect(MediaTicks(-10).span == .nanoseconds(-111_111))
    #expect(MediaTicks.seconds(1).span == .seconds(1))
    #expect(MediaTicks(3_003).span == .nanoseconds(33_366_666))
    #expect(MediaTicks(-3_003).span == .nanoseconds(-33_366_666))
    for ticks: Int64 in [0, 1, 2, 7, 8, 89_999, 1_234_567, 987_654_321] {
      #expect(MediaTicks(ticks).span.nanoseconds == ticks * 1_000_000_000 / 90_000)
      #expect(MediaTicks(-ticks).span.nanoseconds == -ticks * 1_000_000_000 / 90_000)
      #expect(TimeConversion.nanoseconds(ticks: ticks) == ticks * 100_000 / 9)
    }
  }

  @Test func spanSaturatesBeyondItsRange() {
    #expect(MediaTicks(.max).span == .max)
    #expect(MediaTicks(.min).span == .min)
    // The last tick count whose nanoseconds fit.
    let last = Int64.max / 100_000 * 9
    #expect(MediaTicks(last).span.nanoseconds == last / 9 * 100_000)
  }

  /// Floor, not truncation: a negative span rounds away from zero, as `TimeConversion.ticks90k`
  /// rounds a time in nanoseconds.
  @Test func ticksFromSpanRoundDown() {
    #expect(MediaTicks(flooring: .nanoseconds(11_111)) == MediaTicks(0))
    #expect(MediaTicks(flooring: .nanoseconds(11_112)) == MediaTicks(1))
    #expect(MediaTicks(flooring: .nanoseconds(-1)) == MediaTicks(-1))
    #expect(MediaTicks(flooring: .nanoseconds(-11_112)) == MediaTicks(-2))
    #expect(MediaTicks(flooring: .seconds(-2)) == MediaTicks.seconds(-2))
    #expect(
      MediaTicks(flooring: .max).value == Int64.max / 100_000 * 9 + (Int64.max % 100_000) * 9
        / 100_000)
    for nanoseconds: Int64 in [0, 1, -1, 33_366_667, -33_366_667, .max, .min, .min + 1] {
      let time = MediaTime(value: nanoseconds, timescale: MediaTime.nanosecondTimescale)
      #expect(
        MediaTicks(flooring: .nanoseconds(nanoseconds)).value == TimeConversion.ticks90k(time),
        "\(nanoseconds)")
    }
  }

  @Test func readingsInSeconds() {
    #expect(MediaTicks(135_000).inSeconds == 1.5)
    #expect(MediaTicks(-45_000).inSeconds == -0.5)
    #expect(MediaTicks(1_234_567).inSeconds == Double(1_234_567) / 90_000)
    #expect(MediaTicks(179_999).wholeSeconds == 1)
    #expect(MediaTicks(-179_999).wholeSeconds == -1)
  }
}
