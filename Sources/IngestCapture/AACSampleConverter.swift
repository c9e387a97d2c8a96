import IngestCore

/// Turns the AAC packets of one stream into raw frames and an AudioSpecificConfig-derived format,
/// stripping ADTS headers (MPEG-TS, .aac files) when present.
public struct AACSampleConverter {
  /// The configuration in force (from the container, or from the first ADTS header).
  public private(set) var format: AACFormat?
  private let stream: Int

  public init(extradata: [UInt8], stream: Int) throws(CaptureError) {
    self.stream = stream
    if !extradata.isEmpty {
      do {
        format = try AACFormat(audioSpecificConfig: extradata)
      } catch {
        throw .aac(stream: stream, packet: -1, reason: "\(error)")
      }
    }
  }

  /// Converts one packet.
  ///
  /// - Returns: the raw frame and whether the configuration changed with this packet.
  public mutating func convert(_ data: [UInt8], packet: Int) throws(CaptureError) -> (
    payload: [UInt8]?, formatChanged: Bool
  ) {
    guard data.count >= 7, data[0] == 0xFF, data[1] & 0xF6 == 0xF0 else {
      guard format != nil else {
        throw .aac(
          stream: stream, packet: packet, reason: "no AudioSpecificConfig and no ADTS header")
      }
      return (data.isEmpty ? nil : data, false)
    }
    let protectionAbsent = data[1] & 0x01 != 0
    let headerSize = protectionAbsent ? 7 : 9
    let frameLength = Int(data[3] & 0x03) << 11 | Int(data[4]) << 3 | Int(data[5] >> 5)
    guard frameLength == data.count, frameLength > headerSize else {
      throw .aac(
        stream: stream, packet: packet,
        reason: "ADTS frame length \(frameLength) does not match the \(data.count)-byte packet")
    }
    let objectType = Int(data[2] >> 6) + 1
    let rateIndex = Int(data[2] >> 2 & 0x0F)
    let channels = Int(data[2] & 0x01) << 2 | Int(data[3] >> 6)
    guard rateIndex < AACFormat.sampleRates.count else {
      throw .aac(
        stream: stream, packet: packet, reason: "ADTS sampling frequency index \(rateIndex)")
    }
    let parsed: AACFormat
    do {
      parsed = try AACFormat(
        objectType: objectType, sampleRate: AACFormat.sampleRates[rateIndex], channels: channels)
    } catch {
      throw .aac(stream: stream, packet: packet, reason: "\(error)")
    }
    var changed = false
    if parsed != format {
      format = parsed
      changed = true
    }
    return (Array(data[headerSize...]), changed)
  }
}
