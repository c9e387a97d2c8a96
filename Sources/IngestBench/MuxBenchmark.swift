import IngestCore
import IngestPOSIX
import IngestRuntime

/// The throughput of our MPEG-TS writer alone: every sample of the dump, held in memory, packetized
/// again and again on one core for a set time.
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

    public init() {}

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

  /// Packetizes the dump's samples for about `seconds` (at least one pass).
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
    let limit = Int64(seconds * 1e9)
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
    result.seconds = Double(timer.now() - began) / 1e9
    if counter.isAvailable {
      result.allocationsPerUnit = Double(allocations) / Double(result.units)
    }
    result.peakResident = ProcResidentProbe().peakResidentBytes()
    return result
  }
}
