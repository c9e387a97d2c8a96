@testable import IngestCore

/// Serves bytes from memory, at most `chunk` bytes per read.
struct MemorySource: ByteSource {
  let bytes: [UInt8]
  var chunk: Int
  var position = 0
  /// Calls of `read` so far.
  var reads = 0

  init(_ bytes: [UInt8], chunk: Int = .max) {
    self.bytes = bytes
    self.chunk = chunk
  }

  mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
    reads += 1
    let count = min(buffer.count, chunk, bytes.count - position)
    guard count > 0 else { return 0 }
    bytes.withUnsafeBytes { raw in
      buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[position..<position + count]))
    }
    position += count
    return count
  }
}

/// Collects written bytes in memory.
struct MemorySink: ByteSink {
  var bytes: [UInt8] = []
  mutating func write(_ bytes: UnsafeRawBufferPointer) throws {
    self.bytes.append(contentsOf: bytes)
  }
}

/// SplitMix64: a small seeded generator so failures reproduce.
struct SeededGenerator: RandomNumberGenerator {
  var state: UInt64
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

/// What reading a whole dump produced.
struct ReadOutcome {
  var records: [DumpRecord] = []
  var payloads: [[UInt8]] = []
  var errors: [DumpError] = []
  /// True when the reader reached a clean end (`next()` returned nil).
  var cleanEnd = false
  var maxBufferCapacity = 0
}

enum DumpFixtures {
  static let h264 = try! H264Format(
    profile: 66, compatibility: 0xC0, level: 31, nalLengthSize: 4,
    sps: [[0x67, 0x42, 0xC0, 0x1F, 0xDA]], pps: [[0x68, 0xCE, 0x3C, 0x80]])
  static let app = try! AACFormat(objectType: 2, sampleRate: 48000, channels: 2)
  static let mic = try! AACFormat(objectType: 2, sampleRate: 44100, channels: 1)

  static func videoPayload(_ seed: UInt8, nalSizes: [Int] = [5, 12]) -> [UInt8] {
    var out: [UInt8] = []
    for size in nalSizes {
      out += [
        UInt8(size >> 24 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF),
        UInt8(size & 0xFF),
      ]
      out += (0..<size).map { UInt8(truncatingIfNeeded: Int(seed) &+ $0) }
    }
    return out
  }

  static let samples: [MediaSample] = [
    MediaSample(
      kind: .video, pts: MediaTime(value: 352_417_123_456_789, timescale: 1_000_000_000),
      dts: MediaTime(value: 352_417_090_123_456, timescale: 1_000_000_000), isKeyframe: true,
      payload: videoPayload(1)),
    MediaSample(
      kind: .audioApp, pts: MediaTime(value: 48000, timescale: 48000), isKeyframe: true,
      payload: [0x21, 0x10, 0x05]),
    MediaSample(
      kind: .audioMic, pts: MediaTime(value: -1024, timescale: 44100), isKeyframe: true,
      payload: [0xDE, 0xAD]),
    MediaSample(
      kind: .video, pts: MediaTime(value: 352_417_156_790_122, timescale: 1_000_000_000),
      isKeyframe: false, payload: videoPayload(9, nalSizes: [1, 0, 30])),
  ]

  /// A small dump with every record type, an unknown record, and the offsets of record boundaries.
  static func smallDump() throws -> (bytes: [UInt8], boundaries: [Int]) {
    var writer = try DumpWriter(sink: MemorySink())
    var boundaries = [Int(writer.offset)]
    try writer.writeFormat(.h264(h264), for: .video)
    boundaries.append(Int(writer.offset))
    try writer.writeFormat(.aac(app), for: .audioApp)
    boundaries.append(Int(writer.offset))
    try writer.writeFormat(.aac(mic), for: .audioMic)
    boundaries.append(Int(writer.offset))
    for (index, sample) in samples.enumerated() {
      try writer.writeSample(sample)
      boundaries.append(Int(writer.offset))
      if index == 1 {
        try [UInt8](repeating: 0x55, count: 7).withUnsafeBytes {
          try writer.writeRawRecord(type: 0xF0, payload: $0)
        }
        boundaries.append(Int(writer.offset))
      }
    }
    try writer.writeEvent(
      .audioInterruptionBegan(.audioMic, at: MediaTime(value: 88200, timescale: 44100)))
    boundaries.append(Int(writer.offset))
    try writer.writeEvent(
      .audioInterruptionEnded(.audioMic, at: MediaTime(value: 441000, timescale: 44100)))
    boundaries.append(Int(writer.offset))
    return (writer.sink.bytes, boundaries)
  }

  /// Reads until a clean end or a fatal error; never more than `limit` calls.
  static func readAll(_ bytes: [UInt8], chunk: Int = .max, limit: Int = 10_000) -> ReadOutcome {
    var reader = DumpReader(source: MemorySource(bytes, chunk: chunk))
    var outcome = ReadOutcome()
    for _ in 0..<limit {
      do {
        guard let record = try reader.next() else {
          outcome.cleanEnd = true
          break
        }
        outcome.records.append(record)
        if case .sample = record { outcome.payloads.append(reader.withPayload { Array($0) }) }
      } catch {
        outcome.errors.append(error)
        if !error.isRecoverable { break }
      }
      outcome.maxBufferCapacity = max(outcome.maxBufferCapacity, reader.bufferCapacity)
    }
    return outcome
  }
}
