import IngestTestSupport
import Testing

@testable import IngestCore

/// The PCR against units that leave in append order on a virtual capture clock: 10 s of video
/// at 30 fps, app audio and mic audio in 1024-sample frames at 48 kHz, each unit reaching the
/// ring at its capture time unless its pattern says otherwise.
@Suite struct TSOutputStreamLatenessTests {
  /// One unit reaching the ring.
  struct Arrival {
    var time: Int64
    var kind: SampleKind
    var dts: Int64
  }

  static let base: Int64 = 900_000
  static let seconds: Int64 = 10

  /// Video and app audio captured and delivered on time, and the mic's frames as `mic` places
  /// them (delivery time, decode time) from their capture time.
  static func capture(mic: (Int64) -> (time: Int64, dts: Int64)) -> [Arrival] {
    var arrivals: [Arrival] = []
    for time in stride(from: 0, to: seconds * 90_000, by: 3_000) {
      arrivals.append(Arrival(time: time, kind: .video, dts: base + time))
    }
    for time in stride(from: 0, to: seconds * 90_000, by: 1_920) {
      arrivals.append(Arrival(time: time, kind: .audioApp, dts: base + time))
      let placed = mic(time + 960)
      arrivals.append(Arrival(time: placed.time, kind: .audioMic, dts: placed.dts))
    }
    // A stable sort: at the same time, units go in the order above (a burst after the video).
    return arrivals.enumerated().sorted {
      ($0.element.time, $0.offset) < ($1.element.time, $1.offset)
    }
    .map(\.element)
  }

  /// Sends the arrivals through the TS writer and reads the stream back.
  static func send(_ arrivals: [Arrival]) throws -> TransportStreamCheck {
    var sender = TSSender(TSOutputStreamTests.full)
    var frame = 0
    for arrival in arrivals {
      let keyframe = arrival.kind == .video && frame % 60 == 0
      if arrival.kind == .video { frame += 1 }
      try sender.sendNew(arrival.kind, dts: arrival.dts, isKeyframe: keyframe)
    }
    return TransportStreamCheck(bytes: sender.output)
  }

  /// Units whose decode time is before the PCR at their last byte: PID and DTS.
  static func late(_ check: TransportStreamCheck) -> [(pid: UInt16, dts: Int64)] {
    check.conformanceViolations().compactMap {
      guard case .decodeTimeBeforePCR(let pid, _, let dts, _) = $0 else { return nil }
      return (pid, dts)
    }
  }

  /// PCR rules that hold whatever the pattern: increasing, at most 40 ms apart, no time base
  /// discontinuity (the capture never stopped).
  static func expectSteadyClock(_ check: TransportStreamCheck) {
    let pcrRules = check.conformanceViolations().filter {
      switch $0 {
      case .pcrNotIncreasing, .pcrGap: true
      default: false
      }
    }
    #expect(pcrRules.map(\.description) == [])
    #expect(!check.packets.contains { $0.discontinuity })
  }

  @Test func onTimeTracksKeepTheMuxDelay() throws {
    let check = try Self.send(Self.capture { ($0, Self.base + $0) })
    #expect(Self.late(check).isEmpty)
    Self.expectSteadyClock(check)
    // No unit arrived late, so the PCR trails the newest DTS by 700 ms, as before.
    let pcrs = check.packets.compactMap(\.pcr)
    #expect(pcrs.first == Self.base - 63_000)
    #expect(pcrs.last! > Self.base + (Self.seconds * 90_000 - 63_000 - 3_000))
  }

  /// A track whose clock runs 0.95 s ahead of the others (what a mic stamped in whole seconds,
  /// rounded up, did before the timeline kept coarse clocks behind the host time), its first
  /// frame first. The PCR starts from it, so video and app audio of the first 250 ms are late:
  /// nothing sent before them said they would be (no lookahead). The first of them teaches the
  /// writer how far behind units arrive; from then on the PCR waits for them and every unit is
  /// on time.
  @Test func aTrackAheadOfTheOthersMakesOnlyTheFirstUnitsLate() throws {
    let lead: Int64 = 85_500
    let check = try Self.send(Self.capture { ($0 - 961, Self.base + lead + $0) })
    let late = Self.late(check)
    #expect(late.filter { $0.pid == 0x100 }.count == 8)
    #expect(late.filter { $0.pid == 0x101 }.count == 13)
    #expect(late.allSatisfy { $0.dts < Self.base + lead + 960 - 63_000 })
    Self.expectSteadyClock(check)
  }

