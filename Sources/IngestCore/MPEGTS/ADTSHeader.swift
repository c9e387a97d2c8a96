/// The 7-byte ADTS header (no CRC) that makes a raw AAC frame self-describing
/// (ISO/IEC 13818-7, 6.2; ISO/IEC 14496-3, 1.A.2.2).
///
/// ```
/// FFF  sync | 0 ID (MPEG-4) | 00 layer | 1 protection_absent
/// 2 profile (objectType-1) | 4 sampling_frequency_index | 0 private | 3 channel_configuration
/// 0 0 0 0 (original, home, copyright) | 13 frame_length (header included)
/// 11 buffer_fullness (0x7FF, VBR) | 2 number_of_raw_data_blocks_in_frame - 1 (0)
/// ```
public struct ADTSHeader: Equatable, Sendable {
  /// Bytes of the header.
  public static let size = 7
  /// The largest raw frame whose ADTS frame length (header included) fits in 13 bits.
  public static let maximumPayloadSize = 0x1FFF - size

  /// The stream configuration the header announces.
  public var format: AACFormat
  /// Bytes of the raw AAC frame that follows.
  public var payloadSize: Int

  /// Creates a header for a raw frame of `payloadSize` bytes.
  /// - Throws: `FormatError.aacFrameTooLarge` when the frame does not fit in 13 bits.
  public init(format: AACFormat, payloadSize: Int) throws(FormatError) {
    guard (0...Self.maximumPayloadSize).contains(payloadSize) else {
      throw .aacFrameTooLarge(payloadSize)
    }
    self.format = format
    self.payloadSize = payloadSize
  }

  /// frame_length: header plus raw frame.
  public var frameLength: Int { Self.size + payloadSize }

  /// Writes the header at `offset` of `out`.
  public func write(to out: UnsafeMutableRawBufferPointer, at offset: Int) {
    var sink = FlatByteWriter(
      UnsafeMutableRawBufferPointer(rebasing: out[offset..<offset + Self.size]))
    write(into: &sink)
  }

  /// The header bytes.
  public var bytes: [UInt8] {
    var result = [UInt8](repeating: 0, count: Self.size)
    result.withUnsafeMutableBytes { write(to: $0, at: 0) }
    return result
  }

  func write<Sink: PacketByteWriter>(into sink: inout Sink) {
    let profile = UInt8(format.objectType - 1)
    let index = UInt8(format.sampleRateIndex)
    let channels = UInt8(format.channels)
    let length = frameLength
    sink.write(byte: 0xFF)
    sink.write(byte: 0xF1)
    sink.write(byte: profile << 6 | index << 2 | channels >> 2)
    sink.write(byte: (channels & 0x03) << 6 | UInt8(length >> 11))
    sink.write(byte: UInt8(length >> 3 & 0xFF))
    sink.write(byte: UInt8(length & 0x07) << 5 | 0x1F)
    sink.write(byte: 0xFC)
  }
}
