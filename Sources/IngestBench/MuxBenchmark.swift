import IngestCore
import IngestPOSIX
import IngestRuntime

/// The throughput of our writers alone: every sample of the dump, held in memory, packetized
/// again and again on one core for a set time, by the MPEG-TS writer (`TSPacketizer`), then for
/// as long by the fragmented-MP4 writer (`MP4Fragmenter`, one `moof` + `mdat` per GOP, as the
/// `.mp4` recording and fMP4 HLS write them).
public enum MuxBenchmark {
  /// What the writer did.
  public struct Result: Sendable {
    public var passes = 0
    public var units = 0
    /// Encoded bytes in and transport-stream bytes out.
    public var inputBytes: Int64 = 0
    public var outputBytes: Int64 = 0
    public var seconds = 0.0
    /// Heap allocations per packetized unit (nil: not counted).
    public var allocationsPerUnit: Double?
    public var peakResident: Int?
    /// The fragmented-MP4 writer over the same units: units, bytes in and out, time, and heap
    /// allocations per unit.
    public var mp4Units = 0
    public var mp4InputBytes: Int64 = 0
    public var mp4OutputBytes: Int64 = 0
    public var mp4Seconds = 0.0
    public var mp4AllocationsPerUnit: Double?

    public init() {}

    /// The MP4 writer's MB (10^6 bytes) per second in and out.
    public var mp4InputMegabytesPerSecond: Double {
      mp4Seconds > 0 ? Double(mp4InputBytes) / mp4Seconds / 1e6 : 0
    }
    public var mp4OutputMegabytesPerSecond: Double {
      mp4Seconds > 0 ? Double(mp4OutputBytes) / mp4Seconds / 1e6 : 0
    }

    /// MB (10^6 bytes) per second.
    public var inputMegabytesPerSecond: Double {
      seconds > 0 ? Double(inputBytes) / seconds / 1e6 : 0
    }
    public var outputMegabytesPerSecond: Double {
      seconds > 0 ? Double(outputBytes) / seconds / 1e6 : 0
    }

    public var json: JSONObject {
      var object = JSONObject()
      object.add("scenario", "mux")
      object.add("setup", BenchScenario.mux.summary)
      object.add("passes", passes)
      object.add("units", units)
      object.add("input_bytes", inputBytes)
      object.add("output_bytes", outputBytes)
      object.add("seconds", seconds)
      object.add("input_mb_s", inputMegabytesPerSecond, decimals: 1)
      object.add("output_mb_s", outputMegabytesPerSecond, decimals: 1)
      if let allocationsPerUnit {
        object.add("allocs_per_unit", allocationsPerUnit, decimals: 4)
      } else {
        object.addNull("allocs_per_unit")
      }
      if let peakResident {
        object.add("peak_resident", peakResident)
      } else {
        object.addNull("peak_resident")
      }
      object.add("mp4_units", mp4Units)
      object.add("mp4_input_bytes", mp4InputBytes)
      object.add("mp4_output_bytes", mp4OutputBytes)
      object.add("mp4_seconds", mp4Seconds)
      object.add("mp4_input_mb_s", mp4InputMegabytesPerSecond, decimals: 1)
      object.add("mp4_output_mb_s", mp4OutputMegabytesPerSecond, decimals: 1)
      if let mp4AllocationsPerUnit {
        object.add("mp4_allocs_per_unit", mp4AllocationsPerUnit, decimals: 4)
      } else {
        object.addNull("mp4_allocs_per_unit")
      }
      return object
    }

    public init?(json: JSONValue) {
      guard json["scenario"]?.string == "mux" else { return nil }
      passes = json["passes"]?.int ?? 0
      units = json["units"]?.int ?? 0
      inputBytes = Int64(json["input_bytes"]?.int ?? 0)
      outputBytes = Int64(json["output_bytes"]?.int ?? 0)
      seconds = json["seconds"]?.double ?? 0
      allocationsPerUnit = json["allocs_per_unit"]?.double
      peakResident = json["peak_resident"]?.int
      mp4Units = json["mp4_units"]?.int ?? 0
      mp4InputBytes = Int64(json["mp4_input_bytes"]?.int ?? 0)
      mp4OutputBytes = Int64(json["mp4_output_bytes"]?.int ?? 0)
      mp4Seconds = json["mp4_seconds"]?.double ?? 0
      mp4AllocationsPerUnit = json["mp4_allocs_per_unit"]?.double
    }
  }

  private struct Unit {
    var kind: SampleKind
    var pts: Int64
    var dts: Int64
    var isKeyframe: Bool
    var nalUnits: AVCCSummary?
    var offset: Int
    var count: Int
  }

