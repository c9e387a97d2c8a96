import IngestCore

/// Parses a fuzzed AudioSpecificConfig, writes the ADTS header of a fuzzed raw frame, and
/// packetizes it, checking that an accepted configuration round-trips and that the header
/// describes exactly what it announces.
///
/// Input: length byte n, n bytes of AudioSpecificConfig, then the raw AAC frame.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAAC(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  var input = FuzzInput(UnsafeRawBufferPointer(start: data, count: size))
  let config = input.take(Int(input.byte()))
  let frame = input.rest()

  var format = FallbackFormats.aac
  do {
    format = try AACFormat(audioSpecificConfig: config)
    require((1...4).contains(format.objectType), "object type \(format.objectType) accepted")
    require((1...7).contains(format.channels), "channel configuration \(format.channels) accepted")
    require(format.frameTicks90k > 0, "zero frame duration")
    let again = try AACFormat(audioSpecificConfig: format.audioSpecificConfig)
    require(again == format, "AudioSpecificConfig round trip changed the format")
  } catch {}

  do {
    let header = try ADTSHeader(format: format, payloadSize: frame.count)
    let bytes = header.bytes
    require(bytes.count == ADTSHeader.size, "ADTS header of \(bytes.count) bytes")
    require(bytes[0] == 0xFF && bytes[1] & 0xF6 == 0xF0, "no ADTS sync word")
    let length = Int(bytes[3] & 0x03) << 11 | Int(bytes[4]) << 3 | Int(bytes[5]) >> 5
    require(length == frame.count + ADTSHeader.size, "frame_length \(length) for \(frame.count)")
    require(Int(bytes[2] >> 6) == format.objectType - 1, "profile field")
    require(Int(bytes[2] >> 2 & 0x0F) == format.sampleRateIndex, "sampling index field")
    require(Int(bytes[2] & 1) << 2 | Int(bytes[3] >> 6) == format.channels, "channel field")
  } catch {
    require(frame.count > ADTSHeader.maximumPayloadSize, "refused a frame of \(frame.count) bytes")
  }

  let packetizer = TSPacketizer(program: TSProgram(audioApp: format, audioMic: format))
  let maximum = TSPacketizer.maximumPacketizedSize(
    payloadSize: frame.count, kind: .audioMic, format: .aac(format))
  var packets = [UInt8](repeating: 0, count: maximum)
  do {
    let unit = try packets.withUnsafeMutableBytes {
      try packetizer.packetize(
        kind: .audioMic, pts: Int64(size) << 28, dts: Int64(size) << 28, isKeyframe: true,
        payload: frame, into: $0)
    }
    require(unit.byteCount == unit.packetCount * 188 && unit.byteCount <= maximum, "TS size")
  } catch {
    require(frame.count > ADTSHeader.maximumPayloadSize, "packetizer refused \(frame.count) bytes")
  }
  return 0
}
