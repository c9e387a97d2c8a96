import IngestCore

/// Reads a fuzzed dump to its end, as `ingest replay` and `ingest inspect` do, and checks:
/// reading terminates, the buffer grows only with arrived bytes, a fatal error repeats, every
/// sample the reader accepts converts to Annex B, and the inspector agrees on the outcome.
///
/// Input: one mode byte (bit 0: repair record CRCs so mutations reach the decoders; bits 1-3:
/// read size of the source), then the dump bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDumpReader(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  var input = FuzzInput(UnsafeRawBufferPointer(start: data, count: size))
  let mode = input.byte()
  var dump = Array(input.rest())
  if mode & 1 != 0 { repairRecordCRCs(&dump) }
  let chunks = [Int.max, 1, 3, 7, 64, 4096, 65536, 100_000]
  let chunk = chunks[Int(mode >> 1) & 7]

  var reader = DumpReader(source: MemorySource(dump, chunk: chunk))
  var scratch = [UInt8](repeating: 0, count: 0)
  var records = 0
  var invalid = 0
  var fatal: DumpError?
  // Every record takes at least 9 bytes, so more iterations than that mean the reader is stuck.
  let iterationLimit = dump.count / 9 + 2
  var iterations = 0
  while true {
    iterations += 1
    require(iterations <= iterationLimit + invalid, "reader does not advance")
    let record: DumpRecord?
    do {
      record = try reader.next()
    } catch {
      require(error.offset != nil && error.offset! >= 0, "error without offset: \(error)")
      require(error.offset! <= Int64(dump.count), "error offset past the input: \(error)")
      if error.isRecoverable {
        invalid += 1
        continue
      }
      fatal = error
      break
    }
    guard let record else { break }
    records += 1
    require(
      reader.bufferCapacity <= 2 * (dump.count + DumpReader<MemorySource>.readChunk) + 64,
      "reader buffer of \(reader.bufferCapacity) bytes for \(dump.count) bytes of input")
    guard case .sample(let header) = record else { continue }
    switch reader.format(for: header.kind) {
    case .h264(let format)?:
      reader.withPayload { payload in
        do {
          let info = try AnnexB.inspect(
            avcc: payload, format: format, isKeyframe: header.isKeyframe)
          let bound = AnnexB.maximumSize(payloadSize: payload.count, format: format)
          require(info.size <= bound, "Annex B size \(info.size) above its bound \(bound)")
          if scratch.count < info.size { scratch = [UInt8](repeating: 0, count: info.size) }
          let written = try scratch.withUnsafeMutableBytes { out in
            try AnnexB.convert(
              avcc: payload, format: format, isKeyframe: header.isKeyframe,
              into: UnsafeMutableRawBufferPointer(rebasing: out[..<info.size]))
          }
          require(written == info.size, "Annex B wrote \(written) of \(info.size) bytes")
        } catch {
          require(false, "the reader accepted a sample that Annex B refuses: \(error)")
        }
      }
    case .hevc(let format)?:
      reader.withPayload { payload in
        let bound = HEVCAnnexB.maximumSize(payloadSize: payload.count, format: format)
        if scratch.count < bound { scratch = [UInt8](repeating: 0, count: bound) }
        do {
          let written = try scratch.withUnsafeMutableBytes { out in
            try HEVCAnnexB.convert(
              sample: payload, format: format, isKeyframe: header.isKeyframe,
              into: UnsafeMutableRawBufferPointer(rebasing: out[..<bound]))
          }
          require(written <= bound, "HEVC Annex B size \(written) above its bound \(bound)")
        } catch {
          require(false, "the reader accepted a sample that HEVC Annex B refuses: \(error)")
        }
      }
    case .aac(let format)?:
      require(header.payloadSize > 0, "empty audio sample accepted")
      _ = try? ADTSHeader(format: format, payloadSize: header.payloadSize).bytes
    case nil:
      require(false, "sample accepted without a format")
    }
    let copy = reader.sampleCopy()
    require(copy?.payload.count == header.payloadSize, "sample copy of the wrong size")
  }
  if let fatal {
    do {
      _ = try reader.next()
      require(false, "a fatal error did not repeat")
    } catch {
      require(error == fatal, "fatal error changed from \(fatal) to \(error)")
    }
  }

  let inspection = DumpInspection(reading: MemorySource(dump, chunk: chunk))
  require(inspection.fatalError == fatal, "inspection and reader disagree on the fatal error")
  require(inspection.invalidRecords == invalid, "inspection and reader disagree on invalid records")
  for track in inspection.tracks { _ = track.duration }
  return 0
}
