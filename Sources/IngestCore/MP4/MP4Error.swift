/// A fragmented MP4 that cannot be read or recovered: what is wrong and at which byte.
public enum MP4Error: Error, Equatable, Sendable, CustomStringConvertible {
  /// A box header whose size is smaller than the header itself.
  case boxSize(offset: Int64, size: Int64)
  /// The file does not begin with `ftyp` followed by `moov`: it is no fragmented MP4 of ours.
  case notFragmentedMP4(offset: Int64, found: String)
  /// `ftyp` does not list `MP4InitSegment.recordingBrand`: another program wrote the file (or
  /// a release of ingest from before the brand). `brands` are the ones it lists.
  case notARecording(brands: [String])
  /// A box where a recording has only `moof` + `mdat` pairs after `moov` (an `mfra` index, a
  /// `sidx`, `free` space, or a second `moov` that another program wrote).
  case unexpectedBox(offset: Int64, found: String, expected: String)
  /// A `moof` whose `mfhd` sequence number is not the one after the previous fragment's: the
  /// fragments are not the ones our writer wrote, one after the other.
  case fragmentSequence(offset: Int64, found: UInt32, expected: UInt32)

  public var description: String {
    switch self {
    case .boxSize(let offset, let size):
      "box at byte \(offset) declares \(size) bytes, less than its own header"
    case .notFragmentedMP4(let offset, let found):
      "not a fragmented MP4: expected ftyp and moov, found '\(found)' at byte \(offset)"
    case .notARecording(let brands):
      "not a recording of ingest: its ftyp lists the brands "
        + (brands.isEmpty ? "(none)" : brands.map { "'\($0)'" }.joined(separator: ", "))
        + ", without '\(MP4InitSegment.recordingBrand)', which every recording of ingest carries"
    case .unexpectedBox(let offset, let found, let expected):
      "not a recording of ingest: box '\(found)' at byte \(offset), where a recording has"
        + " '\(expected)' (only moof + mdat fragments follow its moov)"
    case .fragmentSequence(let offset, let found, let expected):
      "not a recording of ingest: the fragment at byte \(offset) has sequence number \(found),"
        + " where the one after the previous fragment is \(expected)"
    }
  }
}
