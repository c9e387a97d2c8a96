import IngestCore

/// Parses a fuzzed avcC record and converts a fuzzed AVCC access unit to Annex B and to TS
/// packets, checking that the measured sizes hold, the output stays inside its bound, and an
/// accepted avcC survives a round trip.
///
/// Input: flags byte (bit 0 keyframe, bits 1-2 NAL length size of the fallback format), u16
/// avcC length, the avcC bytes, then the access unit. When the avcC does not parse, the access
/// unit is still converted with a fixture format.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAVCC(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  var input = FuzzInput(UnsafeRawBufferPointer(start: data, count: size))
  let flags = input.byte()
  let isKeyframe = flags & 1 != 0
  let avcC = input.take(input.uint16())
  let sample = input.rest()

  var format: H264Format
  do {
    format = try H264Format(avcC: avcC)
    let again = try H264Format(avcC: format.avcC)
    require(again == format, "avcC round trip changed the format")
  } catch {
    format = FallbackFormats.h264
    let sizes = [4, 1, 2, 4]
    format.nalLengthSize = sizes[Int(flags >> 1) & 3]
  }

  let scanned: Bool
  do {
    scanned = try AVCCScanner.summarize(sample, lengthSize: format.nalLengthSize).isDisposable
  } catch {
    require(
      DumpFormat.validateNALUnits(sample, lengthSize: format.nalLengthSize) != nil,
      "the scanner refuses what validation accepts")
    do {
      _ = try AnnexB.inspect(avcc: sample, format: format, isKeyframe: isKeyframe)
      require(false, "Annex B accepts what the scanner refuses")
    } catch {}
    return 0
  }
  require(
    DumpFormat.validateNALUnits(sample, lengthSize: format.nalLengthSize) == nil,
    "validation refuses what the scanner accepts")

  let info: AnnexB.AccessUnitInfo
  do {
    info = try AnnexB.inspect(avcc: sample, format: format, isKeyframe: isKeyframe)
  } catch {
    require(false, "Annex B refuses what the scanner accepts: \(error)")
    return 0
  }
  require(info.isDisposable == scanned, "Annex B and the scanner disagree on disposability")
  let bound = AnnexB.maximumSize(payloadSize: sample.count, format: format)
  require(info.size <= bound, "Annex B size \(info.size) above its bound \(bound)")
  var out = [UInt8](repeating: 0, count: info.size)
  let written = try? out.withUnsafeMutableBytes {
    try AnnexB.convert(avcc: sample, format: format, isKeyframe: isKeyframe, into: $0)
  }
  require(
    written == info.size, "Annex B wrote \(String(describing: written)) of \(info.size) bytes")
  // Every NAL of the output starts with a start code and the first one is our delimiter.
  require(out.starts(with: [0, 0, 0, 1, AnnexB.audType, 0xF0]), "no access unit delimiter first")

  // The same unit through the TS packetizer, into a buffer of exactly the announced bound.
  let packetizer = TSPacketizer(program: TSProgram(video: format))
  let maximum = TSPacketizer.maximumPacketizedSize(
    payloadSize: sample.count, kind: .video, format: .h264(format))
  var packets = [UInt8](repeating: 0, count: maximum)
  let pts = Int64(flags) << 30
  do {
    let unit = try packets.withUnsafeMutableBytes {
      try packetizer.packetize(
        kind: .video, pts: pts, dts: pts - 3000, isKeyframe: isKeyframe, payload: sample, into: $0)
    }
    require(unit.byteCount == unit.packetCount * 188, "partial TS packet")
    require(unit.byteCount <= maximum, "packetized \(unit.byteCount) bytes above \(maximum)")
    for index in 0..<unit.packetCount { require(packets[index * 188] == 0x47, "lost sync byte") }
  } catch {
    require(false, "the packetizer refuses what Annex B accepts: \(error)")
  }
  return 0
}
