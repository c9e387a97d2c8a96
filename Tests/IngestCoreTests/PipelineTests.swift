import Testing

@testable import IngestCore

private let second = TimeSpan.seconds(1)

/// Drains the pipeline's event queue.
private func events(_ pipeline: Pipeline) -> [PipelineEvent] {
  var out: [PipelineEvent] = []
  while let event = pipeline.nextEvent() { out.append(event) }
  return out
}

/// Moves the ladder to the tier a resident reading of `fraction` of the budget gives.
private func press(_ pipeline: Pipeline, _ fraction: Double) {
  pipeline.updateResident(Int(Double(pipeline.budget.budget) * fraction))
}

/// Steps the ladder down to `tier`: 5 s below 70 % per step.
private func relax(_ pipeline: Pipeline, _ clock: VirtualClock, to tier: Tier) {
  press(pipeline, 0)
  while pipeline.tier > tier {
    clock.advance(to: clock.now() + 5 * second)
    press(pipeline, 0)
  }
}

@Suite struct PipelineTests {
  @Test func tierThreeRefusesMicAndTierFourRefusesNonKeyVideo() throws {
    let (pipeline, clock) = try makePipeline()
    var frame: Int64 = 0
    func video(_ key: Bool, _ payload: [UInt8]? = nil) -> Bool {
      frame += 1
      return pipeline.append(CoreFixtures.video(frame: frame, key: key, payload: payload))
    }
    #expect(video(true))
    #expect(pipeline.append(CoreFixtures.audio(.audioMic, frame: 1)))

    press(pipeline, 0.86)
    #expect(pipeline.tier == .reducedFrameRate)
    #expect(!video(false, CoreFixtures.disposable()))
    #expect(video(false))
    #expect(pipeline.snapshot().drops[.video, .tierDisposable] == 1)

    press(pipeline, 0.92)
    #expect(pipeline.tier == .noMic)
    #expect(!pipeline.append(CoreFixtures.audio(.audioMic, frame: 2)))
    #expect(pipeline.append(CoreFixtures.audio(.audioApp, frame: 2)))
    #expect(video(false))
    #expect(pipeline.snapshot().drops[.audioMic, .tierMic] == 1)

    press(pipeline, 0.96)
    #expect(pipeline.tier == .keyframesOnly)
    #expect(!video(false))
    #expect(video(true))
    #expect(!video(false))
    #expect(pipeline.snapshot().drops[.video, .tierKeyframesOnly] == 2)

    // Back at tier 3 video still waits for a keyframe: the frames before it were refused.
    relax(pipeline, clock, to: .noMic)
    #expect(pipeline.tier == .noMic)
    #expect(!video(false))
    #expect(pipeline.snapshot().drops[.video, .awaitingKeyframe] == 1)
    #expect(video(true))
    #expect(video(false))
    relax(pipeline, clock, to: .normal)
    #expect(pipeline.append(CoreFixtures.audio(.audioMic, frame: 3)))

    let seen = events(pipeline)
    #expect(seen.contains(.keyframeRequested))
    let tiers = seen.compactMap { event -> Tier? in
      if case .tierChanged(_, let to, _, _) = event { return to }
      return nil
    }
    let sources = seen.compactMap { event -> PressureSource? in
      if case .tierChanged(_, _, _, let source) = event { return source }
      return nil
    }
    #expect(sources.prefix(3) == [.resident, .resident, .resident])
    #expect(
      tiers == [
        .reducedFrameRate, .noMic, .keyframesOnly, .noMic, .reducedFrameRate, .reducedBitrate,
        .normal,
      ])
  }

  @Test func invalidSamplesAreCountedAndThePipelineKeepsGoing() throws {
    let (pipeline, _) = try makePipeline(
      tracks: TrackFormats(video: CoreFixtures.h264, audioApp: CoreFixtures.app))
    #expect(pipeline.append(CoreFixtures.video(frame: 0, key: true)))
    let zeroTimescale = MediaSample(
      kind: .audioApp, pts: MediaTime(value: 5, timescale: 0), isKeyframe: true, payload: [1, 2])
    #expect(!pipeline.append(zeroTimescale))
    #expect(pipeline.append(CoreFixtures.audio(.audioApp, frame: 1)))
    #expect(!pipeline.append(CoreFixtures.audio(.audioMic, frame: 1)))  // no mic track
    #expect(!pipeline.append(CoreFixtures.audio(.audioApp, frame: 2, bytes: 0)))
    #expect(!pipeline.append(CoreFixtures.audio(.audioApp, frame: 3, bytes: 256 * 1024 + 1)))
    #expect(pipeline.append(CoreFixtures.audio(.audioApp, frame: 4)))
    let drops = pipeline.snapshot().drops
    #expect(drops[.audioApp, .invalid] == 2)
    #expect(drops[.audioApp, .tooLarge] == 1)
    #expect(drops[.audioMic, .invalid] == 1)
    #expect(drops.total == 4)
  }

  @Test func invalidVideoMakesVideoWaitForTheNextKeyframe() throws {
    let (pipeline, _) = try makePipeline()
    #expect(pipeline.append(CoreFixtures.video(frame: 0, key: true)))
    #expect(pipeline.append(CoreFixtures.video(frame: 1, key: false)))
    // A NAL length past the end of the sample: the frame is refused, and the frames that
    // reference it with it.
    #expect(
      !pipeline.append(CoreFixtures.video(frame: 2, key: false, payload: [0, 0, 0, 9, 0x41])))
    #expect(!pipeline.append(CoreFixtures.video(frame: 3, key: false)))
    #expect(pipeline.append(CoreFixtures.audio(.audioApp, frame: 1)))
    #expect(pipeline.append(CoreFixtures.video(frame: 4, key: true)))
    #expect(pipeline.append(CoreFixtures.video(frame: 5, key: false)))
    // A video timestamp that cannot be placed is the same loss.
    let badTime = MediaSample(
      kind: .video, pts: MediaTime(value: 6, timescale: -600), isKeyframe: false,
      payload: CoreFixtures.pFrame())
    #expect(!pipeline.append(badTime))
    #expect(!pipeline.append(CoreFixtures.video(frame: 7, key: false)))
    let drops = pipeline.snapshot().drops
    #expect(drops[.video, .invalid] == 2)
    #expect(drops[.video, .awaitingKeyframe] == 2)
    var sent: [Bool] = []
    while let unit = pipeline.beginSend() {
      if unit.info.kind == .video { sent.append(unit.info.isKeyframe) }
      pipeline.completeSend(unit, bytes: unit.slot.count)
    }
    #expect(sent == [true, false, true, false])
  }

  /// Random traffic, sizes and sender progress on a virtual clock: the ledger never crosses the
  /// budget and every appended sample is sent, dropped, refused or still held.
  @Test(arguments: [
    (PayloadFormat.accessUnits, UInt64(1)), (.accessUnits, 2), (.accessUnits, 3), (.accessUnits, 4),
    (.transportStream, 5),
  ])
  func ledgerStaysInBudgetAndAccountingCloses(format: PayloadFormat, seed: UInt64) throws {
    var generator = SeededGenerator(state: seed &* 0x9E37_79B9)
    let (pipeline, clock) = try makePipeline(
      format: format, budgetBytes: 3_000_000, overheadBytes: 1_000_000)
    let budget = pipeline.budget.budget
    var inFlight: SendRing.InFlightUnit?
    var stalledUntil = MonotonicInstant.origin
    var clocks: [Int64] = [0, 0, 0]
    var sentUnits = 0
    for step in 0..<2500 {
      clock.advance(
        to: clock.now() + .nanoseconds(Int64.random(in: 0...20_000_000, using: &generator)))
      let kind = [SampleKind.video, .video, .audioApp, .audioMic].randomElement(using: &generator)!
      let index = Int(kind.rawValue)
      // Capture time follows the virtual clock; now and then an audio clock resets.
      clocks[index] = max(clocks[index] + 1, clock.now().sinceOrigin.nanoseconds * 48 / 1_000_000)
      if kind.isAudio && Int.random(in: 0..<300, using: &generator) == 0 {
        clocks[index] -= 480_000
      }
      var size: Int
      switch Int.random(in: 0..<100, using: &generator) {
      case 0..<70: size = Int.random(in: 1...3000, using: &generator)
      case 70..<95: size = Int.random(in: 3000...200_000, using: &generator)
      case 95..<99: size = Int.random(in: 256 * 1024...1_500_000, using: &generator)
      default: size = 0
      }
      var payload: [UInt8]
      var key = kind.isAudio
      if kind == .video {
        key = Int.random(in: 0..<15, using: &generator) == 0
        let header: UInt8 = key ? 0x65 : Bool.random(using: &generator) ? 0x41 : 0x01
        payload = CoreFixtures.avcc(
          header: header, fill: max(size - 5, 1), value: UInt8(step & 0x7F))
        if Int.random(in: 0..<50, using: &generator) == 0 { payload[3] &+= 7 }  // past the end
      } else {
        payload = [UInt8](repeating: UInt8(step & 0xFF), count: size)
      }
      let sample = MediaSample(
        kind: kind, pts: MediaTime(value: clocks[index], timescale: 48000), isKeyframe: key,
        payload: payload)
      pipeline.append(sample)

      if clock.now() >= stalledUntil {
        if Int.random(in: 0..<60, using: &generator) == 0 {
          stalledUntil =
            clock.now() + Int64.random(in: 1...50, using: &generator) * .milliseconds(100)
        } else {
          for _ in 0..<Int.random(in: 0...3, using: &generator) {
            if inFlight == nil { inFlight = pipeline.beginSend() }
            guard let unit = inFlight else { break }
            pipeline.completeSend(unit, bytes: unit.slot.count)
            sentUnits += 1
            inFlight = nil
          }
        }
      }
      switch Int.random(in: 0..<200, using: &generator) {
      case 0:
        pipeline.skipToNewestKeyframe()  // a reconnect: the unit in flight is gone
        inFlight = nil
      case 1: pipeline.updateSinkCongestion(Double.random(in: 0...1, using: &generator))
      case 2: pipeline.updateResident(Int.random(in: 0...budget, using: &generator))
      default: break
      }

      let snapshot = pipeline.snapshot()
      #expect(snapshot.ledger <= budget)
      #expect(snapshot.peakLedger <= budget)
      #expect(snapshot.ledger == pipeline.budget.ledger(ringBytes: snapshot.ringBytes))
      #expect(snapshot.totalSent == sentUnits)
      #expect(
        snapshot.totalAppended
          == snapshot.totalSent + snapshot.drops.total + snapshot.ringUnits
          + (inFlight == nil ? 0 : 1),
        "step \(step)")
    }
    let final = pipeline.snapshot()
    #expect(final.peakLedger > budget * 9 / 10)  // the ring was pushed to its bound
    // The run exercised what it claims to: drops of several kinds, refusals and sends.
    #expect(final.drops.total(.invalid) > 0)
    #expect(final.drops.total > final.drops.total(.invalid))
    #expect(final.totalSent > 100)
  }

  @Test func audioFormatChangeGivesNewADTSFieldsADiscontinuityAndAnEvent() throws {
    let (pipeline, _) = try makePipeline(format: .transportStream)
    #expect(pipeline.append(CoreFixtures.audio(.audioApp, frame: 1)))
    let mono = try AACFormat(objectType: 2, sampleRate: 44100, channels: 1)
    #expect(pipeline.changeFormat(.aac(mono), for: .audioApp))
    // The same format again changes nothing.
    #expect(pipeline.changeFormat(.aac(mono), for: .audioApp))
    #expect(pipeline.append(CoreFixtures.audio(.audioApp, frame: 2)))
    #expect(events(pipeline) == [.formatChanged(kind: .audioApp, format: .aac(mono))])
    var units: [(discontinuity: Bool, adts: [UInt8])] = []
    while let unit = pipeline.beginSend() {
      let packet = Array(unit.slot[unit.headroom..<(unit.headroom + 188)])
      // The ADTS header follows the adaptation field and the 14-byte PES header.
      let adts = Array(packet.dropFirst(5 + Int(packet[4]) + 14).prefix(4))
      units.append((unit.info.isDiscontinuity, adts))
      pipeline.completeSend(unit, bytes: unit.slot.count)
    }
    #expect(units.map(\.discontinuity) == [false, true])
    // sampling_frequency_index 3 (48 kHz) then 4 (44.1 kHz); channel configuration 2 then 1.
    #expect(units.map { $0.adts[2] >> 2 & 0x0F } == [3, 4])
    #expect(units.map { ($0.adts[2] & 1) << 2 | $0.adts[3] >> 6 } == [2, 1])
    // A track the program does not have cannot appear mid-stream.
    let (videoOnly, _) = try makePipeline(
      format: .transportStream, tracks: TrackFormats(video: CoreFixtures.h264))
    #expect(!videoOnly.changeFormat(.aac(mono), for: .audioApp))
  }
}
