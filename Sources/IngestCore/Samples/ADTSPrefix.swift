/// An ADTS header found at the start of an AAC sample (ISO/IEC 13818-7, 6.2): producers that
/// take frames from an `.aac` file, or encoders set to ADTS output, deliver them with it, while
/// the dump format and the pipeline take raw frames (the TS packetizer writes its own header).
///
/// ```
/// 12 syncword 0xFFF | 1 ID | 2 layer (0) | 1 protection_absent
/// 2 profile (objectType-1) | 4 sampling_frequency_index | 1 private | 3 channel_configuration
/// 4 original, home, copyright bits | 13 frame_length (header included)
/// 11 buffer_fullness | 2 number_of_raw_data_blocks_in_frame - 1 [| 16 CRC when protected]
/// ```
public struct ADTSPrefix: Equatable, Sendable {
  /// Audio object type (profile + 1).
  public var objectType: Int
  public var sampleRateIndex: Int
  public var channels: Int
  /// frame_length: header and raw frame.
  public var frameLength: Int
  /// 7 bytes, or 9 with a CRC.
  public var headerSize: Int
  /// number_of_raw_data_blocks_in_frame + 1.
  public var rawDataBlocks: Int

  /// Parses the header at the start of `payload`; nil when the sample does not open with one:
  /// no syncword, layer not 0, or a frame_length other than the sample's size. The size check
  /// is what tells a header from a raw frame that happens to open with `FF F`: one in 8192.
  public init?(parsing payload: UnsafeRawBufferPointer) {
    guard payload.count >= 7, payload[0] == 0xFF, payload[1] & 0xF6 == 0xF0 else { return nil }
    headerSize = payload[1] & 0x01 == 0 ? 9 : 7
    guard payload.count >= headerSize else { return nil }
    objectType = Int(payload[2] >> 6) + 1
    sampleRateIndex = Int(payload[2] >> 2 & 0x0F)
    channels = Int(payload[2] & 0x01) << 2 | Int(payload[3] >> 6)
    frameLength = Int(payload[3] & 0x03) << 11 | Int(payload[4]) << 3 | Int(payload[5] >> 5)
    rawDataBlocks = Int(payload[6] & 0x03) + 1
    guard frameLength == payload.count, frameLength > headerSize else { return nil }
  }

  /// Checks the header against the track's configuration.
  /// - Throws: `FormatError.adtsConfigurationMismatch` naming the first field that differs,
  ///   `.adtsRawDataBlocks` when the frame holds more than one raw data block.
  public func validate(against format: AACFormat) throws(FormatError) {
    if objectType != format.objectType {
      throw .adtsConfigurationMismatch(
        field: "object type", header: objectType, config: format.objectType)
    }
    if sampleRateIndex != format.sampleRateIndex {
      throw .adtsConfigurationMismatch(
        field: "sampling frequency index", header: sampleRateIndex,
        config: format.sampleRateIndex)
    }
    if channels != format.channels {
      throw .adtsConfigurationMismatch(
        field: "channel configuration", header: channels, config: format.channels)
    }
    guard rawDataBlocks == 1 else { throw .adtsRawDataBlocks(rawDataBlocks) }
  }
}
