extension AVCCScanner {
  /// Walks a length-prefixed HEVC access unit once: checks every length and records what later
  /// stages need (random access, parameter sets, disposability, the Annex B size).
  ///
  /// - Parameters:
  ///   - lengthSize: bytes of each NAL length prefix (1, 2 or 4).
  ///   - highestTemporalID: the stream's highest TemporalId (`HEVCFormat.highestTemporalID`):
  ///     only a sub-layer non-reference picture of that sub-layer is referenced by no picture
  ///     at all.
  /// - Throws: `FormatError.nalLengthPastEnd` naming the offset of the bad length prefix.
  /// - Complexity: O(number of NAL units); allocates nothing.
  public static func summarizeHEVC(
    _ payload: UnsafeRawBufferPointer, lengthSize: Int, highestTemporalID: Int
  ) throws(FormatError) -> AVCCSummary {
    var nalCount = 0
    var annexBSize = 0
    var slices = 0
    var raslSlices = 0
    var admitsRASL = false
    var referenced = false
    var containsIRAP = false
    var hasVPS = false
    var hasSPS = false
    var hasPPS = false
    var temporalID: Int?
    try forEachNAL(in: payload, lengthSize: lengthSize) { offset, length in
      nalCount += 1
      let type = HEVCNALUnitType(headerByte: payload[offset])
      switch type {
      case .accessUnitDelimiter: return
      case .videoParameterSet: hasVPS = true
      case .sequenceParameterSet: hasSPS = true
      case .pictureParameterSet: hasPPS = true
      default:
        guard type.isVCL else { break }
        slices += 1
        // A one-byte NAL has no TemporalId: count it as of the base layer, and referenced.
        let id = length >= 2 ? HEVCNALUnitType.temporalID(headerByte: payload[offset + 1]) : nil
        if temporalID == nil { temporalID = id ?? 0 }
        if !type.isSubLayerNonReference || id != highestTemporalID { referenced = true }
        if type.isIRAP { containsIRAP = true }
        if type.isRASL { raslSlices += 1 }
        if type.admitsRASL { admitsRASL = true }
      }
      annexBSize += 4 + length
    }
    return AVCCSummary(
      payloadSize: payload.count, lengthSize: lengthSize, nalCount: nalCount,
      annexBSize: annexBSize, containsIDR: containsIRAP,
      hasParameterSets: hasVPS && hasSPS && hasPPS, isDisposable: slices > 0 && !referenced,
      isRASL: slices > 0 && raslSlices == slices, admitsRASL: admitsRASL,
      temporalID: temporalID ?? 0)
  }
}
