import Testing

@testable import IngestCore

/// floor(value * 90000 / timescale) in the standard library's 128-bit type: the reference.
private func referenceTicks(_ value: Int64, _ timescale: Int32) -> Int64? {
  let product = Int128(value) * 90_000
  var quotient = product / Int128(timescale)
  if product % Int128(timescale) != 0 && product < 0 { quotient -= 1 }
  return Int64(exactly: quotient)
}

@Suite struct TimeConversionTests {
  @Test func negativeTimesRoundDownNotTowardZero() {
    #expect(TimeConversion.ticks90k(MediaTime(value: -1, timescale: 7)) == -12858)
    #expect(TimeConversion.ticks90k(MediaTime(value: -1, timescale: 3)) == -30000)
    #expect(TimeConversion.ticks90k(MediaTime(value: 1, timescale: 7)) == 12857)
    #expect(TimeConversion.ticks90k(MediaTime(value: .min, timescale: 1)) == nil)
    #expect(
      TimeConversion.ticks90k(MediaTime(value: .max, timescale: 1_000_000_000))
        == Int64.max / 1_000_000_000 * 90_000 + (Int64.max % 1_000_000_000) * 90_000 / 1_000_000_000
    )
  }

  static let timescales: [Int32] = [600, 44100, 48000, 1_000_000_000]

  @Test(arguments: timescales)
  func matchesExactReferenceOverRandomAndExtremeValues(timescale: Int32) {
    var generator = SeededGenerator(state: UInt64(timescale))
    var values: [Int64] = [
      .min, .min + 1, .min + 2, .max, .max - 1, .max - 2, 0, 1, -1,
      Int64.max / 90_000, Int64.max / 90_000 + 1, Int64.min / 90_000, Int64.min / 90_000 - 1,
      Int64(timescale), -Int64(timescale), Int64(timescale) - 1, -Int64(timescale) + 1,
    ]
    for _ in 0..<20_000 { values.append(Int64.random(in: .min ... .max, using: &generator)) }
    // Values near the 64-bit limits of the product, where a naive value * 90000 overflows.
    for _ in 0..<2_000 {
      values.append(Int64.max / 90_000 + Int64.random(in: -1000...1000, using: &generator))
      values.append(Int64.max - Int64.random(in: 0...1_000_000, using: &generator))
      values.append(Int64.min + Int64.random(in: 0...1_000_000, using: &generator))
    }
    for value in values {
      let time = MediaTime(value: value, timescale: timescale)
      #expect(TimeConversion.ticks90k(time) == referenceTicks(value, timescale), "\(time)")
    }
  }

  @Test func largeTimescalesNeverOverflow() {
    // At timescales of 90000 and above every Int64 value converts.
    for timescale: Int32 in [90_000, 1_000_000_000, .max] {
      #expect(TimeConversion.ticks90k(MediaTime(value: .max, timescale: timescale)) != nil)
      #expect(TimeConversion.ticks90k(MediaTime(value: .min, timescale: timescale)) != nil)
    }
    #expect(TimeConversion.ticks90k(MediaTime(value: .max, timescale: 600)) == nil)
    #expect(TimeConversion.ticks90k(MediaTime(value: .min, timescale: 48000)) == nil)
  }

  @Test func knownValues() {
    #expect(TimeConversion.ticks90k(MediaTime(value: 600, timescale: 600)) == 90_000)
    #expect(TimeConversion.ticks90k(MediaTime(value: 1024, timescale: 44100)) == 2089)
    #expect(TimeConversion.ticks90k(MediaTime(value: 1024, timescale: 48000)) == 1920)
    #expect(TimeConversion.ticks90k(MediaTime(value: -1, timescale: 44100)) == -3)
    #expect(TimeConversion.ticks90k(MediaTime(value: -1, timescale: 600)) == -150)
    // A host clock in nanoseconds (about four days of uptime).
    #expect(
      TimeConversion.ticks90k(MediaTime(value: 352_417_123_456_789, timescale: 1_000_000_000))
        == 31_717_541_111)
  }

  @Test func conversionDoesNotDriftOverManyFrames() {
    // 1024-sample AAC frames at 44.1 kHz: 2089.795... ticks each. Converting each timestamp on its
    // own stays within one tick of the exact time, where summing rounded durations would drift.
    var last: Int64 = 0
    for frame: Int64 in 1...50_000 {
      let ticks = TimeConversion.ticks90k(MediaTime(value: frame * 1024, timescale: 44100))!
      #expect(ticks == frame * 1024 * 90_000 / 44100)
      #expect(ticks - last == 2089 || ticks - last == 2090)
      last = ticks
    }
  }

  @Test func invalidTimescalesGiveNil() {
    #expect(TimeConversion.ticks90k(MediaTime(value: 1, timescale: 0)) == nil)
    #expect(TimeConversion.ticks90k(MediaTime(value: 1, timescale: -600)) == nil)
  }

  @Test func ticksToNanoseconds() {
    #expect(TimeConversion.nanoseconds(ticks: 90_000) == 1_000_000_000)
    #expect(TimeConversion.nanoseconds(ticks: 1) == 11_111)
    #expect(TimeConversion.nanoseconds(ticks: 3003) == 33_366_666)
    // About 26.5 hours of ticks (2^33): beyond the 33-bit wrap, still exact.
    #expect(TimeConversion.nanoseconds(ticks: 1 << 33) == (Int64(1) << 33) * 100_000 / 9)
  }
}
