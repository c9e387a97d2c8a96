/// What went wrong reading or writing a dump, and where (byte offsets are from the file start;
/// record offsets point at the record's type byte).
///
/// Fatal errors mean the framing is lost: the reader repeats the error on every later `next()`.
/// Recoverable errors (`isRecoverable`) concern one record whose framing and CRC were correct but
/// whose content is invalid: that record is skipped and `next()` may be called again.
public enum DumpError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The file does not start with "INGDUMP\0". Fatal.
  case badMagic
  /// The header names a version this reader does not know. Fatal.
  case unsupportedVersion(UInt16)
  /// The input ended inside the header or the record starting at `offset`. Fatal.
  case truncated(offset: Int64)
  /// The record at `offset` fails its CRC: corrupt bytes. Fatal, since its length is suspect.
  case crcMismatch(offset: Int64, recordType: UInt8)
  /// The record at `offset` declares a payload above `DumpFormat.maximumPayloadSize`. Fatal.
  case recordTooLarge(offset: Int64, size: Int)
  /// A record at `offset` names a sample kind that does not exist. Recoverable.
  case unknownKind(offset: Int64, kind: UInt8)
  /// A format record at `offset` names a codec that does not exist. Recoverable.
  case unknownCodec(offset: Int64, codec: UInt8)
  /// An event record at `offset` has an unknown event code. Recoverable.
  case unknownEvent(offset: Int64, code: UInt8)
  /// A record at `offset` carries a timestamp with a zero or negative timescale. Recoverable.
  case invalidTimestamp(offset: Int64)
  /// The sample at `offset` arrived before any format record for its kind. Recoverable.
  case missingFormat(offset: Int64, kind: SampleKind)
  /// The record at `offset` is inconsistent (too short for its fields, empty sample, codec that
  /// does not fit the kind). Recoverable.
  case malformedRecord(offset: Int64, recordType: UInt8, reason: String)
  /// The codec configuration or the NAL framing of the record at `offset` is invalid. Recoverable.
  case format(offset: Int64, FormatError)
  /// The byte source or sink failed at `offset`. Fatal.
  case io(offset: Int64, description: String)

  /// True when only the record at fault was skipped and reading may continue.
  public var isRecoverable: Bool {
    switch self {
    case .badMagic, .unsupportedVersion, .truncated, .crcMismatch, .recordTooLarge, .io: false
    case .unknownKind, .unknownCodec, .unknownEvent, .invalidTimestamp, .missingFormat,
      .malformedRecord, .format:
      true
    }
  }

  /// The byte offset the error refers to, if any.
  public var offset: Int64? {
    switch self {
    case .badMagic, .unsupportedVersion: 0
    case .truncated(let offset), .crcMismatch(let offset, _), .recordTooLarge(let offset, _),
      .unknownKind(let offset, _), .unknownCodec(let offset, _), .unknownEvent(let offset, _),
      .invalidTimestamp(let offset), .missingFormat(let offset, _),
      .malformedRecord(let offset, _, _), .format(let offset, _), .io(let offset, _):
      offset
    }
  }

  public var description: String {
    switch self {
    case .badMagic: "not a dump: the file does not start with \"INGDUMP\\0\""
    case .unsupportedVersion(let version):
      "dump format version \(version) is not supported (this reader knows version \(DumpFormat.version))"
    case .truncated(let offset): "dump truncated in the record at byte \(offset)"
    case .crcMismatch(let offset, let type):
      "CRC mismatch in the record at byte \(offset) (type \(type)): the dump is corrupt"
    case .recordTooLarge(let offset, let size):
      "record at byte \(offset) declares \(size) bytes, above the \(DumpFormat.maximumPayloadSize)-byte maximum"
    case .unknownKind(let offset, let kind): "record at byte \(offset): unknown sample kind \(kind)"
    case .unknownCodec(let offset, let codec): "record at byte \(offset): unknown codec \(codec)"
    case .unknownEvent(let offset, let code): "record at byte \(offset): unknown event code \(code)"
    case .invalidTimestamp(let offset):
      "record at byte \(offset): timestamp with a zero or negative timescale"
    case .missingFormat(let offset, let kind):
      "sample at byte \(offset): no format record for \(kind) before it"
    case .malformedRecord(let offset, let type, let reason):
      "record at byte \(offset) (type \(type)) is malformed: \(reason)"
    case .format(let offset, let error):
      "record at byte \(offset): \(error)"
    case .io(let offset, let description): "I/O error at byte \(offset): \(description)"
    }
  }
}
