import IngestCore

/// A simulated audio interruption (a phone call, Siri): from `at` nanoseconds after the mic track's
/// first sample, mic timestamps are shifted by `jump` nanoseconds (negative: the clock went back).
public struct MicClockJump: Hashable, Sendable {
  /// Shift applied to mic timestamps from `at` on, in nanoseconds.
  public var jump: Int64
  /// When the jump happens, in nanoseconds after the mic track's first sample.
  public var at: Int64

  public init(jump: Int64, at: Int64) {
    self.jump = jump
    self.at = at
  }

  /// Parses "SECONDS@AT" with decimal seconds (up to 9 fractional digits), e.g. "-2.5@4".
  public init?(parsing text: String) {
    let parts = text.split(separator: "@", omittingEmptySubsequences: false)
    guard parts.count == 2, let jump = Self.nanoseconds(parts[0]),
      let at = Self.nanoseconds(parts[1]),
      at >= 0
    else { return nil }
    self.init(jump: jump, at: at)
  }

  /// Parses a decimal number of seconds exactly into nanoseconds.
  static func nanoseconds(_ text: Substring) -> Int64? {
    var rest = text
    var sign: Int64 = 1
    if rest.first == "-" || rest.first == "+" {
      if rest.first == "-" { sign = -1 }
      rest = rest.dropFirst()
    }
    let pieces = rest.split(separator: ".", omittingEmptySubsequences: false)
    guard (1...2).contains(pieces.count), !pieces[0].isEmpty || pieces.count == 2,
      pieces.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) })
    else { return nil }
    let whole = pieces[0].isEmpty ? 0 : Int64(pieces[0])
    // At most 10^9 s (31 years, past any jump): its nanoseconds, at most 10^18, fit in Int64.
    guard let whole, whole <= TimeSpan.nanosecondsPerSecond else { return nil }
    var fraction: Int64 = 0
    if pieces.count == 2 {
      let digits = pieces[1]
      guard !digits.isEmpty || !pieces[0].isEmpty, digits.count <= 9 else { return nil }
      fraction = (Int64(digits) ?? 0) * Self.powerOfTen(9 - digits.count)
    }
    return sign * (whole * TimeSpan.nanosecondsPerSecond + fraction)
  }

  private static func powerOfTen(_ exponent: Int) -> Int64 {
    (0..<exponent).reduce(1) { value, _ in value * 10 }
  }
}
