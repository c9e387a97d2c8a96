/// What one walk over the NAL units of an HEVC access unit (length-prefixed, as in mp4 and in
/// the dump) found: whether it is a random access point, whether it can be dropped alone, and
/// the size of its Annex B form. A fixed-size value; the walk allocates nothing.
public struct HEVCAccessUnit: Hashable, Sendable {
  /// Bytes of the payload walked.
  public let payloadSize: Int
  /// Bytes of its NAL units in Annex B form (4-byte start code + NAL), access unit delimiters
  /// left out.
  public let annexBSize: Int
  /// True when a slice is of an IRAP picture (nal_unit_type 16-23).
  public let containsIRAP: Bool
  /// True when the unit carries a VPS, an SPS and a PPS itself.
  public let hasParameterSets: Bool
  /// True when the unit has at least one slice, every slice is of a sub-layer non-reference
  /// picture (`_N` types) and of the stream's highest temporal sub-layer: then no picture at
  /// all references it, and it can be dropped alone.
  public let isDisposable: Bool
  /// TemporalId of the first slice (0 without slices), which the access unit delimiter must
  /// repeat.
  public let temporalID: Int

  /// Walks `payload`, checking every length against it.
  ///
  /// - Parameters:
  ///   - lengthSize: bytes of each NAL length prefix (1, 2 or 4).
  ///   - highestTemporalID: the stream's highest TemporalId (`HEVCFormat.highestTemporalID`).
  /// - Throws: `FormatError.nalLengthPastEnd` naming the offset of the bad length prefix.
  /// - Complexity: O(number of NAL units).
  public init(payload: UnsafeRawBufferPointer, lengthSize: Int, highestTemporalID: Int)
    throws(FormatError)
  {
    var annexBSize = 0
    var slices = 0
    var referenced = false
    var containsIRAP = false
    var hasVPS = false
    var hasSPS = false
    var hasPPS = false
    var temporalID: Int?
    try AVCCScanner.forEachNAL(in: payload, lengthSize: lengthSize) { offset, length in
      let type = HEVCNALUnitType(headerByte: payload[offset])
      switch type {
      case .accessUnitDelimiter: return
      case .videoParameterSet: hasVPS = true
      case .sequenceParameterSet: hasSPS = true
      case .pictureParameterSet: hasPPS = true
      default:
        guard type.isVCL else { break }
        slices += 1
        // A one-byte NAL has no TemporalId: count it as of the base layer, referenced.
        let id = length >= 2 ? HEVCNALUnitType.temporalID(headerByte: payload[offset + 1]) : nil
        if temporalID == nil { temporalID = id ?? 0 }
        if !type.isSubLayerNonReference || id != highestTemporalID { referenced = true }
        if type.isIRAP { containsIRAP = true }
      }
      annexBSize += 4 + length
    }
    payloadSize = payload.count
    self.annexBSize = annexBSize
    self.containsIRAP = containsIRAP
    hasParameterSets = hasVPS && hasSPS && hasPPS
    isDisposable = slices > 0 && !referenced
    self.temporalID = temporalID ?? 0
  }
}
