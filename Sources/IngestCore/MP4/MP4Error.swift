/// A fragmented MP4 that cannot be read or recovered: what is wrong and at which byte.
public enum MP4Error: Error, Equatable, Sendable, CustomStringConvertible {
  /// A box header whose size is smaller than the header itself.
  case boxSize(offset: Int64, size: Int64)
  /// The file does not begin with `ftyp` followed by `moov`: it is no fragmented MP4 of ours.
  case notFragmentedMP4(offset: Int64, found: String)

  public var description: String {
    switch self {
    case .boxSize(let offset, let size):
      "box at byte \(offset) declares \(size) bytes, less than its own header"
    case .notFragmentedMP4(let offset, let found):
      "not a fragmented MP4: expected ftyp and moov, found '\(found)' at byte \(offset)"
    }
  }
}
