/// The nal_unit_type of an HEVC NAL unit (ITU-T H.265, 7.4.2.2, table 7-1), read from its
/// two-byte header:
///
/// ```
/// byte 0  forbidden_zero_bit(1) nal_unit_type(6) nuh_layer_id[5](1)
/// byte 1  nuh_layer_id[4..0](5) nuh_temporal_id_plus1(3)
/// ```
public struct HEVCNALUnitType: RawRepresentable, Hashable, Sendable {
  /// The 6-bit type, 0...63.
  public let rawValue: UInt8

  /// A type from its 6-bit value; higher bits are ignored.
  @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue & 0x3F }

  /// The type of the NAL unit whose first header byte is `firstByte`.
  @inlinable public init(headerByte firstByte: UInt8) { self.init(rawValue: firstByte >> 1) }

  /// Coded slice of an IDR picture that may have leading RADL pictures.
  public static let idrWithLeadingPictures = HEVCNALUnitType(rawValue: 19)
  /// Coded slice of a clean random access picture.
  public static let cleanRandomAccess = HEVCNALUnitType(rawValue: 21)
  /// Video parameter set.
  public static let videoParameterSet = HEVCNALUnitType(rawValue: 32)
  /// Sequence parameter set.
  public static let sequenceParameterSet = HEVCNALUnitType(rawValue: 33)
  /// Picture parameter set.
  public static let pictureParameterSet = HEVCNALUnitType(rawValue: 34)
  /// Access unit delimiter.
  public static let accessUnitDelimiter = HEVCNALUnitType(rawValue: 35)
  /// Prefix supplemental enhancement information.
  public static let prefixSEI = HEVCNALUnitType(rawValue: 39)

  /// Whether the unit carries a coded slice (types 0-31, the reserved ones included).
  @inlinable public var isVCL: Bool { rawValue < 32 }

  /// Whether the slice belongs to an intra random access point picture (BLA, IDR, CRA and the
  /// two reserved IRAP types, 16-23): decoding can start here, given the parameter sets.
  @inlinable public var isIRAP: Bool { (16...23).contains(rawValue) }

  /// Whether the slice belongs to a random access skipped leading (RASL) picture (RASL_N 8,
  /// RASL_R 9): it follows a CRA or BLA picture in decoding order, precedes it in output order and
  /// may reference pictures from before it, so it cannot be decoded when those were not.
  @inlinable public var isRASL: Bool { rawValue == 8 || rawValue == 9 }

  /// Whether the slice belongs to a CRA or BLA picture (types 16-18, 21): the IRAP pictures that
  /// RASL pictures may follow. An IDR picture has none.
  @inlinable public var admitsRASL: Bool { (16...18).contains(rawValue) || rawValue == 21 }

  /// Whether the slice belongs to a sub-layer non-reference picture: the even types below 16
  /// that the specification names `_N` (TRAIL_N, TSA_N, STSA_N, RADL_N, RASL_N and the reserved
  /// RSV_VCL_N10/12/14). No picture of the same temporal sub-layer references it.
  @inlinable public var isSubLayerNonReference: Bool { rawValue < 16 && rawValue & 1 == 0 }

  /// The TemporalId of the NAL unit whose second header byte is `secondByte`; nil for the
  /// forbidden nuh_temporal_id_plus1 of 0.
  @inlinable public static func temporalID(headerByte secondByte: UInt8) -> Int? {
    let plusOne = Int(secondByte & 0x07)
    return plusOne == 0 ? nil : plusOne - 1
  }
}
