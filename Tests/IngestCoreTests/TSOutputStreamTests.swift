import Testing

@testable import IngestCore

/// Packetizes like the capture side and prepares like the send side, keeping what was sent.
struct TSSender {
  var packetizer: TSPacketizer
  var stream: TSOutputStream
  var output: [UInt8] = []

  init(_ program: TSProgram) {
    packetizer = TSPacketizer(program: program)
    stream = TSOutputStream(program: program)
  }

  /// The capture side: one access unit's packets as they sit in the ring.
  mutating func packetize(
    _ kind: SampleKind, dts: Int64, pts: Int64? = nil, isKeyframe: Bool = false,
    payload: [UInt8]? = nil
  ) throws -> [UInt8] {
    let payload =
      payload
      ?? (kind == .video
        ? AnnexBTests.avcc(
          [[isKeyframe ? 0x65 : 0x41] + TSPacketizerTests.payload(400)], lengthSize: 4)
        : TSPacketizerTests.payload(300))
    var out = [UInt8](
      repeating: 0, count: packetizer.maximumPacketizedSize(payloadSize: payload.count, kind: kind))
    let unit = try payload.withUnsafeBytes { input in
      try out.withUnsafeMutableBytes {
        try packetizer.packetize(
          kind: kind, pts: pts ?? dts, dts: dts, isKeyframe: isKeyframe, payload: input, into: $0)
      }
    }
    return Array(out[0..<unit.byteCount])
  }

  /// The send side: finishes `unit`, appends prefix and unit to `output`, returns both.
  @discardableResult
  mutating func send(
    _ unit: [UInt8], _ kind: SampleKind, dts: Int64, isKeyframe: Bool = false,
    discontinuity: Bool = false
  ) -> (prefix: [TSReader.Packet], unit: [TSReader.Packet]) {
    var unit = unit
    var prefix = [UInt8](repeating: 0, count: TSOutputStream.maximumPrefixSize)
    let written = unit.withUnsafeMutableBytes { unitBuffer in
      prefix.withUnsafeMutableBytes {
        stream.prepare(
          unit: unitBuffer, kind: kind, dts: dts, isKeyframe: isKeyframe,
          discontinuity: discontinuity, prefix: $0)
      }
    }
    let prefixBytes = Array(prefix[0..<written])
    output += prefixBytes + unit
    return (TSReader.packets(prefixBytes), TSReader.packets(unit))
  }

  /// Packetizes and sends at once.
  @discardableResult
  mutating func sendNew(
    _ kind: SampleKind, dts: Int64, isKeyframe: Bool = false, discontinuity: Bool = false
  ) throws -> (prefix: [TSReader.Packet], unit: [TSReader.Packet]) {
    let unit = try packetize(kind, dts: dts, isKeyframe: isKeyframe)
    return send(unit, kind, dts: dts, isKeyframe: isKeyframe, discontinuity: discontinuity)
  }
}

@Suite struct TSOutputStreamTests {
  static let full = TSPacketizerTests.full
  static let audioOnly = TSProgram(
    audioApp: TSPacketizerTests.stereo, audioMic: TSPacketizerTests.stereo)
  /// The tracks a test sends, so that the PCR does not wait for a declared track's first unit.
  static let videoAndApp = TSProgram(
    video: TSPacketizerTests.h264, audioApp: TSPacketizerTests.stereo)
  static let videoAndMic = TSProgram(
    video: TSPacketizerTests.h264, audioMic: TSPacketizerTests.stereo)
  static let videoOnly = TSProgram(video: TSPacketizerTests.h264)

  static func isPSI(_ packets: [TSReader.Packet]) -> Bool {
    packets.count >= 2 && packets[0].pid == 0 && packets[1].pid == 0x1000
  }