  /// Packetizes the dump's samples for about `seconds` (at least one pass) with each writer.
  public static func run(dumpPath: String, seconds: Double) throws(ReplayError) -> Result {
    let tracks = try ReplaySession.trackFormats(dumpPath: dumpPath)
    let source: FileByteSource
    do { source = try FileByteSource(path: dumpPath) } catch { throw .open(error) }
    var reader = DumpReader(source: source)
    var bytes: [UInt8] = []
    var units: [Unit] = []
    var largest = 0
    while true {
      let record: DumpRecord?
      do { record = try reader.next() } catch {
        if error.isRecoverable { continue }
        throw .dump(path: dumpPath, error)
      }
      guard let record else { break }
      guard case .sample(let header) = record, tracks.contains(header.kind),
        let dts = TimeConversion.ticks90k(header.dts ?? header.pts),
        let pts = TimeConversion.ticks90k(header.pts)
      else { continue }
      units.append(
        Unit(
          kind: header.kind, pts: pts, dts: dts, isKeyframe: header.isKeyframe,
          nalUnits: header.nalUnits, offset: bytes.count, count: header.payloadSize))
      reader.withPayload { bytes.append(contentsOf: $0) }
      largest = max(largest, header.payloadSize)
    }
    guard !units.isEmpty else { throw .noTracks(path: dumpPath) }
    let packetizer = TSPacketizer(program: tracks)
    // Stands in for the ring slot the pipeline reserves; the NAL units were walked when read,
    // as in a replay.
    var slotBytes = 188
    for kind in SampleKind.allCases {
      slotBytes = max(slotBytes, packetizer.maximumPacketizedSize(payloadSize: largest, kind: kind))
    }
    let slot = UnsafeMutableRawBufferPointer.allocate(byteCount: slotBytes, alignment: 16)
    defer { slot.deallocate() }
    let counter = AllocationCounter()
    let timer = SystemClock()
    var result = Result()
    let limit = TimeSpan(seconds: seconds)
    var allocations: UInt = 0
    var span: Int64 = 0
    if let first = units.first, let last = units.last { span = last.dts - first.dts + 3_000 }
    let began = timer.now()
    bytes.withUnsafeBytes { all in
      repeat {
        let shift = span * Int64(result.passes)
        let before = counter.threadCount()
        for unit in units {
          let payload = UnsafeRawBufferPointer(
            rebasing: all[unit.offset..<unit.offset + unit.count])
          guard
            let out = try? packetizer.packetize(
              kind: unit.kind, pts: unit.pts + shift, dts: unit.dts + shift,
              isKeyframe: unit.isKeyframe, payload: payload, nalUnits: unit.nalUnits, into: slot)
          else { continue }
          result.outputBytes += Int64(out.byteCount)
          result.inputBytes += Int64(unit.count)
          result.units += 1
        }
        allocations &+= counter.threadCount() &- before
        result.passes += 1
      } while timer.now() - began < limit
    }
    result.seconds = (timer.now() - began).inSeconds
    if counter.isAvailable {
      result.allocationsPerUnit = Double(allocations) / Double(result.units)
    }
    fragment(units, bytes: bytes, tracks: tracks, span: span, limit: limit, into: &result)
    result.peakResident = ProcResidentProbe().peakResidentBytes()
    return result
  }

  /// The fragmented-MP4 writer over the same units for `limit`: each unit appended
  /// to its track's fragment, and a fragment written (to nowhere but a byte count) at each video
  /// keyframe, or when a buffer fills, with the `.mp4` recording's buffer sizes.
  private static func fragment(
    _ units: [Unit], bytes: [UInt8], tracks formats: TrackFormats, span: Int64, limit: TimeSpan,
    into result: inout Result
  ) {
    let tracks = MP4Track.tracks(for: formats)
    var trackIndex = [Int](repeating: -1, count: SampleKind.allCases.count)
    for (index, track) in tracks.enumerated() { trackIndex[Int(track.kind.rawValue)] = index }
    var fragmenter = MP4Fragmenter(
      tracks: tracks, mediaCapacity: { $0.kind == .video ? 3 << 20 : 320 << 10 },
      sampleCapacity: 480)
    let counter = AllocationCounter()
    let timer = SystemClock()
    var allocations: UInt = 0
    var passes = 0
    var written: Int64 = 0
    let base = units.first?.dts ?? 0
    func flush(_ fragmenter: inout MP4Fragmenter) {
      fragmenter.writeFragment(endTime: { _ in nil }) { (chunk) throws(Never) in
        written += Int64(chunk.count)
      }
    }
    let began = timer.now()
    bytes.withUnsafeBytes { all in
      repeat {
        let shift = span * Int64(passes) - base
        let before = counter.threadCount()
        for unit in units {
          let index = trackIndex[Int(unit.kind.rawValue)]
          guard index >= 0 else { continue }
          let track = tracks[index]
          let payload = UnsafeRawBufferPointer(
            rebasing: all[unit.offset..<unit.offset + unit.count])
          if unit.kind == .video && unit.isKeyframe { flush(&fragmenter) }
          let decodeTime = track.ticks(from: max(0, unit.dts + shift))
          let offset = UInt32(
            clamping: max(0, track.ticks(from: unit.pts) - track.ticks(from: unit.dts)))
          var appended = fragmenter.append(
            track: index, bytes: payload, decodeTime: decodeTime, compositionOffset: offset,
            isSync: unit.isKeyframe)
          if !appended {
            flush(&fragmenter)
            appended = fragmenter.append(
              track: index, bytes: payload, decodeTime: decodeTime, compositionOffset: offset,
              isSync: unit.isKeyframe)
          }
          guard appended else { continue }
          result.mp4InputBytes += Int64(unit.count)
          result.mp4Units += 1
        }
        allocations &+= counter.threadCount() &- before
        passes += 1
      } while timer.now() - began < limit
    }
    flush(&fragmenter)
    result.mp4Seconds = (timer.now() - began).inSeconds
    result.mp4OutputBytes = written
    // The first pass grows the moof array once; steady state is what the passes after it do.
    if counter.isAvailable, result.mp4Units > 0 {
      result.mp4AllocationsPerUnit = Double(allocations) / Double(result.mp4Units)
    }
  }
}
