import IngestCore
import Testing

@testable import IngestSRT

/// Units libsrt dropped on the sending side are found from its packet counts and the bytes
/// of the stream handed over.
@Suite struct SRTDropLedgerTests {
  private let message = SRTMessageChunker.messageSize

  /// Ten video units of two messages each; the buffer holds the last six messages when libsrt
  /// reports two dropped packets: they were the two just ahead of the head, the fifth unit.
  @Test func droppedPacketsAreTheUnitsJustAheadOfTheHead() {
    var ledger = SRTDropLedger()
    for _ in 0..<10 {
      ledger.unitWritten(kind: .video, bytes: 2 * message)
      ledger.messageSent()
      ledger.messageSent()
    }
    ledger.observe(droppedPackets: 0, bufferedPackets: 10)
    ledger.observe(droppedPackets: 2, bufferedPackets: 6)
    #expect(ledger.lostUnits[Int(SampleKind.video.rawValue)] == 1)
    // Read again, nothing more was dropped: nothing more is lost.
    ledger.observe(droppedPackets: 2, bufferedPackets: 2)
    #expect(ledger.lostUnits[Int(SampleKind.video.rawValue)] == 1)
  }

  /// A drop range that cuts through units counts every unit it touches, once, by its track.
  @Test func everyUnitTouchedCountsOnceByTrack() {
    var ledger = SRTDropLedger()
    let units: [(SampleKind, Int)] = [
      (.video, 3 * message), (.audioApp, message / 2),
      (.audioMic, message / 2), (.video, 3 * message),
    ]
    for (kind, bytes) in units {
      ledger.unitWritten(kind: kind, bytes: bytes)
    }
    for _ in 0..<7 { ledger.messageSent() }
    // Messages 2 to 4 dropped (bytes 2 x 1316 up to 5 x 1316): the first video unit's last
    // message, both audio units (in message 3) and the second video unit's first.
    ledger.observe(droppedPackets: 3, bufferedPackets: 2)
    #expect(ledger.lostUnits == [2, 1, 1])
  }

  /// A new connection starts the counts again and keeps what was lost.
  @Test func aReconnectKeepsTheLosses() {
    var ledger = SRTDropLedger()
    ledger.unitWritten(kind: .video, bytes: message)
    ledger.messageSent()
    ledger.observe(droppedPackets: 1, bufferedPackets: 0)
    ledger.reset()
    ledger.unitWritten(kind: .video, bytes: message)
    ledger.messageSent()
    ledger.observe(droppedPackets: 0, bufferedPackets: 0)
    #expect(ledger.lostUnits[Int(SampleKind.video.rawValue)] == 1)
  }
}