  @Test func firstKeyframeGetsPSIAndPCR() throws {
    var sender = TSSender(Self.full)
    let (prefix, unit) = try sender.sendNew(.video, dts: 126_000, isKeyframe: true)
    #expect(prefix.count == 2)
    let prefixBytes = Array(sender.output[0..<376])
    #expect(Array(prefixBytes[0..<188]) == PSI.packet(section: PSI.patSection(), pid: 0))
    #expect(
      Array(prefixBytes[188..<376]) == PSI.packet(section: PSI.pmtSection(Self.full), pid: 0x1000))
    #expect(unit[0].flags == 0x50)  // random access + PCR
    #expect(unit[0].pcr == 63_000)
    #expect(unit.map(\.counter) == Array(0..<UInt8(unit.count)))
    // PCR slot bytes: base 63000, reserved 111111, extension 0.
    #expect(Array(sender.output[376 + 6..<376 + 12]) == [0x00, 0x00, 0x7B, 0x0C, 0x7E, 0x00])
  }

  @Test func countersStayContinuousAcrossDrops() throws {
    var sender = TSSender(Self.full)
    var dts: Int64 = 126_000
    for index in 0..<60 {
      let keyframe = index % 10 == 0
      let video = try sender.packetize(.video, dts: dts, isKeyframe: keyframe)
      let app = try sender.packetize(.audioApp, dts: dts + 100)
      let mic = try sender.packetize(.audioMic, dts: dts + 200)
      // The ring drops the GOP tail of the first GOP and some mic frames.
      if !(5..<10).contains(index) {
        sender.send(video, .video, dts: dts, isKeyframe: keyframe)
      }
      sender.send(app, .audioApp, dts: dts + 100)
      if index % 3 != 0 { sender.send(mic, .audioMic, dts: dts + 200) }
      dts += 3_000
    }
    let packets = TSReader.packets(sender.output)
    #expect(packets.allSatisfy { $0.sync == 0x47 })
    #expect(TSReader.continuityErrors(packets).isEmpty)
    for pid: UInt16 in [0, 0x1000, 0x100, 0x101, 0x102] {
      let counters = packets.filter { $0.pid == pid && $0.hasPayload }.map(\.counter)
      #expect(counters.count > 16)
      #expect(counters.first == 0)
    }
  }

  @Test func pcrOnlyPacketsWhileVideoPauses() throws {
    var sender = TSSender(Self.videoAndApp)
    let (_, first) = try sender.sendNew(.video, dts: 126_000, isKeyframe: true)
    let lastVideoCounter = first.last!.counter
    var dts: Int64 = 126_000
    for _ in 0..<50 {
      dts += 1_920
      let (prefix, _) = try sender.sendNew(.audioApp, dts: dts)
      let pcrPackets = prefix.filter { $0.pid == 0x100 }
      #expect(pcrPackets.count == 1)
      guard let pcr = pcrPackets.first else { continue }
      #expect(pcr.control == 2)
      #expect(pcr.fieldLength == 183)
      #expect(pcr.flags == 0x10)
      #expect(pcr.field.dropFirst(7).allSatisfy { $0 == 0xFF })
      #expect(pcr.pcr == dts - 63_000)
      // No payload: the counter repeats the last video packet's.
      #expect(pcr.counter == lastVideoCounter)
    }
    let (_, resumed) = try sender.sendNew(.video, dts: dts + 1_000)
    #expect(resumed[0].counter == (lastVideoCounter + 1) & 0x0F)
    #expect(resumed[0].pcr == dts + 1_000 - 63_000)
    let packets = TSReader.packets(sender.output)
    #expect(TSReader.continuityErrors(packets).isEmpty)
    let pcrs = packets.compactMap(\.pcr)
    #expect(pcrs == pcrs.sorted())
  }

  @Test func pcrOnlyPacketsOnlyAfter20ms() throws {
    var sender = TSSender(Self.audioOnly)
    // App (the PCR PID) and mic interleaved 960 ticks apart: the app units carry the PCR.
    for index in 0..<10 {
      let dts = 126_000 + Int64(index) * 1_920
      let (_, app) = try sender.sendNew(.audioApp, dts: dts)
      #expect(app[0].pcr == dts - 63_000)
      let (prefix, mic) = try sender.sendNew(.audioMic, dts: dts + 960)
      #expect(!prefix.contains { $0.control == 2 })
      #expect(mic[0].pcr == nil)
    }
    // App stops: mic units bring PCR-only packets on the app PID.
    var dts: Int64 = 126_000 + 9 * 1_920 + 960
    for _ in 0..<10 {
      dts += 1_920
      let (prefix, _) = try sender.sendNew(.audioMic, dts: dts)
      let pcr = prefix.filter { $0.control == 2 }
      #expect(pcr.count == 1)
      #expect(pcr.first?.pid == 0x101)
      #expect(pcr.first?.pcr == dts - 63_000)
    }
    // Mic units 1 ms apart: one PCR-only packet per 20 ms of PCR time.
    var pcrOnly = 0
    for _ in 0..<100 {
      dts += 90
      pcrOnly += try sender.sendNew(.audioMic, dts: dts).prefix.filter { $0.control == 2 }.count
    }
    #expect(pcrOnly == 100 * 90 / 1_800)
    #expect(TSReader.continuityErrors(TSReader.packets(sender.output)).isEmpty)
  }

  @Test func psiRepeatsEvery90msOfDTS() throws {
    var sender = TSSender(Self.audioOnly)
    var psiTimes: [Int64] = []
    for index in 0..<100 {
      let dts = 126_000 + Int64(index) * 1_920
      if Self.isPSI(try sender.sendNew(.audioApp, dts: dts).prefix) { psiTimes.append(dts) }
    }
    #expect(psiTimes.first == 126_000)
    let gaps = zip(psiTimes.dropFirst(), psiTimes).map { $0 - $1 }
    #expect(gaps.count > 15)
    #expect(gaps.allSatisfy { $0 >= 8_100 && $0 < 8_100 + 1_920 })
  }

  @Test func keyframesAndForcedPSI() throws {
    var sender = TSSender(Self.full)
    #expect(Self.isPSI(try sender.sendNew(.video, dts: 126_000, isKeyframe: true).prefix))
    #expect(!Self.isPSI(try sender.sendNew(.video, dts: 129_000).prefix))
    #expect(Self.isPSI(try sender.sendNew(.video, dts: 132_000, isKeyframe: true).prefix))
    #expect(!Self.isPSI(try sender.sendNew(.audioApp, dts: 132_100).prefix))
    sender.stream.forcePSI()
    #expect(Self.isPSI(try sender.sendNew(.audioApp, dts: 132_200).prefix))
    #expect(!Self.isPSI(try sender.sendNew(.audioApp, dts: 132_300).prefix))
    let packets = TSReader.packets(sender.output)
    #expect(TSReader.continuityErrors(packets).isEmpty)
    #expect(packets.filter { $0.pid == 0 }.map(\.counter) == [0, 1, 2])
  }

  @Test func discontinuityIndicator() throws {
    var sender = TSSender(Self.full)
    #expect(try sender.sendNew(.video, dts: 126_000, isKeyframe: true).unit[0].flags & 0x80 == 0)
    let reset = try sender.sendNew(.audioApp, dts: 127_000, discontinuity: true)
    #expect(reset.unit[0].flags & 0x80 != 0)
    #expect(Self.isPSI(reset.prefix))
    #expect(try sender.sendNew(.audioApp, dts: 129_000).unit[0].flags & 0x80 == 0)

    sender.stream.forceDiscontinuity()
    let video = try sender.sendNew(.video, dts: 130_000)
    #expect(Self.isPSI(video.prefix))
    #expect(video.unit[0].flags & 0x80 != 0)
    #expect(video.unit.dropFirst().allSatisfy { $0.flags & 0x80 == 0 })
    #expect(try sender.sendNew(.audioApp, dts: 130_100).unit[0].flags & 0x80 != 0)
    #expect(try sender.sendNew(.audioMic, dts: 130_200).unit[0].flags & 0x80 != 0)
    #expect(try sender.sendNew(.video, dts: 133_000).unit[0].flags & 0x80 == 0)
    #expect(try sender.sendNew(.audioMic, dts: 133_200).unit[0].flags & 0x80 == 0)
  }

  @Test func pcrNeverGoesBackUnlessTheClockResets() throws {
    var sender = TSSender(Self.full)
    #expect(try sender.sendNew(.video, dts: 200_000, isKeyframe: true).unit[0].pcr == 137_000)
    // A unit decoded earlier than the last one (B-frame style DTS order is the ring's job, but
    // the PCR must not step back or repeat whatever arrives).
    #expect(try sender.sendNew(.video, dts: 190_000).unit[0].pcr == 137_001)
    // An explicit clock reset on the PCR PID lets it restart lower.
    #expect(try sender.sendNew(.video, dts: 100_000, discontinuity: true).unit[0].pcr == 37_000)
  }

  @Test func pcrWrapsModulo2To33() throws {
    var sender = TSSender(Self.full)
    let dts: Int64 = 1 << 33 + 63_000 + 5
    let (_, unit) = try sender.sendNew(.video, dts: dts, isKeyframe: true)
    #expect(unit[0].pcr == 5)
  }

  @Test func prefixIsBoundedAndStateIsSmall() throws {
    var sender = TSSender(Self.videoAndMic)
    // Before any video payload a PCR-only packet repeats counter 15 (the one before 0), and
    // stays adaptation-only.
    let (first, _) = try sender.sendNew(.audioMic, dts: 126_000)
    #expect(first.map(\.pid) == [0, 0x1000, 0x100])
    #expect(first[2].control == 2)
    #expect(first[2].counter == 15)
    // Every track has sent a unit: the PCR follows the DTS.
    try sender.sendNew(.video, dts: 126_000, isKeyframe: true)
    // PSI and the longest bridged gap together: the largest prefix.
    sender.stream.forcePSI()
    let (prefix, _) = try sender.sendNew(
      .audioMic, dts: 126_000 + TSOutputStream.maximumBridgedGap)
    #expect(prefix.count * 188 == TSOutputStream.maximumPrefixSize)
    #expect(
      prefix.map(\.pid) == [0, 0x1000]
        + Array(repeating: 0x100, count: TSOutputStream.maximumBridgePackets + 1))
    #expect(sender.stream.residentByteCount == 2 * 188)
  }

  @Test func pcrNeverRepeatsAfterAPCROnlyPacket() throws {
    var sender = TSSender(Self.videoAndApp)
    try sender.sendNew(.video, dts: 126_000, isKeyframe: true)
    // App audio ahead of the video brings a PCR-only packet; the next video unit, decoded
    // earlier, must not carry the same PCR again.
    let (prefix, _) = try sender.sendNew(.audioApp, dts: 129_000)
    #expect(prefix.compactMap(\.pcr) == [66_000])
    #expect(try sender.sendNew(.video, dts: 128_000).unit[0].pcr == 66_001)
    let pcrs = TSReader.packets(sender.output).compactMap(\.pcr)
    #expect(Set(pcrs).count == pcrs.count)
  }

  @Test func gapsLeftByDropsAreBridgedEvery40ms() throws {
    var sender = TSSender(Self.videoOnly)
    try sender.sendNew(.video, dts: 126_000, isKeyframe: true)
    // The ring dropped 150 ms of video and audio: the next unit comes with bridging PCRs.
    let (prefix, unit) = try sender.sendNew(.video, dts: 126_000 + 13_500)
    #expect(prefix.filter { $0.pid == 0x100 }.count == 3)
    let pcrs = TSReader.packets(sender.output).compactMap(\.pcr)
    #expect(pcrs.first == 63_000)
    #expect(pcrs.last == 76_500)
    #expect(zip(pcrs.dropFirst(), pcrs).allSatisfy { $0 - $1 > 0 && $0 - $1 <= 3_600 })
    #expect(!unit.contains { $0.flags & 0x80 != 0 })
    #expect(TSReader.continuityErrors(TSReader.packets(sender.output)).isEmpty)
  }

  @Test func aLargerJumpIsATimeBaseDiscontinuity() throws {
    var sender = TSSender(Self.full)
    try sender.sendNew(.video, dts: 126_000, isKeyframe: true)
    try sender.sendNew(.audioApp, dts: 127_000)
    // A 3 s outage: the mic unit after it brings PSI and a PCR-only packet that says so.
    let (prefix, mic) = try sender.sendNew(.audioMic, dts: 126_000 + 270_000)
    #expect(Self.isPSI(prefix))
    #expect(prefix.count == 3)
    #expect(prefix[2].pcr == 333_000)
    #expect(prefix[2].flags & 0x80 != 0)
    #expect(mic[0].flags & 0x80 != 0)
    // The first unit of every other PID after the jump carries the indicator too, once.
    #expect(try sender.sendNew(.video, dts: 396_100).unit[0].flags & 0x80 != 0)
    #expect(try sender.sendNew(.audioApp, dts: 396_200).unit[0].flags & 0x80 != 0)
    #expect(try sender.sendNew(.audioApp, dts: 398_000).unit[0].flags & 0x80 == 0)
  }
}
