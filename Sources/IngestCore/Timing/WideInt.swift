/// A signed 128-bit integer with just the operations exact timestamp conversion needs.
///
/// The standard library's `Int128` needs iOS 18 on Apple platforms; the core must run in older
/// broadcast extensions, so the few operations are spelled out here.
///
/// ```
///  high (Int64, carries the sign) | low (UInt64)   two's complement, value = high * 2^64 + low
/// ```
struct WideInt: Equatable, Comparable {
  var high: Int64
  var low: UInt64

  init(high: Int64, low: UInt64) {
    self.high = high
    self.low = low
  }

  init(_ value: Int64) {
    self.init(high: value < 0 ? -1 : 0, low: UInt64(bitPattern: value))
  }

  /// The exact product of two Int64 values.
  init(multiplying a: Int64, by b: Int64) {
    let product = a.multipliedFullWidth(by: b)
    self.init(high: product.high, low: product.low)
  }

  var isNegative: Bool { high < 0 }

  /// Two's complement negation. Only used on values far from the 128-bit minimum.
  var negated: WideInt {
    let low = ~self.low &+ 1
    let high = ~self.high &+ (low == 0 ? 1 : 0)
    return WideInt(high: high, low: low)
  }

  static func + (a: WideInt, b: WideInt) -> WideInt {
    let (low, carry) = a.low.addingReportingOverflow(b.low)
    return WideInt(high: a.high &+ b.high &+ (carry ? 1 : 0), low: low)
  }

  static func - (a: WideInt, b: WideInt) -> WideInt { a + b.negated }

  static func < (a: WideInt, b: WideInt) -> Bool {
    a.high != b.high ? a.high < b.high : a.low < b.low
  }

  /// The quotient rounded towards minus infinity, for a positive divisor.
  func floorDivided(by divisor: Int64) -> WideInt {
    precondition(divisor > 0)
    let d = UInt64(divisor)
    let magnitude = isNegative ? negated : self
    // Long division of the unsigned magnitude, one 64-bit digit at a time.
    let highBits = UInt64(bitPattern: magnitude.high)
    let (quotientHigh, remainderHigh) = highBits.quotientAndRemainder(dividingBy: d)
    let (quotientLow, remainder) = d.dividingFullWidth((remainderHigh, magnitude.low))
    var quotient = WideInt(high: Int64(bitPattern: quotientHigh), low: quotientLow)
    if isNegative {
      quotient = quotient.negated
      if remainder != 0 { quotient = quotient - WideInt(1) }
    }
    return quotient
  }

  /// The value as Int64, or nil when it does not fit.
  var int64: Int64? {
    let value = Int64(bitPattern: low)
    return (value < 0 ? -1 : 0) == high ? value : nil
  }
}
