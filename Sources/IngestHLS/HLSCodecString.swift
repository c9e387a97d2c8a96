import IngestCore

/// The `CODECS` attribute values of a multivariant playlist (RFC 6381, as RFC 8216bis 4.4.6.2
/// asks): `avc1.PPCCLL` for H.264, `hvc1.…` for HEVC (ISO/IEC 14496-15 E.3), `mp4a.40.N` for AAC.
public enum HLSCodecString {
  /// The string for one track's format.
  public static func of(_ format: FormatDescription) -> String {
    switch format {
    case .h264(let h264): return h264String(h264)
    case .hevc(let hevc): return hevcString(hevc.sequence)
    case .aac(let aac): return "mp4a.40.\(aac.objectType)"
    }
  }

  /// `avc1.` and profile_idc, the constraint flags byte and level_idc, as hex.
  static func h264String(_ format: H264Format) -> String {
    "avc1." + hex(format.profile) + hex(format.compatibility) + hex(format.level)
  }

  /// `hvc1.` profile space letter and profile_idc, the compatibility flags in reverse bit order
  /// (hex, no leading zeros), tier letter and level_idc, and the constraint bytes down to the
  /// last non-zero one.
  static func hevcString(_ sps: HEVCSequenceParameterSet) -> String {
    let space = ["", "A", "B", "C"][Int(sps.profileSpace & 3)]
    var reversed: UInt32 = 0
    for bit in 0..<32 where sps.compatibilityFlags & (1 << bit) != 0 {
      reversed |= 1 << (31 - bit)
    }
    var text =
      "hvc1.\(space)\(sps.profileIDC).\(String(reversed, radix: 16, uppercase: true))"
      + ".\(sps.isHighTier ? "H" : "L")\(sps.levelIDC)"
    // 48 bits of constraint flags, six bytes from the most significant; trailing zero bytes
    // are left out.
    var bytes = (0..<6).map { UInt8(truncatingIfNeeded: sps.constraintFlags >> (8 * (5 - $0))) }
    while let last = bytes.last, last == 0 { bytes.removeLast() }
    for byte in bytes { text += "." + String(byte, radix: 16, uppercase: true) }
    return text
  }

  private static func hex(_ byte: UInt8) -> String {
    let digits = String(byte, radix: 16, uppercase: true)
    return digits.count == 1 ? "0" + digits : digits
  }
}
