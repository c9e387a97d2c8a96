import IngestCore
import Testing

@testable import IngestSRT

/// Units libsrt dropped on the sending side are found from its packet counts and the bytes
/// of the stream handed over; units acknowledged after their deadline count as lost too.
@Suite struct SRTDropLedgerTests {
  private let message = SRTMessageChunker.messageSize
  private let video = Int(SampleKind.video.rawValue)
  /// A deadline no reading in these tests reaches, for the tests of sender drops.
  private let never = TimeSpan.max / 2

  /// Ten video units of two messages each; the buffer holds the last six messages when libsrt
  /// reports two dropped packets: they were the two just past the previous head, the third
  /// unit.
  @Test func droppedPacketsAreTheOldestAtThePreviousReading() {
    var ledger = SRTDropLedger()
    for _ in 0..<10 {
      ledger.unitWritten(kind: .video, bytes: 2 * message, now: .origin)
      ledger.messageSent(now: .origin)
      ledger.messageSent(now: .origin)
    }
    ledger.observe(
      droppedPackets: 0, bufferedPackets: 16, now: .origin, latency: never, roundTrip: .zero)
    ledger.observe(
      droppedPackets: 2, bufferedPackets: 14, now: .origin, latency: never, roundTrip: .zero)
    #expect(ledger.lostUnits[video] == 1)
    // Read again, nothing more was dropped: nothing more is lost.
    ledger.observe(
      droppedPackets: 2, bufferedPackets: 2, now: .origin, latency: never, roundTrip: .zero)
    #expect(ledger.lostUnits[video] == 1)
  }

  /// An acknowledgement that lands with the drop moves the head further than the drop: the
  /// dropped packets are still the ones at the previous head, not the acknowledged ones.
  @Test func anAcknowledgementWithTheDropDoesNotBlameTheAcknowledged() {
    var ledger = SRTDropLedger()
    // Four small units in the first message, then a unit of four messages.
    for _ in 0..<4 { ledger.unitWritten(kind: .audioApp, bytes: message / 4, now: .origin) }
    ledger.messageSent(now: .origin)
    ledger.unitWritten(kind: .video, bytes: 4 * message, now: .origin)
    for _ in 0..<4 { ledger.messageSent(now: .origin) }
    ledger.observe(
      droppedPackets: 0, bufferedPackets: 5, now: .origin, latency: never, roundTrip: .zero)
    // The first message dropped, the next three acknowledged.
    ledger.observe(
      droppedPackets: 1, bufferedPackets: 1, now: .origin, latency: never, roundTrip: .zero)
    #expect(ledger.lostUnits == [0, 4, 0])
  }

  /// A drop range that cuts through units counts every unit it touches, once, by its track.
  @Test func everyUnitTouchedCountsOnceByTrack() {
    var ledger = SRTDropLedger()
    let units: [(SampleKind, Int)] = [
      (.video, 3 * message), (.audioApp, message / 2),
      (.audioMic, message / 2), (.video, 3 * message),
    ]
    for (kind, bytes) in units {
      ledger.unitWritten(kind: kind, bytes: bytes, now: .origin)
    }
    for _ in 0..<7 { ledger.messageSent(now: .origin) }
    // Messages 0 and 1 acknowledged, then messages 2 to 4 dropped (bytes 2 x 1316 up to
    // 5 x 1316): the first video unit's last message, both audio units (in message 3) and the
    // second video unit's first.
    ledger.observe(
      droppedPackets: 0, bufferedPackets: 5, now: .origin, latency: never, roundTrip: .zero)
    ledger.observe(
      droppedPackets: 3, bufferedPackets: 2, now: .origin, latency: never, roundTrip: .zero)
    #expect(ledger.lostUnits == [2, 1, 1])
  }

  /// Units of one message each, handed over `spacing` ms apart from 0 ms.
  private func ledger(units: Int, spacing: Int64) -> SRTDropLedger {
    var ledger = SRTDropLedger()
    for index in 0..<Int64(units) {
      ledger.messageSent(now: .at(ms(index * spacing)))
      ledger.unitWritten(kind: .video, bytes: message, now: .at(ms(index * spacing)))
    }
    return ledger
  }

  private func ms(_ milliseconds: Int64) -> TimeSpan { .milliseconds(milliseconds) }

