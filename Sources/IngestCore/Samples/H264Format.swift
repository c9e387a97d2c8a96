/// H.264 stream configuration parsed from an avcC record (ISO/IEC 14496-15, 5.3.3.1).
///
/// ```
/// byte 0   configurationVersion (1)
/// byte 1-3 profile, profile_compatibility, level
/// byte 4   111111xx  lengthSizeMinusOne
/// byte 5   111xxxxx  numOfSequenceParameterSets, then each: u16 length + SPS
/// ....     u8 numOfPictureParameterSets, then each: u16 length + PPS
/// ```
public struct H264Format: Hashable, Sendable {
  /// AVC profile indication (66 baseline, 77 main, 100 high, ...).
  public var profile: UInt8
  /// profile_compatibility byte.
  public var compatibility: UInt8
  /// AVC level indication (e.g. 31 for 3.1).
  public var level: UInt8
  /// Size in bytes of each NAL length prefix in samples: 1, 2 or 4.
  public var nalLengthSize: Int
  /// Sequence parameter sets, without start codes.
  public var sps: [[UInt8]]
  /// Picture parameter sets, without start codes.
  public var pps: [[UInt8]]

  public init(
    profile: UInt8, compatibility: UInt8, level: UInt8, nalLengthSize: Int, sps: [[UInt8]],
    pps: [[UInt8]]
  ) throws(FormatError) {
    guard nalLengthSize == 1 || nalLengthSize == 2 || nalLengthSize == 4 else {
      throw .nalLengthSize(nalLengthSize)
    }
    guard !sps.isEmpty, !pps.isEmpty else { throw .avcCMissingParameterSets }
    self.profile = profile
    self.compatibility = compatibility
    self.level = level
    self.nalLengthSize = nalLengthSize
    self.sps = sps
    self.pps = pps
  }

  /// Parses an avcC record. Every length is checked against the record before it is used.
  public init(avcC bytes: some Collection<UInt8>) throws(FormatError) {
    let b = Array(bytes)
    guard b.count >= 7 else { throw .avcCTruncated(offset: b.count) }
    guard b[0] == 1 else { throw .avcCVersion(b[0]) }
    var offset = 6
    func parameterSets(count: Int) throws(FormatError) -> [[UInt8]] {
      var sets: [[UInt8]] = []
      for _ in 0..<count {
        guard offset + 2 <= b.count else { throw .avcCTruncated(offset: offset) }
        let length = Int(b[offset]) << 8 | Int(b[offset + 1])
        offset += 2
        guard offset + length <= b.count else { throw .avcCTruncated(offset: offset) }
        sets.append(Array(b[offset..<offset + length]))
        offset += length
      }
      return sets
    }
    let sps = try parameterSets(count: Int(b[5] & 0x1F))
    guard offset < b.count else { throw .avcCTruncated(offset: offset) }
    let ppsCount = Int(b[offset])
    offset += 1
    let pps = try parameterSets(count: ppsCount)
    try self.init(
      profile: b[1], compatibility: b[2], level: b[3], nalLengthSize: Int(b[4] & 0x03) + 1,
      sps: sps, pps: pps)
  }

  /// Serialises the configuration as an avcC record (the inverse of `init(avcC:)`).
  public var avcC: [UInt8] {
    var out: [UInt8] = [1, profile, compatibility, level, 0xFC | UInt8(nalLengthSize - 1)]
    out.append(0xE0 | UInt8(sps.count & 0x1F))
    for set in sps {
      out.append(UInt8(set.count >> 8))
      out.append(UInt8(set.count & 0xFF))
      out.append(contentsOf: set)
    }
    out.append(UInt8(pps.count))
    for set in pps {
      out.append(UInt8(set.count >> 8))
      out.append(UInt8(set.count & 0xFF))
      out.append(contentsOf: set)
    }
    return out
  }
}
