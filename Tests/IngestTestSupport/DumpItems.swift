import IngestCore
import IngestPOSIX

/// A dump held as a list of records, so a test can derive a case from a fixture (move a
/// timestamp, drop frames, insert a format change) and write it back with `DumpWriter`.
package enum DumpItems {
  /// One record of a dump.
  package enum Item {
    case format(SampleKind, FormatDescription)
    case sample(MediaSample)
    case event(DumpEvent)
    /// A record written as it is: a format the writer itself would refuse, for instance.
    case raw(type: UInt8, payload: [UInt8])

    /// A sample record written byte by byte, without the writer's checks (a sample whose format
    /// record the writer would refuse, or a corrupt payload).
    package static func rawSample(_ sample: MediaSample) -> Item {
      func bytes<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian, Array.init)
      }
      let flags: UInt8 = (sample.isKeyframe ? 1 : 0) | (sample.dts == nil ? 0 : 2)
      let dts = sample.dts ?? MediaTime(value: 0, timescale: 0)
      let header =
        [sample.kind.rawValue, flags] + bytes(sample.pts.value) + bytes(sample.pts.timescale)
        + bytes(dts.value) + bytes(dts.timescale)
      return .raw(type: 2, payload: header + sample.payload)
    }

    /// The sample, if the item is one.
    package var sample: MediaSample? {
      if case .sample(let sample) = self { sample } else { nil }
    }
  }

  /// Every record of the dump at `path`; a recoverable error skips its record as a reader does.
  package static func read(_ path: String) throws -> [Item] {
    var reader = DumpReader(source: try FileByteSource(path: path))
    var items: [Item] = []
    while true {
      let record: DumpRecord?
      do { record = try reader.next() } catch {
        if error.isRecoverable { continue }
        throw error
      }
      switch record {
      case nil: return items
      case .format(let kind, let format): items.append(.format(kind, format))
      case .event(let event): items.append(.event(event))
      case .sample: items.append(.sample(reader.sampleCopy()!))
      }
    }
  }

  /// Writes `items` as a dump at `path`.
  package static func write(_ items: [Item], to path: String) throws {
    let file = try FileWriter(path: path)
    var writer = try DumpWriter(sink: file)
    for item in items {
      switch item {
      case .format(let kind, let format): try writer.writeFormat(format, for: kind)
      case .sample(let sample): try writer.writeSample(sample)
      case .event(let event): try writer.writeEvent(event)
      case .raw(let type, let payload):
        try payload.withUnsafeBytes { try writer.writeRawRecord(type: type, payload: $0) }
      }
    }
    try file.close()
  }
}
