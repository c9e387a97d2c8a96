@testable import IngestCore

/// Formats and payloads shared by the timeline, ring, pipeline and sender tests.
enum CoreFixtures {
  static let h264 = try! H264Format(
    profile: 66, compatibility: 0xC0, level: 31, nalLengthSize: 4,
    sps: [[0x67, 0x42, 0xC0, 0x1F, 0xDA]], pps: [[0x68, 0xCE, 0x3C, 0x80]])
  static let app = try! AACFormat(objectType: 2, sampleRate: 48000, channels: 2)
  static let mic = try! AACFormat(objectType: 2, sampleRate: 44100, channels: 1)
  static let allTracks = TrackFormats(video: h264, audioApp: app, audioMic: mic)

  /// An AVCC access unit of one NAL: `header` followed by `fill` bytes of `value`.
  static func avcc(header: UInt8, fill: Int = 1, value: UInt8 = 0x80) -> [UInt8] {
    let length = 1 + fill
    return [
      UInt8(length >> 24 & 0xFF), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF),
      UInt8(length & 0xFF), header,
    ] + [UInt8](repeating: value, count: fill)
  }

  /// IDR slice (nal_ref_idc 3, type 5).
  static func idr(fill: Int = 1) -> [UInt8] { avcc(header: 0x65, fill: fill) }
  /// Referenced non-IDR slice (nal_ref_idc 2, type 1).
  static func pFrame(fill: Int = 1) -> [UInt8] { avcc(header: 0x41, fill: fill) }
  /// Non-referenced slice (nal_ref_idc 0, type 1): disposable.
  static func disposable(fill: Int = 1) -> [UInt8] { avcc(header: 0x01, fill: fill) }

  static func video(frame: Int64, key: Bool, payload: [UInt8]? = nil) -> MediaSample {
    MediaSample(
      kind: .video, pts: MediaTime(value: frame * 20, timescale: 600), isKeyframe: key,
      payload: payload ?? (key ? idr() : pFrame()))
  }

  static func audio(_ kind: SampleKind, frame: Int64, bytes: Int = 8) -> MediaSample {
    let rate: Int64 = kind == .audioMic ? 44100 : 48000
    return MediaSample(
      kind: kind, pts: MediaTime(value: frame * 1024, timescale: Int32(rate)), isKeyframe: true,
      payload: [UInt8](repeating: 0x21, count: bytes))
  }
}

/// A view of a ring's record table, for checks that the public surface cannot express.
struct RingRecordView: Equatable {
  var offset: Int
  var length: Int
  var state: SendRing.State
  var info: SendRing.UnitInfo
  var sequence: Int64
}

extension SendRing {
  /// Every record from head to tail, tombstones included.
  var recordViews: [RingRecordView] {
    (0..<count).map { step in
      let record = records[(head + step) % recordCapacity]
      return RingRecordView(
        offset: record.offset, length: record.slotLength, state: record.state, info: record.info,
        sequence: record.sequence)
    }
  }

  /// The unit bytes (after headroom) of a record, read from the arena.
  func bytes(of view: RingRecordView) -> [UInt8] {
    Array(arena[(view.offset + headroom)..<(view.offset + view.length)])
  }

  /// Offset in the arena of an in-flight unit's slot.
  func offset(of unit: InFlightUnit) -> Int {
    UnsafeRawPointer(unit.slot.baseAddress!) - UnsafeRawPointer(arena.baseAddress!)
  }

  /// Sends every waiting unit and returns what the sender saw, oldest first.
  func drainAll() -> [(info: UnitInfo, bytes: [UInt8])] {
    var out: [(info: UnitInfo, bytes: [UInt8])] = []
    while let unit = beginSend() {
      out.append((unit.info, Array(unit.slot[unit.headroom...])))
      completeSend()
    }
    return out
  }
}

/// A sink driven by a script, recording everything the sender hands it.
final class ScriptedSink: OutputSink {
  enum WriteStep {
    case written
    case wouldBlock(MonotonicInstant)
    case fail(SinkError)
  }

  struct Write {
    var unit: OutgoingUnit
    var bytes: [UInt8]
    var now: MonotonicInstant
  }

  let payloadFormat: PayloadFormat
  var bufferBytes: Int { 0 }
  var congestion: Double { 0 }
  var redactedDescription: String { "scripted" }

  /// Results of the next writes; `.written` once the script is used up.
  var writeScript: [WriteStep] = []
  /// Results of the next opens; success once the script is used up.
  var openScript: [SinkError?] = []
  /// Every write offered, whatever the result.
  private(set) var offers: [Write] = []
  /// Writes that were taken, with the connection number they went to.
  private(set) var written: [(connection: Int, write: Write)] = []
  private(set) var opens = 0
  private(set) var successfulOpens = 0
  private(set) var closes = 0
  private(set) var finished = false

  init(payloadFormat: PayloadFormat) { self.payloadFormat = payloadFormat }

  func open(tracks: TrackFormats) throws(SinkError) {
    opens += 1
    if !openScript.isEmpty, let error = openScript.removeFirst() { throw error }
    successfulOpens += 1
  }

  func write(_ unit: OutgoingUnit, bytes: UnsafeRawBufferPointer, now: MonotonicInstant)
    throws(SinkError)
    -> SinkWriteResult
  {
    let write = Write(unit: unit, bytes: Array(bytes), now: now)
    offers.append(write)
    let step = writeScript.isEmpty ? .written : writeScript.removeFirst()
    switch step {
    case .written:
      written.append((successfulOpens, write))
      return .written
    case .wouldBlock(let until): return .wouldBlock(retryAt: until)
    case .fail(let error): throw error
    }
  }

  func close() { closes += 1 }
  func finish() throws(SinkError) { finished = true }
}

/// Builds a pipeline on a virtual clock with a small budget.
func makePipeline(
  format: PayloadFormat = .accessUnits, tracks: TrackFormats = CoreFixtures.allTracks,
  budgetBytes: Int = 4_000_000, overheadBytes: Int = 1_000_000,
  configure: (inout PipelineConfiguration) -> Void = { _ in }
) throws -> (Pipeline, VirtualClock) {
  var configuration = PipelineConfiguration()
  configuration.budgetBytes = budgetBytes
  configuration.overheadBytes = overheadBytes
  configuration.recordCapacity = 256
  configuration.maximumSampleBytes = 256 * 1024
  configure(&configuration)
  let clock = VirtualClock()
  let budget = try MemoryBudget(budget: budgetBytes, overhead: overheadBytes)
  let pipeline = try Pipeline(
    configuration: configuration, tracks: tracks, payloadFormat: format, budget: budget,
    clock: clock)
  return (pipeline, clock)
}