  /// Observes at `at` ms with a latency of 170 ms and a round trip of 20 ms: a unit is late
  /// once unacknowledged 220 ms after it was handed over.
  private func observe(_ ledger: inout SRTDropLedger, buffered: Int, at: Int64, dropped: Int64 = 0)
  {
    ledger.observe(
      droppedPackets: dropped, bufferedPackets: buffered, now: .at(ms(at)), latency: ms(170),
      roundTrip: ms(20))
  }

  /// A unit still unacknowledged past its deadline counts as lost; one acknowledged before its
  /// deadline does not, however late the reading that sees it gone.
  @Test func aUnitUnacknowledgedPastItsDeadlineIsLate() {
    var ledger = ledger(units: 3, spacing: 100)
    // At 250 ms unit 0 is acknowledged; unit 1 (at 100 ms) is not late yet, unit 2 neither.
    observe(&ledger, buffered: 2, at: 250)
    #expect(ledger.lostUnits[video] == 0)
    // At 330 ms unit 1 is still there: late. Unit 2 (at 200 ms) is not.
    observe(&ledger, buffered: 2, at: 330)
    #expect(ledger.lostUnits[video] == 1 && ledger.lateUnits == 1)
  }

  /// A late unit acknowledged alone (nothing after it arrived before it) was played late: it
  /// goes back to sent.
  @Test func aLateUnitAcknowledgedAloneWasPlayedLate() {
    var ledger = ledger(units: 3, spacing: 100)
    observe(&ledger, buffered: 3, at: 330)
    #expect(ledger.lostUnits[video] == 2)
    // Units 0 and 1 acknowledged, unit 2 not: they arrived before anything after them.
    observe(&ledger, buffered: 1, at: 400)
    #expect(ledger.lostUnits[video] == 0 && ledger.playedLate == 2)
  }

  /// Late units acknowledged together with a later unit on time may have been dropped by the
  /// receiver when that one was due: they stay lost.
  @Test func lateUnitsAcknowledgedWithALaterUnitStayLost() {
    var ledger = ledger(units: 3, spacing: 100)
    observe(&ledger, buffered: 3, at: 330)
    observe(&ledger, buffered: 0, at: 345)
    #expect(ledger.lostUnits[video] == 2 && ledger.playedLate == 0)
  }

  /// A late unit that libsrt drops afterwards is counted once, and stays lost.
  @Test func aLateUnitDroppedLaterCountsOnce() {
    var ledger = ledger(units: 1, spacing: 0)
    observe(&ledger, buffered: 1, at: 500)
    observe(&ledger, buffered: 0, at: 1100, dropped: 1)
    #expect(ledger.lostUnits[video] == 1 && ledger.lateUnits == 0 && ledger.playedLate == 0)
  }

  /// A unit whose tail waited in the carry left with the next message: its deadline runs from
  /// then.
  @Test func aCarriedTailTakesTheTimeOfItsMessage() {
    var ledger = SRTDropLedger()
    ledger.unitWritten(kind: .audioApp, bytes: message / 2, now: .origin)
    observe(&ledger, buffered: 0, at: 300)
    #expect(ledger.lostUnits == [0, 0, 0])
    // The sink counts the message as it goes, then the unit whose push sent it.
    ledger.messageSent(now: .at(ms(400)))
    ledger.unitWritten(kind: .audioApp, bytes: message / 2, now: .at(ms(400)))
    observe(&ledger, buffered: 1, at: 600)
    #expect(ledger.lostUnits == [0, 0, 0])
    observe(&ledger, buffered: 1, at: 700)
    #expect(ledger.lostUnits == [0, 2, 0])
  }

  /// A new connection starts the counts again and keeps what was lost.
  @Test func aReconnectKeepsTheLosses() {
    var ledger = SRTDropLedger()
    ledger.unitWritten(kind: .video, bytes: message, now: .origin)
    ledger.messageSent(now: .origin)
    ledger.observe(
      droppedPackets: 0, bufferedPackets: 1, now: .origin, latency: never, roundTrip: .zero)
    ledger.observe(
      droppedPackets: 1, bufferedPackets: 0, now: .origin, latency: never, roundTrip: .zero)
    ledger.reset()
    ledger.unitWritten(kind: .video, bytes: message, now: .origin)
    ledger.messageSent(now: .origin)
    ledger.observe(
      droppedPackets: 0, bufferedPackets: 0, now: .origin, latency: never, roundTrip: .zero)
    #expect(ledger.lostUnits[video] == 1)
  }