  /// A mic that delivers each second of frames in one burst at the end of that second. Until
  /// its first burst the PCR waits (the mic has sent nothing yet), so that burst finds it 1.7 s
  /// behind the video and is on time; then the PCR catches up to the second it learned, and
  /// every later burst is on time too.
  @Test func aBurstDeliveringMicIsNeverLate() throws {
    let check = try Self.send(Self.capture { (($0 / 90_000 + 1) * 90_000, Self.base + $0) })
    #expect(Self.late(check).isEmpty)
    Self.expectSteadyClock(check)
    // The PCR never trails the newest DTS by more than the learned second and a PCR interval.
    let pcrs = check.packets.compactMap(\.pcr)
    #expect(pcrs.last! >= Self.base + Self.seconds * 90_000 - 90_000 - 3_600 - 3_000)
  }

  /// A mic whose clock runs 0.9 s ahead of the others and that delivers each second in one
  /// burst: when the first burst ends the wait for every track, the PCR catches up only as the
  /// video and app audio advance, so their units after the burst, which its DTS outran, are not
  /// overtaken, and the writer learns their lateness in time.
  @Test func aBurstAheadOfTheOtherTracksDoesNotLetThePCROvertakeThem() throws {
    let lead: Int64 = 81_000
    let check = try Self.send(
      Self.capture { (($0 / 90_000 + 1) * 90_000, Self.base + lead + $0) })
    #expect(Self.late(check).isEmpty)
    Self.expectSteadyClock(check)
  }

  /// A declared track that never sends (a mic turned off): the PCR waits for it only until it
  /// trails the DTS by the cap, then catches up with the 700 ms mux delay, at most as fast as the
  /// DTS advances: no PCR jumps, goes back or carries a discontinuity, and no unit is late.
  @Test func aTrackThatNeverComesHoldsThePCROnlyUpToTheCap() throws {
    let arrivals = Self.capture { ($0, Self.base + $0) }.filter { $0.kind != .audioMic }
    let check = try Self.send(arrivals)
    #expect(Self.late(check).isEmpty)
    Self.expectSteadyClock(check)
    // How far each video unit's PCR trails its DTS: 700 ms, then up to the cap, then back.
    let lags = check.units.filter { $0.pid == 0x100 }.compactMap { unit in
      check.packets[unit.firstPacket].pcr.map { unit.decodeTime! - $0 }
    }
    let cap = TSOutputStream.maximumLateness + TSOutputStream.maximumPCRInterval
    #expect(lags.first == 63_000)
    #expect(lags.max()! > cap - 3_000 && lags.max()! <= cap)
    #expect(lags.last == 63_000)
  }

  /// How far behind a unit may arrive is learned up to a cap, so one unit from a clock that is
  /// far off (one the timeline did not catch) cannot hold the PCR back for longer.
  @Test func latenessIsLearnedUpToTheCap() throws {
    var sender = TSSender(TSOutputStreamTests.full)
    try sender.sendNew(.video, dts: 2_000_000, isKeyframe: true)
    try sender.sendNew(.audioApp, dts: 2_000_000 - 900_000)
    // 10 s behind counts as 2 s: the PCR waits until the DTS is 2.04 s past it.
    let slack = TSOutputStream.maximumLateness + TSOutputStream.maximumPCRInterval
    let (_, unit) = try sender.sendNew(.video, dts: 2_000_000 - 63_000 + slack + 90)
    let expected: Int64 = 2_000_000 - 63_000 + 90
    #expect(unit[0].pcr == expected)
  }
}
