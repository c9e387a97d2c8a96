/// Length-prefixed HEVC access units to Annex B (ITU-T H.265, annex B), in the form a transport
/// stream carries them (ISO/IEC 13818-1, 2.17: an access unit delimiter first):
///
/// ```
/// 00 00 00 01 46 0t 50            access unit delimiter, TemporalId t - 1, pic_type 2
/// 00 00 00 01 VPS ... SPS ... PPS   from the hvcC, in front of an IRAP unit that lacks them
/// 00 00 00 01 NAL ...             each NAL of the sample, in order (its delimiters dropped)
/// ```
///
/// Two passes as for H.264 (`AnnexB`): `AVCCScanner.summarizeHEVC` validates and measures once,
/// `inspect` sizes the output from that summary, `write` emits it, checking only that the sample
/// still matches what was measured. Neither allocates.
public enum HEVCAnnexB {
  /// Bytes of the access unit delimiter we insert (start code included).
  public static let audSize = 7

  /// Measures the Annex B form of a sample already walked by `AVCCScanner.summarizeHEVC`.
  ///
  /// - Parameters:
  ///   - parameterSetsSize: `parameterSetsSize(format)`, computed once per format.
  ///   - isKeyframe: the encoder's keyframe flag; parameter sets go in front of a keyframe or of
  ///     a unit with an IRAP slice (`containsIDR`).
  /// - Complexity: O(1).
  public static func inspect(summary: AVCCSummary, parameterSetsSize: Int, isKeyframe: Bool)
    -> AnnexB.AccessUnitInfo
  {
    let inserts = (isKeyframe || summary.containsIDR) && !summary.hasParameterSets
    return AnnexB.AccessUnitInfo(
      size: audSize + summary.annexBSize + (inserts ? parameterSetsSize : 0),
      insertsParameterSets: inserts, isDisposable: summary.isDisposable,
      containsIDR: summary.containsIDR)
  }

  /// Converts a length-prefixed sample into `out` and returns the bytes written.
  ///
  /// - Throws: `FormatError.nalLengthPastEnd` for a length running past the sample.
  /// - Precondition: `out` holds at least `maximumSize(payloadSize:format:)` bytes.
  public static func convert(
    sample: UnsafeRawBufferPointer, format: HEVCFormat, isKeyframe: Bool,
    into out: UnsafeMutableRawBufferPointer
  ) throws(FormatError) -> Int {
    let summary = try AVCCScanner.summarizeHEVC(
      sample, lengthSize: format.nalLengthSize, highestTemporalID: format.highestTemporalID)
    let info = inspect(
      summary: summary, parameterSetsSize: parameterSetsSize(format), isKeyframe: isKeyframe)
    precondition(out.count >= info.size, "output buffer smaller than the Annex B unit")
    var sink = FlatByteWriter(out)
    let written = write(
      sample: sample, lengthSize: format.nalLengthSize,
      parameterSets: info.insertsParameterSets ? format : nil, info: info,
      temporalID: summary.temporalID, into: &sink)
    assert(written, "a sample the walk accepted")
    return sink.position
  }

  /// An upper bound of the Annex B size of any `payloadSize`-byte sample of `format`: each NAL
  /// of n >= 1 bytes grows from `nalLengthSize + n` to `4 + n` bytes, so the worst case is many
  /// 1-byte NAL units.
  public static func maximumSize(payloadSize: Int, format: HEVCFormat) -> Int {
    let lengthSize = format.nalLengthSize
    let payload = max(0, payloadSize)
    let maximumNALCount = payload / (lengthSize + 1)
    return audSize + parameterSetsSize(format) + payload + maximumNALCount * (4 - lengthSize)
  }

  /// Writes a sample measured by `inspect`; `parameterSets` is needed only when the unit gets
  /// them (a unit without needs no copy of the format, nor reference counting of its arrays).
  ///
  /// - Returns: false, with fewer than `info.size` bytes written, when the sample does not match
  ///   the measurement; no byte is read past the sample nor written past `info.size`.
  static func write<Sink: PacketByteWriter>(
    sample: UnsafeRawBufferPointer, lengthSize: Int, parameterSets: HEVCFormat?,
    info: AnnexB.AccessUnitInfo, temporalID: Int, into sink: inout Sink
  ) -> Bool {
    guard (0...6).contains(temporalID) else { return false }
    sink.writeStartCode()
    sink.write(byte: HEVCNALUnitType.accessUnitDelimiter.rawValue << 1)
    sink.write(byte: UInt8(temporalID + 1))
    // pic_type 2 (I, P and B slices may be present) and the RBSP stop bit.
    sink.write(byte: 0x50)
    var written = audSize
    if info.insertsParameterSets {
      guard let format = parameterSets else { return false }
      // Three loops rather than one over the joined arrays, which would allocate per IRAP.
      for set in format.vps { writeUnit(set, into: &sink) }
      for set in format.sps { writeUnit(set, into: &sink) }
      for set in format.pps { writeUnit(set, into: &sink) }
      written += parameterSetsSize(format)
    }
    var offset = 0
    while offset + lengthSize <= sample.count {
      let length = AnnexB.readLength(sample, at: offset, size: lengthSize)
      let start = offset + lengthSize
      guard length <= sample.count - start else { return false }
      offset = start + length
      guard length > 0, HEVCNALUnitType(headerByte: sample[start]) != .accessUnitDelimiter
      else { continue }
      guard written + 4 + length <= info.size else { return false }
      written += 4 + length
      sink.writeStartCode()
      sink.write(UnsafeRawBufferPointer(rebasing: sample[start..<offset]))
    }
    return written == info.size
  }

  private static func writeUnit<Sink: PacketByteWriter>(_ unit: [UInt8], into sink: inout Sink) {
    sink.writeStartCode()
    unit.withUnsafeBytes { sink.write($0) }
  }

  /// Bytes of the format's VPS, SPS and PPS with their start codes: what an IRAP unit without
  /// them grows by.
  public static func parameterSetsSize(_ format: HEVCFormat) -> Int {
    var size = 0
    for set in format.vps { size += 4 + set.count }
    for set in format.sps { size += 4 + set.count }
    for set in format.pps { size += 4 + set.count }
    return size
  }
}
