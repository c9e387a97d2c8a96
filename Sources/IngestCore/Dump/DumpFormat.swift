/// Constants and shared checks of the captured-sample dump format (`docs/dump-format.md`).
///
/// ```
/// file   = header record*
/// header = magic "INGDUMP\0" (8) | version u16 LE (1) | reserved u16 LE (0)
/// record = type u8 | length u32 LE | payload (length bytes) | CRC-32/MPEG-2 u32 LE
///          (the CRC covers type, length and payload)
/// ```
public enum DumpFormat {
  /// The eight bytes every dump starts with: ASCII "INGDUMP" and a NUL.
  public static let magic: [UInt8] = [0x49, 0x4E, 0x47, 0x44, 0x55, 0x4D, 0x50, 0x00]
  /// The format version this code reads and writes.
  public static let version: UInt16 = 1
  /// Size of the file header (magic, version, reserved).
  public static let headerSize = 12
  /// Bytes before a record's payload: type and length.
  public static let recordHeaderSize = 5
  /// Bytes after a record's payload: the CRC.
  public static let crcSize = 4
  /// The largest payload a record may declare (8 MiB); larger lengths are an error, so a corrupt
  /// length field can never make a reader allocate more than this.
  public static let maximumPayloadSize = 8 << 20
  /// Fixed part of a sample record payload before the encoded bytes.
  public static let sampleHeaderSize = 26
  /// Fixed part of a format record payload before the configuration bytes.
  public static let formatHeaderSize = 2
  /// Size of an event record payload in version 1.
  public static let eventSize = 14

  /// Record type codes.
  public enum RecordType: UInt8, Sendable {
    /// Codec configuration for one sample kind.
    case format = 1
    /// One encoded access unit.
    case sample = 2
    /// A timeline event such as an audio interruption.
    case event = 3
  }

  /// Codec codes of a format record.
  public enum Codec: UInt8, Sendable {
    /// H.264; configuration bytes are an avcC record.
    case h264 = 1
    /// AAC; configuration bytes are an AudioSpecificConfig.
    case aac = 2
    /// HEVC; configuration bytes are an hvcC record.
    case hevc = 3

    /// Whether the codec is for the video kind (the others are for the two audio kinds).
    public var isVideo: Bool { self != .aac }
  }

  /// Sample record flag bits.
  public static let keyframeFlag: UInt8 = 0x01
  /// Set when the sample carries a decode timestamp.
  public static let hasDTSFlag: UInt8 = 0x02

  /// Checks that the length-prefixed NAL units of a video sample (H.264 or HEVC) exactly fill it.
  ///
  /// - Returns: `nil` when valid, else the error naming the byte offset (within the sample) of the
  ///   length prefix that points past the end. O(number of NAL units), no allocation.
  public static func validateNALUnits(_ payload: UnsafeRawBufferPointer, lengthSize: Int)
    -> FormatError?
  {
    do {
      try AVCCScanner.forEachNAL(in: payload, lengthSize: lengthSize) { _, _ in }
      return nil
    } catch {
      return error
    }
  }
}
