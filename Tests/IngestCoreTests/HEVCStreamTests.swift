import Testing

@testable import IngestCore

/// HEVC through the dump, the pipeline's drop policy and the TS packetizer.
@Suite struct HEVCStreamTests {
  typealias F = HEVCFixtures

  static func sample(_ nals: [[UInt8]], frame: Int64, key: Bool = false) -> MediaSample {
    MediaSample(
      kind: .video, pts: MediaTime(value: frame * 3000, timescale: 90_000), isKeyframe: key,
      payload: F.sample(nals))
  }

  /// The elementary stream of PID 0x100 in `packets`: the PES payloads, PES headers removed,
  /// with the random_access_indicator of each unit's first packet.
  static func videoUnits(_ packets: [UInt8]) -> [(randomAccess: Bool, bytes: [UInt8])] {
    var units: [(Bool, [UInt8])] = []
    var offset = 0
    while offset + 188 <= packets.count {
      defer { offset += 188 }
      let pid = Int(packets[offset + 1] & 0x1F) << 8 | Int(packets[offset + 2])
      guard pid == 0x100 else { continue }
      let start = packets[offset + 1] & 0x40 != 0
      var payload = offset + 4
      var randomAccess = false
      if packets[offset + 3] & 0x20 != 0 {
        let length = Int(packets[offset + 4])
        if length > 0 { randomAccess = packets[offset + 5] & 0x40 != 0 }
        payload += 1 + length
      }
      var bytes = Array(packets[payload..<offset + 188])
      if start {
        bytes.removeFirst(9 + Int(bytes[8]))
        units.append((randomAccess, bytes))
      } else if !units.isEmpty {
        units[units.count - 1].1 += bytes
      }
    }
    return units
  }

  @Test func pmtListsStreamType0x24ForHEVC() {
    let hevc = PSI.pmtSection(TSProgram(video: F.format, audioApp: CoreFixtures.app))
    let h264 = PSI.pmtSection(TSProgram(video: CoreFixtures.h264))
    // stream entries follow the 12 bytes of header, PCR PID and program_info_length.
    #expect(hevc[12] == 0x24)
    #expect(hevc[17] == 0x0F)
    #expect(h264[12] == 0x1B)
  }

  @Test func irapUnitsStartWithDelimiterAndParameterSetsAndAreMarkedRandomAccess() throws {
    let (pipeline, _) = try makePipeline(
      format: .transportStream, tracks: TrackFormats(video: F.format))
    let gop: [(UInt8, Bool)] = [(19, true), (1, false), (0, false), (21, true), (1, false)]
    for (frame, (type, key)) in gop.enumerated() {
      #expect(pipeline.append(Self.sample([F.slice(type)], frame: Int64(frame), key: key)))
    }
    var packets: [UInt8] = []
    while let unit = pipeline.beginSend() {
      packets += unit.slot[unit.headroom...]
      pipeline.completeSend(unit, bytes: unit.slot.count)
    }
    let units = Self.videoUnits(packets)
    #expect(units.count == gop.count)
    let aud: [UInt8] = [0, 0, 0, 1, 0x46, 0x01, 0x50]
    let parameterSets: [UInt8] = [F.vps, F.sps, F.pps].flatMap { [0, 0, 0, 1] + $0 }
    for (unit, (type, key)) in zip(units, gop) {
      #expect(unit.randomAccess == key)
      let slice: [UInt8] = [0, 0, 0, 1] + F.slice(type)
      #expect(unit.bytes == aud + (key ? parameterSets : []) + slice)
    }
  }

