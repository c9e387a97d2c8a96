/// HEVC stream configuration parsed from an hvcC record, the HEVCDecoderConfigurationRecord of
/// ISO/IEC 14496-15, 8.3.3.1.
///
/// ```
/// byte 0      configurationVersion (1)
/// byte 1      general_profile_space(2) general_tier_flag(1) general_profile_idc(5)
/// byte 2-5    general_profile_compatibility_flags
/// byte 6-11   general_constraint_indicator_flags (48 bits)
/// byte 12     general_level_idc
/// byte 13-14  1111 min_spatial_segmentation_idc(12)
/// byte 15     111111 parallelismType(2)
/// byte 16     111111 chromaFormat(2)
/// byte 17     11111 bitDepthLumaMinus8(3)
/// byte 18     11111 bitDepthChromaMinus8(3)
/// byte 19-20  avgFrameRate
/// byte 21     constantFrameRate(2) numTemporalLayers(3) temporalIdNested(1) lengthSizeMinusOne(2)
/// byte 22     numOfArrays, then each array:
///             array_completeness(1) 0(1) NAL_unit_type(6) | u16 numNalus |
///             numNalus times: u16 nalUnitLength + NAL unit (header included)
/// ```
///
/// Only the VPS, SPS and PPS arrays are kept. Other arrays (declarative SEI: x265 puts two
/// kilobytes of its settings there) are skipped: a decoder does not need them, and they would
/// go in front of every IRAP picture otherwise.
public struct HEVCFormat: Hashable, Sendable {
  /// The fields, in one immutable box. A format travels by value inside every
  /// `FormatDescription`, `VideoFormat`, dump record and outgoing unit; held inline, its
  /// ~150 bytes made each of those as large, and they are copied a dozen times per sample.
  private let fields: Fields

  /// The general profile, tier and level and the picture size, from the first SPS.
  public var sequence: HEVCSequenceParameterSet { fields.values.sequence }
  /// Size in bytes of each NAL length prefix in samples: 1, 2 or 4.
  public var nalLengthSize: Int { fields.values.nalLengthSize }
  /// Video parameter sets, NAL header included, without start codes.
  public var vps: [[UInt8]] { fields.values.vps }
  /// Sequence parameter sets.
  public var sps: [[UInt8]] { fields.values.sps }
  /// Picture parameter sets.
  public var pps: [[UInt8]] { fields.values.pps }
  /// The hvcC fields that describe the stream beyond its parameter sets and the SPS, kept so
  /// that the record written back says what the one read did.
  public var minSpatialSegmentation: Int { fields.values.minSpatialSegmentation }
  public var parallelismType: Int { fields.values.parallelismType }
  public var averageFrameRate: Int { fields.values.averageFrameRate }
  public var constantFrameRate: Int { fields.values.constantFrameRate }

  private struct Values: Hashable, Sendable {
    var sequence: HEVCSequenceParameterSet
    var nalLengthSize: Int
    var vps: [[UInt8]]
    var sps: [[UInt8]]
    var pps: [[UInt8]]
    var minSpatialSegmentation: Int
    var parallelismType: Int
    var averageFrameRate: Int
    var constantFrameRate: Int
  }

  private final class Fields: Sendable {
    let values: Values
    init(_ values: Values) { self.values = values }
  }

  public static func == (left: HEVCFormat, right: HEVCFormat) -> Bool {
    left.fields === right.fields || left.fields.values == right.fields.values
  }

  public func hash(into hasher: inout Hasher) { hasher.combine(fields.values) }

  /// A configuration from its parameter sets (as in-band Annex B streams carry them); the
  /// general fields of the record come from the first SPS.
  ///
  /// - Throws: `FormatError.nalLengthSize`, `.hevcMissingParameterSets`,
  ///   `.hevcParameterSet` for a set the record cannot hold, or the SPS's error.
  public init(
    vps: [[UInt8]], sps: [[UInt8]], pps: [[UInt8]], nalLengthSize: Int = 4,
    minSpatialSegmentation: Int = 0, parallelismType: Int = 0, averageFrameRate: Int = 0,
    constantFrameRate: Int = 0
  ) throws(FormatError) {
    guard nalLengthSize == 1 || nalLengthSize == 2 || nalLengthSize == 4 else {
      throw .nalLengthSize(nalLengthSize)
    }
    guard !vps.isEmpty, let first = sps.first, !pps.isEmpty else {
      throw .hevcMissingParameterSets
    }
    let arrays: [(HEVCNALUnitType, [[UInt8]])] = [
      (.videoParameterSet, vps), (.sequenceParameterSet, sps), (.pictureParameterSet, pps),
    ]
    for (type, units) in arrays {
      // The record counts sets and their bytes in 16 bits.
      guard units.count <= 0xFFFF else { throw .hevcParameterSet(type: type.rawValue, length: 0) }
      for unit in units {
        guard (2...0xFFFF).contains(unit.count), HEVCNALUnitType(headerByte: unit[0]) == type
        else {
          throw .hevcParameterSet(
            type: unit.first.map { HEVCNALUnitType(headerByte: $0).rawValue } ?? 0,
            length: unit.count)
        }
      }
    }
    fields = Fields(
      Values(
        sequence: try HEVCSequenceParameterSet(nalUnit: first), nalLengthSize: nalLengthSize,
        vps: vps, sps: sps, pps: pps, minSpatialSegmentation: minSpatialSegmentation & 0xFFF,
        parallelismType: parallelismType & 3, averageFrameRate: averageFrameRate & 0xFFFF,
        constantFrameRate: constantFrameRate & 3))
  }

