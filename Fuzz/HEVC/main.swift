import IngestCore

/// Parses a fuzzed hvcC record and walks a fuzzed length-prefixed HEVC access unit, converting
/// it to Annex B: checks that the walk agrees with the dump's validation, that the measured size
/// holds and stays inside its bound, that the delimiter comes first, and that an accepted hvcC
/// survives a round trip.
///
/// Input: flags byte (bit 0 keyframe, bits 1-2 NAL length size of the fallback format), u16
/// hvcC length, the hvcC bytes, then the access unit. When the hvcC does not parse, the access
/// unit is still walked with a fixture format.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHEVC(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  var input = FuzzInput(UnsafeRawBufferPointer(start: data, count: size))
  let flags = input.byte()
  let isKeyframe = flags & 1 != 0
  let hvcC = input.take(input.uint16())
  let sample = input.rest()

  var format: HEVCFormat
  do {
    format = try HEVCFormat(hvcC: hvcC)
    let again = try HEVCFormat(hvcC: format.hvcC)
    require(again == format, "hvcC round trip changed the format")
  } catch {
    let sizes = [4, 1, 2, 4]
    format = FallbackFormats.hevc(nalLengthSize: sizes[Int(flags >> 1) & 3])
  }

  let summary: AVCCSummary
  do {
    summary = try VideoFormat.hevc(format).summarize(sample)
  } catch {
    require(
      DumpFormat.validateNALUnits(sample, lengthSize: format.nalLengthSize) != nil,
      "the HEVC walk refuses what validation accepts")
    return 0
  }
  require(
    DumpFormat.validateNALUnits(sample, lengthSize: format.nalLengthSize) == nil,
    "validation refuses what the HEVC walk accepts")
  require(
    summary.describes(sample, lengthSize: format.nalLengthSize),
    "the walk names another payload")

  let layout = HEVCAnnexB.inspect(
    summary: summary, parameterSetsSize: HEVCAnnexB.parameterSetsSize(format),
    isKeyframe: isKeyframe)
  let bound = HEVCAnnexB.maximumSize(payloadSize: sample.count, format: format)
  require(layout.size <= bound, "Annex B size \(layout.size) above its bound \(bound)")
  var out = [UInt8](repeating: 0, count: bound)
  let written = try? out.withUnsafeMutableBytes {
    try HEVCAnnexB.convert(sample: sample, format: format, isKeyframe: isKeyframe, into: $0)
  }
  require(
    written == layout.size, "Annex B wrote \(String(describing: written)) of \(layout.size) bytes")
  require(
    out.starts(with: [0, 0, 0, 1, 0x46, UInt8(summary.temporalID + 1), 0x50]),
    "no access unit delimiter first")
  if layout.insertsParameterSets {
    require(
      out[HEVCAnnexB.audSize...].starts(with: [0, 0, 0, 1] + format.vps[0]),
      "parameter sets not right after the delimiter")
  }

  // The same unit through the TS packetizer, into a buffer of exactly the announced bound.
  let packetizer = TSPacketizer(program: TSProgram(video: format))
  let maximum = TSPacketizer.maximumPacketizedSize(
    payloadSize: sample.count, kind: .video, format: .hevc(format))
  var packets = [UInt8](repeating: 0, count: maximum)
  let pts = Int64(flags) << 30
  do {
    let unit = try packets.withUnsafeMutableBytes {
      try packetizer.packetize(
        kind: .video, pts: pts, dts: pts - 3000, isKeyframe: isKeyframe, payload: sample,
        nalUnits: summary, into: $0)
    }
    require(unit.byteCount == unit.packetCount * 188, "partial TS packet")
    require(unit.byteCount <= maximum, "packetized \(unit.byteCount) bytes above \(maximum)")
    for index in 0..<unit.packetCount { require(packets[index * 188] == 0x47, "lost sync byte") }
  } catch {
    require(false, "the packetizer refuses what the HEVC walk accepts: \(error)")
  }
  return 0
}
