/// Constants and small writers for 188-byte transport stream packets (ISO/IEC 13818-1, 2.4.3).
///
/// ```
/// byte 0   0x47 sync
/// byte 1   TEI | PUSI | priority | PID[12..8]
/// byte 2   PID[7..0]
/// byte 3   scrambling(2) | adaptation_field_control(2) | continuity_counter(4)
/// byte 4.. [adaptation field: length, flags, PCR(6), stuffing...] [payload]
/// ```
public enum TSPacket {
  /// Bytes in every transport packet.
  public static let size = 188
  /// Bytes of the fixed packet header.
  public static let headerSize = 4
  /// Payload bytes in a packet without an adaptation field.
  public static let maximumPayloadSize = size - headerSize
  /// The first byte of every packet.
  public static let syncByte: UInt8 = 0x47

  /// PID of the program association table.
  public static let patPID: UInt16 = 0x0000
  /// PID of the program map table of our single program.
  public static let pmtPID: UInt16 = 0x1000
  /// PID of the video elementary stream (H.264 or HEVC).
  public static let videoPID: UInt16 = 0x0100
  /// PID of the app audio elementary stream.
  public static let audioAppPID: UInt16 = 0x0101
  /// PID of the microphone audio elementary stream.
  public static let audioMicPID: UInt16 = 0x0102

  /// stream_type of H.264 video (ITU-T H.264 | ISO/IEC 14496-10).
  public static let streamTypeH264: UInt8 = 0x1B
  /// stream_type of HEVC video (ITU-T H.265 | ISO/IEC 23008-2).
  public static let streamTypeHEVC: UInt8 = 0x24
  /// stream_type of AAC audio in ADTS (ISO/IEC 13818-7).
  public static let streamTypeAACADTS: UInt8 = 0x0F

  /// adaptation_field_control: payload only.
  public static let payloadOnly: UInt8 = 0x10
  /// adaptation_field_control: adaptation field only, no payload.
  public static let adaptationOnly: UInt8 = 0x20
  /// adaptation_field_control: adaptation field followed by payload.
  public static let adaptationAndPayload: UInt8 = 0x30

  /// Adaptation field flag: discontinuity_indicator.
  public static let discontinuityFlag: UInt8 = 0x80
  /// Adaptation field flag: random_access_indicator.
  public static let randomAccessFlag: UInt8 = 0x40
  /// Adaptation field flag: PCR_flag.
  public static let pcrFlag: UInt8 = 0x10

  /// Adaptation field bytes (length byte included) that carry flags and a PCR.
  public static let pcrAdaptationFieldSize = 8
  /// Adaptation field bytes (length byte included) that carry flags only.
  public static let flagsAdaptationFieldSize = 2

  /// The PID of a sample kind's elementary stream.
  @inlinable public static func pid(for kind: SampleKind) -> UInt16 {
    switch kind {
    case .video: videoPID
    case .audioApp: audioAppPID
    case .audioMic: audioMicPID
    }
  }

  /// The PID field of the packet starting at `offset`.
  static func pid(of packet: UnsafeMutableRawBufferPointer, at offset: Int) -> UInt16 {
    UInt16(packet[offset + 1] & 0x1F) << 8 | UInt16(packet[offset + 2])
  }

  /// Writes the four header bytes with a continuity counter of 0.
  static func writeHeader(
    _ out: UnsafeMutableRawBufferPointer, at offset: Int, pid: UInt16, unitStart: Bool,
    adaptationFieldControl: UInt8
  ) {
    out[offset] = syncByte
    out[offset + 1] = (unitStart ? 0x40 : 0) | UInt8(pid >> 8 & 0x1F)
    out[offset + 2] = UInt8(pid & 0xFF)
    out[offset + 3] = adaptationFieldControl
  }

  /// Writes an adaptation field of exactly `size` bytes (length byte included) with `flags`,
  /// filling the rest with 0xFF stuffing.
  ///
  /// A 1-byte field is only its length byte (0) and has no flags byte; callers pass flags only
  /// with `size >= 2`.
  static func writeAdaptationField(
    _ out: UnsafeMutableRawBufferPointer, at offset: Int, size: Int, flags: UInt8
  ) {
    out[offset] = UInt8(size - 1)
    guard size >= 2 else { return }
    out[offset + 1] = flags
    var index = offset + 2
    while index < offset + size {
      out[index] = 0xFF
      index += 1
    }
  }

  /// Writes a program clock reference (base 33 bits, 6 reserved bits, extension 9 bits).
  ///
  /// `base` is reduced modulo 2^33.
  static func writePCR(
    _ out: UnsafeMutableRawBufferPointer, at offset: Int, base: Int64, extension ext: Int = 0
  ) {
    let b = UInt64(bitPattern: base) & 0x1_FFFF_FFFF
    out[offset] = UInt8(truncatingIfNeeded: b >> 25)
    out[offset + 1] = UInt8(truncatingIfNeeded: b >> 17)
    out[offset + 2] = UInt8(truncatingIfNeeded: b >> 9)
    out[offset + 3] = UInt8(truncatingIfNeeded: b >> 1)
    out[offset + 4] = UInt8(truncatingIfNeeded: (b & 1) << 7) | 0x7E | UInt8(ext >> 8 & 1)
    out[offset + 5] = UInt8(truncatingIfNeeded: ext)
  }
}
