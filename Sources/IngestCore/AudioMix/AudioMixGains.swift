/// The linear gain of each input of a mix (`--mix-gain app=0.8,mic=1.0`); unity by default. The
/// limiter after the sum keeps any gains from clipping.
public struct AudioMixGains: Hashable, Sendable, CustomStringConvertible {
  /// The gains accepted: up to +24 dB, enough to lift a quiet mic; 0 silences an input.
  public static let range: ClosedRange<Float> = 0...16

  public var app: Float
  public var mic: Float

  public init(app: Float = 1, mic: Float = 1) {
    self.app = app
    self.mic = mic
  }

  /// Parses `app=G,mic=G` (either or both entries, in any order); an input not named keeps
  /// unity gain. A gain is a plain decimal number (`1`, `0.8`, `.5`): `Float` would also read
  /// `0x10` as 16, `1e1` as 10 and `inf`, none of which anyone means as a gain.
  /// - Throws: `AudioMixError.gainEntry`, `.gainValue` or `.gainRepeated` naming the entry at
  ///   fault.
  public init(parsing text: String) throws(AudioMixError) {
    self.init()
    var named: Set<String> = []
    for entry in text.split(separator: ",", omittingEmptySubsequences: false) {
      let parts = entry.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      guard parts.count == 2 else { throw .gainEntry(String(entry)) }
      let name = String(parts[0])
      let value = String(parts[1])
      guard name == "app" || name == "mic" else { throw .gainEntry(String(entry)) }
      guard named.insert(name).inserted else { throw .gainRepeated(input: name) }
      guard Self.isPlainDecimal(value), let gain = Float(value), Self.range.contains(gain) else {
        throw .gainValue(input: name, value: value)
      }
      if name == "app" { app = gain } else { mic = gain }
    }
  }

  /// Digits with at most one decimal point and at least one digit: no sign, exponent, hex
  /// digits, `inf` or `nan`.
  static func isPlainDecimal(_ text: String) -> Bool {
    var digits = 0
    var points = 0
    for byte in text.utf8 {
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digits += 1
      case UInt8(ascii: "."): points += 1
      default: return false
      }
    }
    return digits > 0 && points <= 1
  }

  /// The gain of `input`.
  public subscript(input: AudioMixInput) -> Float { input == .app ? app : mic }

  /// `app=0.8,mic=1.0`, the form `init(parsing:)` reads (`ingest live` hands it to the
  /// encoder), so never in exponent notation.
  public var description: String { "app=\(Self.plain(app)),mic=\(Self.plain(mic))" }

  /// `gain` as a plain decimal number: `Float`'s shortest form unless that has an exponent
  /// (below 1e-4), then nine decimals without trailing zeros.
  static func plain(_ gain: Float) -> String {
    let shortest = gain.description
    guard shortest.contains("e") else { return shortest }
    // Billionths of the gain (nine decimals); no time, though the figure is 10^9 too.
    let billion: Int64 = 1_000_000_000
    let nanos = Int64((Double(gain) * Double(billion)).rounded())
    var fraction = String(nanos % billion)
    fraction = String(repeating: "0", count: 9 - fraction.count) + fraction
    while fraction.count > 1 && fraction.hasSuffix("0") { fraction.removeLast() }
    return "\(nanos / billion).\(fraction)"
  }
}
