import Testing

@testable import IngestCore

/// The value of a WideInt in the standard library's 128-bit type, as a reference.
private func reference(_ value: WideInt) -> Int128 {
  Int128(value.high) << 64 | Int128(value.low)
}

private func floorDivide(_ value: Int128, _ divisor: Int128) -> Int128 {
  let quotient = value / divisor
  return value % divisor != 0 && value < 0 ? quotient - 1 : quotient
}

@Suite struct WideIntTests {
  @Test func floorDivisionRoundsTowardsMinusInfinity() {
    #expect(WideInt(7).floorDivided(by: 2) == WideInt(3))
    #expect(WideInt(-7).floorDivided(by: 2) == WideInt(-4))
    #expect(WideInt(-6).floorDivided(by: 2) == WideInt(-3))
    #expect(WideInt(-1).floorDivided(by: 90_000) == WideInt(-1))
    #expect(WideInt(0).floorDivided(by: 5) == WideInt(0))
    #expect(WideInt(Int64.min).floorDivided(by: 1) == WideInt(Int64.min))
    #expect(WideInt(Int64.min).floorDivided(by: Int64.max) == WideInt(-2))
  }

  @Test func productsAndQuotientsMatchInt128() {
    var generator = SeededGenerator(state: 0x5EED_0001)
    let edges: [Int64] = [.min, .min + 1, -1, 0, 1, .max - 1, .max]
    for round in 0..<20_000 {
      let a = round < 49 ? edges[round % 7] : Int64.random(in: .min ... .max, using: &generator)
      let b = round < 49 ? edges[round / 7] : Int64.random(in: .min ... .max, using: &generator)
      let divisor =
        round % 3 == 0
        ? Int64.random(in: 1...1000, using: &generator)
        : Int64.random(in: 1 ... .max, using: &generator)
      let product = WideInt(multiplying: a, by: b)
      #expect(reference(product) == Int128(a) * Int128(b))
      let quotient = product.floorDivided(by: divisor)
      #expect(reference(quotient) == floorDivide(Int128(a) * Int128(b), Int128(divisor)))
    }
  }

  @Test func additionSubtractionAndOrderMatchInt128() {
    var generator = SeededGenerator(state: 0x5EED_0002)
    for _ in 0..<10_000 {
      let x = WideInt(
        multiplying: Int64.random(in: .min ... .max, using: &generator),
        by: Int64.random(in: -90_000...90_000, using: &generator))
      let y = WideInt(Int64.random(in: .min ... .max, using: &generator))
      #expect(reference(x + y) == reference(x) + reference(y))
      #expect(reference(x - y) == reference(x) - reference(y))
      #expect(reference(x.negated) == -reference(x))
      #expect((x < y) == (reference(x) < reference(y)))
    }
  }

  @Test func int64IsNilExactlyWhenTheValueDoesNotFit() {
    #expect(WideInt(Int64.max).int64 == Int64.max)
    #expect(WideInt(Int64.min).int64 == Int64.min)
    #expect(WideInt(-1).int64 == -1)
    #expect((WideInt(Int64.max) + WideInt(1)).int64 == nil)
    #expect((WideInt(Int64.min) - WideInt(1)).int64 == nil)
    #expect(WideInt(high: 0, low: UInt64(Int64.max) + 1).int64 == nil)
    #expect(WideInt(high: -1, low: 0).int64 == nil)
    #expect(WideInt(high: -1, low: UInt64(Int64.max)).int64 == nil)
    #expect(WideInt(multiplying: Int64.max, by: 2).int64 == nil)
  }
}