  @Test func theRingShedsTrailNBeforeAnyReferencedPicture() throws {
    // About 3 MB of ring; 30 frames of 100 kB arrive and nothing is sent: IDR, then TRAIL_R and
    // TRAIL_N alternating.
    let (pipeline, _) = try makePipeline(
      format: .transportStream, tracks: TrackFormats(video: F.format))
    let frames = 30
    for frame in 0..<frames {
      let type: UInt8 = frame == 0 ? 19 : frame % 2 == 1 ? 1 : 0
      pipeline.append(
        Self.sample([F.slice(type, fill: 100_000)], frame: Int64(frame), key: frame == 0))
    }
    // Shed by the ring itself or, once it fills, by the ladder's tier 2 on arrival: either way
    // only TRAIL_N pictures, and nothing for any other reason.
    let drops = pipeline.snapshot().drops
    let shed = drops[.video, .disposable] + drops[.video, .tierDisposable]
    #expect(shed > 0)
    for reason in DropReason.allCases where reason != .disposable && reason != .tierDisposable {
      #expect(drops[.video, reason] == 0, "\(reason)")
    }
    var packets: [UInt8] = []
    while let unit = pipeline.beginSend() {
      packets += unit.slot[unit.headroom...]
      pipeline.completeSend(unit, bytes: unit.slot.count)
    }
    let parameterSetBytes = [F.vps, F.sps, F.pps].map { 4 + $0.count }.reduce(0, +)
    let types = Self.videoUnits(packets).map { unit in
      unit.bytes[7 + (unit.randomAccess ? parameterSetBytes : 0) + 4] >> 1
    }
    // The IDR and every TRAIL_R picture are sent; only TRAIL_N ones are missing.
    #expect(types.filter { $0 != 0 } == [19] + Array(repeating: 1, count: frames / 2))
    #expect(types.filter { $0 == 0 }.count == frames / 2 - 1 - shed)
  }

  @Test func theTierThatShedsDisposableFramesRefusesTrailNOnly() throws {
    let (pipeline, _) = try makePipeline(tracks: TrackFormats(video: F.format))
    #expect(pipeline.append(Self.sample([F.slice(19)], frame: 0, key: true)))
    pipeline.updateResident(Int(Double(pipeline.budget.budget) * 0.86))
    #expect(pipeline.tier == .reducedFrameRate)
    #expect(!pipeline.append(Self.sample([F.slice(0)], frame: 1)))
    #expect(!pipeline.append(Self.sample([F.slice(8)], frame: 2)))  // RASL_N
    #expect(pipeline.append(Self.sample([F.slice(1)], frame: 3)))
    #expect(pipeline.append(Self.sample([F.slice(9)], frame: 4)))  // RASL_R
    #expect(pipeline.snapshot().drops[.video, .tierDisposable] == 2)
  }

  @Test func dumpRoundTripCarriesTheHVCCAndAWalkedSummary() throws {
    var writer = try DumpWriter(sink: MemorySink())
    try writer.writeFormat(.hevc(F.format), for: .video)
    try writer.writeSample(Self.sample([F.slice(19)], frame: 0, key: true))
    try writer.writeSample(Self.sample([F.slice(0)], frame: 1))
    var reader = DumpReader(source: MemorySource(writer.sink.bytes))
    #expect(try reader.next() == .format(.video, .hevc(F.format)))
    guard case .sample(let first)? = try reader.next() else {
      Issue.record("no first sample")
      return
    }
    #expect(first.nalUnits?.containsIDR == true)
    #expect(first.nalUnits?.isDisposable == false)
    guard case .sample(let second)? = try reader.next() else {
      Issue.record("no second sample")
      return
    }
    #expect(second.nalUnits?.isDisposable == true)
    #expect(try reader.next() == nil)
  }

  @Test func aBadHVCCIsARecoverableFormatError() throws {
    var writer = try DumpWriter(sink: MemorySink())
    var record = F.format.hvcC
    record.removeLast(3)
    try record.withUnsafeBytes { config in
      try ([SampleKind.video.rawValue, DumpFormat.Codec.hevc.rawValue] + Array(config))
        .withUnsafeBytes { try writer.writeRawRecord(type: 1, payload: $0) }
    }
    try writer.writeFormat(.hevc(F.format), for: .video)
    var reader = DumpReader(source: MemorySource(writer.sink.bytes))
    #expect(throws: DumpError.format(offset: 12, .hvcCTruncated(offset: record.count - 4))) {
      try reader.next()
    }
    #expect(try reader.next() == .format(.video, .hevc(F.format)))
  }

  @Test func hevcOnAnAudioKindIsMalformed() throws {
    var writer = try DumpWriter(sink: MemorySink())
    #expect(throws: DumpError.self) { try writer.writeFormat(.hevc(F.format), for: .audioApp) }
  }
}
