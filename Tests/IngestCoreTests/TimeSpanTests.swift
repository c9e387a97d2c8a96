import IngestCore
import Testing

@Suite struct TimeSpanTests {
  @Test func constructorsScaleToNanoseconds() {
    #expect(TimeSpan.nanoseconds(7).nanoseconds == 7)
    #expect(TimeSpan.microseconds(3).nanoseconds == 3_000)
    #expect(TimeSpan.milliseconds(-250).nanoseconds == -250_000_000)
    #expect(TimeSpan.seconds(2).nanoseconds == 2 * TimeSpan.nanosecondsPerSecond)
    #expect(TimeSpan.nanosecondsPerSecond == 1_000_000_000)
    #expect(TimeSpan.nanosecondsPerMillisecond == 1_000_000)
    #expect(TimeSpan.nanosecondsPerMicrosecond == 1_000)
    #expect(TimeSpan.zero.nanoseconds == 0)
  }

  @Test func constructorsSaturateInsteadOfTrapping() {
    #expect(TimeSpan.seconds(.max) == .max)
    #expect(TimeSpan.seconds(.min) == .min)
    #expect(TimeSpan.seconds(Int64.max / 1_000_000_000 + 1) == .max)
    #expect(TimeSpan.seconds(Int64.max / 1_000_000_000).nanoseconds == 9_223_372_036_000_000_000)
    #expect(TimeSpan.milliseconds(-Int64.max) == .min)
    #expect(TimeSpan.microseconds(Int64.max / 1_000 + 1) == .max)
  }

  @Test func arithmeticSaturatesAtTheExtremes() {
    #expect(TimeSpan.max + .nanoseconds(1) == .max)
    #expect(TimeSpan.min + .nanoseconds(-1) == .min)
    #expect(TimeSpan.min - .nanoseconds(1) == .min)
    #expect(TimeSpan.max - .nanoseconds(-1) == .max)
    #expect(TimeSpan.max + .min == .nanoseconds(-1))
    #expect(-TimeSpan.min == .max)
    #expect(-TimeSpan.max == .nanoseconds(-Int64.max))
    #expect(TimeSpan.max * 2 == .max)
    #expect(TimeSpan.max * -2 == .min)
    #expect(-3 * TimeSpan.min == .max)
    #expect(TimeSpan.min / -1 == .max)
    var span = TimeSpan.seconds(1)
    span += .max
    #expect(span == .max)
    span -= .seconds(1)
    #expect(span == .nanoseconds(Int64.max - 1_000_000_000))
  }

  @Test func ordinaryArithmeticAndComparison() {
    #expect(TimeSpan.seconds(1) + .milliseconds(500) == .milliseconds(1_500))
    #expect(TimeSpan.seconds(1) - .seconds(3) == .seconds(-2))
    #expect(TimeSpan.milliseconds(10) * 3 == .milliseconds(30))
    #expect(TimeSpan.nanoseconds(-7) / 2 == .nanoseconds(-3))
    #expect(TimeSpan.milliseconds(999) < .seconds(1))
    #expect(TimeSpan.seconds(-1) < .zero)
    #expect(
      [TimeSpan.seconds(2), .zero, .milliseconds(-1)].sorted() == [
        .milliseconds(-1), .zero, .seconds(2),
      ])
  }

  /// As `Int64(seconds * 1e9)`: truncated toward zero, both signs.
  @Test func secondsFromDoubleTruncateTowardZero() {
    #expect(TimeSpan(seconds: 1.5).nanoseconds == 1_500_000_000)
    #expect(TimeSpan(seconds: 0.1).nanoseconds == Int64(0.1 * 1e9))
    #expect(TimeSpan(seconds: 1e-9 * 0.9).nanoseconds == 0)
    #expect(TimeSpan(seconds: -1e-9 * 0.9).nanoseconds == 0)
    #expect(TimeSpan(seconds: -2.0000000019).nanoseconds == -2_000_000_001)
    #expect(TimeSpan(milliseconds: 2.5).nanoseconds == 2_500_000)
    #expect(TimeSpan(milliseconds: -0.0000019).nanoseconds == -1)
    for seconds in [0.1, 0.25, 3.999999999, 12.345678901, 1e-3, 86_400.5] {
      #expect(TimeSpan(seconds: seconds).nanoseconds == Int64(seconds * 1e9), "\(seconds)")
      #expect(TimeSpan(seconds: -seconds).nanoseconds == Int64(-seconds * 1e9), "\(seconds)")
      #expect(TimeSpan(milliseconds: seconds).nanoseconds == Int64(seconds * 1e6), "\(seconds)")
    }
  }

  @Test func secondsFromDoubleSaturateAndTreatNaNAsZero() {
    #expect(TimeSpan(seconds: 1e10) == .max)
    #expect(TimeSpan(seconds: -1e10) == .min)
    #expect(TimeSpan(seconds: .infinity) == .max)
    #expect(TimeSpan(seconds: -.infinity) == .min)
    #expect(TimeSpan(seconds: .nan) == .zero)
    // -2^63 ns is the last Double that converts; 2^63 is the first that does not.
    #expect(TimeSpan(seconds: -9_223_372_036.854775808) == .min)
    #expect(TimeSpan(milliseconds: 9.3e12) == .max)
  }

  @Test func durationTruncatesAttosecondsTowardZero() {
    #expect(TimeSpan(.seconds(3)) == .seconds(3))
    #expect(TimeSpan(.milliseconds(-1_250)) == .milliseconds(-1_250))
    #expect(
      TimeSpan(Duration(secondsComponent: 1, attosecondsComponent: 999_999_999)) == .seconds(1))
    #expect(
      TimeSpan(Duration(secondsComponent: 0, attosecondsComponent: 1_999_999_999))
        == .nanoseconds(1))
    #expect(TimeSpan(.nanoseconds(-5) - .nanoseconds(1) / 2) == .nanoseconds(-5))
    #expect(TimeSpan(.seconds(Int64.max)) == .max)
    #expect(TimeSpan(.seconds(Int64.min)) == .min)
  }

  @Test func readingsInOtherUnits() {
    #expect(TimeSpan.milliseconds(1_500).inSeconds == 1.5)
    #expect(TimeSpan.microseconds(2_500).inMilliseconds == 2.5)
    #expect(TimeSpan.nanoseconds(123_456_789).inSeconds == Double(123_456_789) / 1e9)
    #expect(TimeSpan.nanoseconds(-1_999_999).wholeMilliseconds == -1)
    #expect(TimeSpan.nanoseconds(1_999_999).wholeMilliseconds == 1)
    #expect(TimeSpan.nanoseconds(2_500_000_001).wholeSeconds == 2)
    #expect(TimeSpan.nanoseconds(2_500_000_001).subsecondNanoseconds == 500_000_001)
    #expect(TimeSpan.nanoseconds(-2_500_000_001).wholeSeconds == -2)
    #expect(TimeSpan.nanoseconds(-2_500_000_001).subsecondNanoseconds == -500_000_001)
    #expect(TimeSpan.max.wholeSeconds == Int64.max / 1_000_000_000)
  }
}
