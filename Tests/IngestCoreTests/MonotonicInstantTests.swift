import IngestCore
import Testing

@Suite struct MonotonicInstantTests {
  @Test func instantPlusAndMinusSpan() {
    let start = MonotonicInstant(nanoseconds: 5_000_000_000)
    #expect((start + .milliseconds(250)).nanoseconds == 5_250_000_000)
    #expect((TimeSpan.seconds(1) + start).nanoseconds == 6_000_000_000)
    #expect((start - .seconds(6)).nanoseconds == -1_000_000_000)
    var deadline = start
    deadline += .seconds(2)
    deadline -= .milliseconds(500)
    #expect(deadline.nanoseconds == 6_500_000_000)
    #expect(deadline.sinceOrigin == .milliseconds(6_500))
  }

  @Test func instantMinusInstantIsASignedSpan() {
    let earlier = MonotonicInstant(nanoseconds: 1_000)
    let later = MonotonicInstant(nanoseconds: 4_000)
    #expect(later - earlier == .microseconds(3))
    #expect(earlier - later == .microseconds(-3))
    #expect(earlier - earlier == .zero)
  }

  @Test func arithmeticSaturatesAtTheExtremes() {
    #expect(MonotonicInstant.distantFuture + .seconds(1) == .distantFuture)
    #expect(MonotonicInstant.distantFuture + .max == .distantFuture)
    #expect(MonotonicInstant.distantPast - .seconds(1) == .distantPast)
    #expect(MonotonicInstant.distantPast + .min == .distantPast)
    #expect(MonotonicInstant(nanoseconds: 1) + .max == .distantFuture)
    #expect(MonotonicInstant.distantFuture - MonotonicInstant.distantPast == .max)
    #expect(MonotonicInstant.distantPast - MonotonicInstant.distantFuture == .min)
    #expect(MonotonicInstant.distantFuture - MonotonicInstant(nanoseconds: 0) == .max)
    #expect(MonotonicInstant.distantPast - TimeSpan.min == MonotonicInstant(nanoseconds: 0))
  }

  @Test func comparison() {
    let now = MonotonicInstant(nanoseconds: 10)
    #expect(MonotonicInstant.distantPast < now)
    #expect(now < .distantFuture)
    #expect(now < now + .nanoseconds(1))
    #expect(now - .nanoseconds(1) < now)
    #expect(max(now, .distantPast) == now)
  }

  @Test func clocksReadAsInstants() {
    let clock = VirtualClock(start: MonotonicInstant(nanoseconds: 42))
    #expect(clock.now() == MonotonicInstant(nanoseconds: 42))
    clock.advance(to: MonotonicInstant(nanoseconds: 1_042))
    #expect(clock.now() - MonotonicInstant(nanoseconds: 42) == .microseconds(1))
  }
}