  /// What a connection had not had acknowledged when it broke is lost with it; what was
  /// acknowledged is not.
  @Test func whatABrokenConnectionHadNotHadAcknowledgedIsLost() {
    var ledger = ledger(units: 3, spacing: 0)
    observe(&ledger, buffered: 2, at: 10)
    ledger.reset()
    #expect(ledger.lostUnits[video] == 2)
    ledger.unitWritten(kind: .video, bytes: message, now: .at(ms(20)))
    ledger.messageSent(now: .at(ms(20)))
    observe(&ledger, buffered: 0, at: 40)
    #expect(ledger.lostUnits[video] == 2)
  }

  /// A unit still unacknowledged at half the latency and first seen acknowledged at its
  /// deadline is sent but possibly lost (dropped there, or played just in time); one
  /// acknowledged a round trip after it left is not, nor one whose acknowledgement only an idle
  /// reading long after saw.
  @Test func aUnitAcknowledgedAtItsDeadlineIsPossiblyLost() {
    var ledger = ledger(units: 3, spacing: 10)
    // Unit 0 acknowledged a round trip on; units 1 and 2 still waiting at 100 ms.
    observe(&ledger, buffered: 2, at: 30)
    observe(&ledger, buffered: 2, at: 100)
    // Unit 1 acknowledged at 190 ms (its deadline at 180): possibly lost, not lost.
    observe(&ledger, buffered: 1, at: 190)
    #expect(ledger.possiblyLostUnits[video] == 1 && ledger.lostUnits[video] == 0)
    // Unit 2, unseen since 100 ms (past half the latency), acknowledged by 400 ms: the same.
    observe(&ledger, buffered: 0, at: 400)
    #expect(ledger.possiblyLostUnits[video] == 2)

    var idle = self.ledger(units: 1, spacing: 0)
    // Last read as it left, next read 500 ms on: its acknowledgement may have come at once.
    observe(&idle, buffered: 1, at: 0)
    observe(&idle, buffered: 0, at: 500)
    #expect(idle.possiblyLostUnits[video] == 0)
  }

  /// A queue that just built up is not in the receiver's clock: a unit acknowledged a latency
  /// and the connection's round trip after it left is possibly lost, though the smoothed round
  /// trip (the queue's) is longer; without the connection's round trip it was not named.
  @Test(arguments: [(Int64?.some(40), 1), (nil, 0)])
  func aQueueThatJustBuiltUpDoesNotMoveTheDeadline(clockRoundTrip: Int64?, named: Int) {
    var ledger = ledger(units: 2, spacing: 0)
    for (at, buffered) in [(Int64(20), 2), (120, 1), (260, 0)] {
      ledger.observe(
        droppedPackets: 0, bufferedPackets: buffered, now: .at(ms(at)), latency: ms(200),
        roundTrip: ms(400), clockRoundTrip: clockRoundTrip.map(ms))
    }
    #expect(ledger.possiblyLostUnits[video] == named && ledger.lostUnits[video] == 0)
  }

  /// Video frames after a lost frame refer to it: up to the next keyframe they are sent but
  /// possibly lost; audio units after it are not, nor video after a keyframe that arrived.
  @Test func framesAfterALostFrameArePossiblyLostUntilTheNextKeyframe() {
    var ledger = SRTDropLedger()
    let units: [(SampleKind, Bool)] = [
      (.video, true), (.video, false), (.audioApp, false), (.video, false), (.video, true),
      (.video, false), (.video, false),
    ]
    for (kind, keyframe) in units {
      ledger.messageSent(now: .origin)
      ledger.unitWritten(kind: kind, keyframe: keyframe, bytes: message, now: .origin)
    }
    ledger.observe(
      droppedPackets: 0, bufferedPackets: 7, now: .origin, latency: never, roundTrip: .zero)
    // The first keyframe dropped by libsrt; after the second keyframe, unit 5 dropped.
    ledger.observe(
      droppedPackets: 1, bufferedPackets: 6, now: .origin, latency: never, roundTrip: .zero)
    ledger.observe(
      droppedPackets: 1, bufferedPackets: 2, now: .origin, latency: never, roundTrip: .zero)
    ledger.observe(
      droppedPackets: 2, bufferedPackets: 0, now: .origin, latency: never, roundTrip: .zero)
    #expect(ledger.lostUnits == [2, 0, 0])
    // Units 1 and 3 (video before the second keyframe), and unit 6 after the lost unit 5;
    // not the audio, nor the second keyframe.
    #expect(ledger.possiblyLostUnits == [3, 0, 0])
  }
}
