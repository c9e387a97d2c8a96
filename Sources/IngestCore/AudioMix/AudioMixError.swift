/// Why a mix setting was refused.
public enum AudioMixError: Error, Equatable, Sendable, CustomStringConvertible {
  /// A `--mix-gain` entry that is not `app=G` or `mic=G`: the entry as given.
  case gainEntry(String)
  /// A gain outside `AudioMixGains.range`: the input and the value as given.
  case gainValue(input: String, value: String)
  /// An input named twice (`app=1,app=3`): which one wins would be a guess.
  case gainRepeated(input: String)
  /// A configuration the mixer cannot run: which field and why.
  case configuration(field: String, reason: String)

  public var description: String {
    switch self {
    case .gainEntry(let entry):
      "mix gain '\(entry)' is not app=GAIN or mic=GAIN"
    case .gainValue(let input, let value):
      "mix gain of \(input) must be a plain decimal number from "
        + "\(AudioMixGains.range.lowerBound) to \(AudioMixGains.range.upperBound) (such as 0.8),"
        + " got '\(value)'"
    case .gainRepeated(let input):
      "mix gain of \(input) is given more than once; give each input once"
    case .configuration(let field, let reason):
      "audio mix \(field): \(reason)"
    }
  }
}
