/// Length-prefixed HEVC access units to Annex B (ITU-T H.265, annex B), in the form a transport
/// stream carries them (ISO/IEC 13818-1, 2.17: an access unit delimiter first):
///
/// ```
/// 00 00 00 01 46 0t 50            access unit delimiter, TemporalId t, pic_type 2 (any slice)
/// 00 00 00 01 VPS ... SPS ... PPS   from the hvcC, in front of an IRAP unit that lacks them
/// 00 00 00 01 NAL ...             each NAL of the sample, in order (its delimiters dropped)
/// ```
///
/// Two passes as for H.264 (`AnnexB`): `HEVCAccessUnit` validates and measures, `write` emits
/// without further checks. Neither allocates.
public enum HEVCAnnexB {
  /// Bytes of the access unit delimiter we insert (start code included).
  public static let audSize = 7

  /// What goes out for one access unit.
  public struct Layout: Equatable, Sendable {
    /// Bytes of the Annex B output.
    public var size: Int
    /// True when the hvcC's VPS, SPS and PPS go in front of the unit.
    public var insertsParameterSets: Bool
    /// TemporalId written into the access unit delimiter.
    public var temporalID: Int
  }

  /// Measures the Annex B form of a walked access unit.
  ///
  /// - Parameter isKeyframe: the encoder's keyframe flag; parameter sets go in front of a
  ///   keyframe or of a unit with an IRAP slice.
  /// - Complexity: O(number of parameter sets).
  public static func layout(_ unit: HEVCAccessUnit, format: HEVCFormat, isKeyframe: Bool)
    -> Layout
  {
    let inserts = (isKeyframe || unit.containsIRAP) && !unit.hasParameterSets
    return Layout(
      size: audSize + unit.annexBSize + (inserts ? parameterSetsSize(format) : 0),
      insertsParameterSets: inserts, temporalID: unit.temporalID)
  }

  /// Converts a length-prefixed sample into `out` and returns the bytes written.
  ///
  /// - Throws: `FormatError.nalLengthPastEnd` for a length running past the sample.
  /// - Precondition: `out` holds at least `maximumSize(payloadSize:format:)` bytes.
  public static func convert(
    sample: UnsafeRawBufferPointer, format: HEVCFormat, isKeyframe: Bool,
    into out: UnsafeMutableRawBufferPointer
  ) throws(FormatError) -> Int {
    let unit = try HEVCAccessUnit(
      payload: sample, lengthSize: format.nalLengthSize,
      highestTemporalID: format.highestTemporalID)
    let layout = layout(unit, format: format, isKeyframe: isKeyframe)
    precondition(out.count >= layout.size, "output buffer smaller than the Annex B unit")
    var sink = FlatByteWriter(out)
    write(sample: sample, format: format, layout: layout, into: &sink)
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

  /// Writes a sample that `HEVCAccessUnit` accepted, as `layout` measured it.
  static func write<Sink: PacketByteWriter>(
    sample: UnsafeRawBufferPointer, format: HEVCFormat, layout: Layout, into sink: inout Sink
  ) {
    sink.writeStartCode()
    sink.write(byte: HEVCNALUnitType.accessUnitDelimiter.rawValue << 1)
    sink.write(byte: UInt8(layout.temporalID + 1))
    // pic_type 2 (I, P and B slices may be present) and the RBSP stop bit.
    sink.write(byte: 0x50)
    if layout.insertsParameterSets {
      // Three loops rather than one over the joined arrays, which would allocate per IRAP.
      for set in format.vps { writeUnit(set, into: &sink) }
      for set in format.sps { writeUnit(set, into: &sink) }
      for set in format.pps { writeUnit(set, into: &sink) }
    }
    let lengthSize = format.nalLengthSize
    var offset = 0
    while offset + lengthSize <= sample.count {
      let length = AnnexB.readLength(sample, at: offset, size: lengthSize)
      let start = offset + lengthSize
      offset = start + length
      guard length > 0,
        HEVCNALUnitType(headerByte: sample[start]) != .accessUnitDelimiter
      else { continue }
      sink.writeStartCode()
      sink.write(UnsafeRawBufferPointer(rebasing: sample[start..<offset]))
    }
  }

  private static func writeUnit<Sink: PacketByteWriter>(_ unit: [UInt8], into sink: inout Sink) {
    sink.writeStartCode()
    unit.withUnsafeBytes { sink.write($0) }
  }

  static func parameterSetsSize(_ format: HEVCFormat) -> Int {
    var size = 0
    for set in format.vps { size += 4 + set.count }
    for set in format.sps { size += 4 + set.count }
    for set in format.pps { size += 4 + set.count }
    return size
  }
}