  /// Parses an hvcC record. Every count and length is checked against the record as it is
  /// read; nothing is reserved from a count, so an absurd count ends as `hvcCTruncated` at the
  /// byte where the record ran out.
  public init(hvcC bytes: some Collection<UInt8>) throws(FormatError) {
    let b = Array(bytes)
    guard b.count >= 23 else { throw .hvcCTruncated(offset: b.count) }
    guard b[0] == 1 else { throw .hvcCVersion(b[0]) }
    var offset = 23
    var sets: [HEVCNALUnitType: [[UInt8]]] = [:]
    for _ in 0..<Int(b[22]) {
      guard offset + 3 <= b.count else { throw .hvcCTruncated(offset: offset) }
      let type = HEVCNALUnitType(rawValue: b[offset])
      let count = Int(b[offset + 1]) << 8 | Int(b[offset + 2])
      offset += 3
      for _ in 0..<count {
        guard offset + 2 <= b.count else { throw .hvcCTruncated(offset: offset) }
        let length = Int(b[offset]) << 8 | Int(b[offset + 1])
        offset += 2
        guard length <= b.count - offset else { throw .hvcCTruncated(offset: offset) }
        guard length >= 2, HEVCNALUnitType(headerByte: b[offset]) == type else {
          throw .hvcCParameterSet(
            offset: offset, found: length > 0 ? HEVCNALUnitType(headerByte: b[offset]).rawValue : 0)
        }
        switch type {
        case .videoParameterSet, .sequenceParameterSet, .pictureParameterSet:
          sets[type, default: []].append(Array(b[offset..<offset + length]))
        default: break
        }
        offset += length
      }
    }
    try self.init(
      vps: sets[.videoParameterSet] ?? [], sps: sets[.sequenceParameterSet] ?? [],
      pps: sets[.pictureParameterSet] ?? [], nalLengthSize: Int(b[21] & 0x03) + 1,
      minSpatialSegmentation: Int(b[13]) << 8 | Int(b[14]), parallelismType: Int(b[15]),
      averageFrameRate: Int(b[19]) << 8 | Int(b[20]), constantFrameRate: Int(b[21] >> 6))
  }

  /// Serialises the configuration as an hvcC record (the inverse of `init(hvcC:)`), with its
  /// general fields taken from the first SPS.
  public var hvcC: [UInt8] {
    let s = sequence
    var out: [UInt8] = [1, s.profileSpace << 6 | (s.isHighTier ? 0x20 : 0) | s.profileIDC & 0x1F]
    for shift in stride(from: 24, through: 0, by: -8) {
      out.append(UInt8(truncatingIfNeeded: s.compatibilityFlags >> UInt32(shift)))
    }
    for shift in stride(from: 40, through: 0, by: -8) {
      out.append(UInt8(truncatingIfNeeded: s.constraintFlags >> UInt64(shift)))
    }
    out.append(s.levelIDC)
    out.append(0xF0 | UInt8(minSpatialSegmentation >> 8))
    out.append(UInt8(minSpatialSegmentation & 0xFF))
    out.append(0xFC | UInt8(parallelismType))
    out.append(0xFC | UInt8(s.chromaFormat))
    out.append(0xF8 | UInt8(s.bitDepthLuma - 8))
    out.append(0xF8 | UInt8(s.bitDepthChroma - 8))
    out.append(UInt8(averageFrameRate >> 8))
    out.append(UInt8(averageFrameRate & 0xFF))
    out.append(
      UInt8(constantFrameRate) << 6 | UInt8(s.maxSubLayers & 7) << 3
        | (s.temporalIDNesting ? 0x04 : 0) | UInt8(nalLengthSize - 1))
    let arrays: [(HEVCNALUnitType, [[UInt8]])] = [
      (.videoParameterSet, vps), (.sequenceParameterSet, sps), (.pictureParameterSet, pps),
    ]
    out.append(UInt8(arrays.count))
    for (type, units) in arrays {
      // array_completeness 1: every parameter set of the stream is in the record.
      out.append(0x80 | type.rawValue)
      out.append(UInt8(units.count >> 8))
      out.append(UInt8(units.count & 0xFF))
      for unit in units {
        out.append(UInt8(unit.count >> 8))
        out.append(UInt8(unit.count & 0xFF))
        out.append(contentsOf: unit)
      }
    }
    return out
  }

  /// The highest TemporalId of the stream's pictures: a sub-layer non-reference picture of
  /// this sub-layer is referenced by no other picture at all.
  public var highestTemporalID: Int { sequence.maxSubLayers - 1 }
}
