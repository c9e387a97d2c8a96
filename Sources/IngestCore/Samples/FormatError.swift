/// Errors raised while parsing codec configuration and encoded payloads.
public enum FormatError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The avcC record is shorter than its own fields say (`offset` is where it ran out).
  case avcCTruncated(offset: Int)
  /// The avcC record's version byte is not 1.
  case avcCVersion(UInt8)
  /// lengthSizeMinusOne gave a NAL length size other than 1, 2 or 4.
  case nalLengthSize(Int)
  /// The avcC record holds no SPS or no PPS.
  case avcCMissingParameterSets
  /// A NAL length prefix at `offset` points past the end of the sample (`length` bytes claimed).
  case nalLengthPastEnd(offset: Int, length: Int)
  /// The AudioSpecificConfig is shorter than two bytes, or than its own fields.
  case audioSpecificConfigTruncated
  /// The AAC object type cannot be carried: only types 1 to 4 fit ADTS's 2-bit profile, and
  /// every output times AAC in frames of 1024 samples.
  case aacObjectType(Int)
  /// A sampling frequency index of 13-14 or an explicit rate ADTS cannot express.
  case aacSampleRate(Int)
  /// A channel configuration of 0 (program config element) or above 7.
  case aacChannelConfiguration(Int)
  /// An AAC frame too large for the 13-bit ADTS frame length.
  case aacFrameTooLarge(Int)
  /// The hvcC record is shorter than its own fields say (`offset` is where it ran out).
  case hvcCTruncated(offset: Int)
  /// The hvcC record's configurationVersion is not 1.
  case hvcCVersion(UInt8)
  /// The parameter set at `offset` of the hvcC record has no 2-byte NAL header, or its
  /// nal_unit_type (`found`) is not the type of the array holding it.
  case hvcCParameterSet(offset: Int, found: UInt8)
  /// An HEVC parameter set that an hvcC record cannot hold: shorter than its NAL header,
  /// above 65535 bytes (or one of more than 65535 sets), or not of the type of its array.
  case hevcParameterSet(type: UInt8, length: Int)
  /// The HEVC configuration lacks a VPS, an SPS or a PPS.
  case hevcMissingParameterSets
  /// The first HEVC SPS ends or breaks a limit inside the field named by `field`.
  case hevcSequenceParameterSet(field: String)
  /// A video sample in Annex B form (start codes) where the track's format record announces
  /// `lengthSize`-byte NAL length prefixes (AVCC), as VideoToolbox delivers them.
  case annexBStartCodes(lengthSize: Int)
  /// An ADTS header at the start of an AAC sample announces another stream than the track's
  /// AudioSpecificConfig: `field` differs, `header` is the header's value, `config` the
  /// configuration's.
  case adtsConfigurationMismatch(field: String, header: Int, config: Int)
  /// An ADTS header holding more than one raw data block: not one AAC frame per sample.
  case adtsRawDataBlocks(Int)

  public var description: String {
    switch self {
    case .avcCTruncated(let offset): "avcC record truncated at byte \(offset)"
    case .avcCVersion(let version): "avcC configurationVersion \(version), expected 1"
    case .nalLengthSize(let size): "NAL length size \(size), expected 1, 2 or 4"
    case .avcCMissingParameterSets: "avcC record has no SPS or no PPS"
    case .nalLengthPastEnd(let offset, let length):
      "NAL unit at byte \(offset) claims \(length) bytes past the end of the sample"
    case .audioSpecificConfigTruncated: "AudioSpecificConfig shorter than its fields"
    case .aacObjectType(let type):
      "\(AACFormat.objectTypeName(type)) (object type \(type)) cannot be carried: "
        + (type == 23 || type == 39 ? "its frames are 480 or 512 samples; " : "")
        + "the outputs carry AAC object types 1 to 4 (ADTS's profiles) in frames of 1024 samples"
    case .aacSampleRate(let rate): "AAC sampling frequency \(rate) cannot be carried in ADTS"
    case .aacChannelConfiguration(let config): "AAC channel configuration \(config) unsupported"
    case .aacFrameTooLarge(let size): "AAC frame of \(size) bytes exceeds the ADTS limit"
    case .hvcCTruncated(let offset): "hvcC record truncated at byte \(offset)"
    case .hvcCVersion(let version): "hvcC configurationVersion \(version), expected 1"
    case .hvcCParameterSet(let offset, let found):
      "hvcC parameter set at byte \(offset) is malformed (nal_unit_type \(found))"
    case .hevcParameterSet(let type, let length):
      "HEVC parameter set of nal_unit_type \(type) and \(length) bytes cannot be described"
    case .hevcMissingParameterSets: "HEVC configuration has no VPS, SPS or PPS"
    case .hevcSequenceParameterSet(let field): "HEVC SPS malformed at \(field)"
    case .annexBStartCodes(let lengthSize):
      "video sample carries Annex B start codes instead of the \(lengthSize)-byte NAL length "
        + "prefixes its format record announces"
    case .adtsConfigurationMismatch(let field, let header, let config):
      "ADTS header says \(field) \(header), the track's AudioSpecificConfig says \(config)"
    case .adtsRawDataBlocks(let count):
      "ADTS header holds \(count) raw data blocks, expected one AAC frame per sample"
    }
  }
}
