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
  /// unity gain.
  /// - Throws: `AudioMixError.gainEntry` or `.gainValue` naming the entry at fault.
  public init(parsing text: String) throws(AudioMixError) {
    self.init()
    for entry in text.split(separator: ",", omittingEmptySubsequences: false) {
      let parts = entry.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      guard parts.count == 2 else { throw .gainEntry(String(entry)) }
      let name = String(parts[0])
      let value = String(parts[1])
      guard let gain = Float(value), gain.isFinite, Self.range.contains(gain) else {
        throw .gainValue(input: name, value: value)
      }
      switch name {
      case "app": app = gain
      case "mic": mic = gain
      default: throw .gainEntry(String(entry))
      }
    }
  }

  /// The gain of `input`.
  public subscript(input: AudioMixInput) -> Float { input == .app ? app : mic }

  /// `app=0.8,mic=1.0`, the form `init(parsing:)` reads.
  public var description: String { "app=\(app),mic=\(mic)" }
}
