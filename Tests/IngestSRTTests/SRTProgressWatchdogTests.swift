import IngestCore
import Testing

@testable import IngestSRT

@Suite struct SRTProgressWatchdogTests {
  private let second = TimeSpan.seconds(1)

  @Test func acknowledgementsAreProgress() {
    var watchdog = SRTProgressWatchdog(now: .origin)
    watchdog.observe(acknowledgements: 3, unacknowledged: 10, now: .at(2 * second))
    #expect(watchdog.sinceProgress(now: .at(2 * second)) == .zero)
    // Packets waiting, no new ACK, observed as a busy sender does: the time grows.
    for tenth in 21...50 {
      watchdog.observe(
        acknowledgements: 3, unacknowledged: 40, now: .at(Int64(tenth) * second / 10))
    }
    #expect(watchdog.sinceProgress(now: .at(5 * second)) == 3 * second)
    watchdog.observe(acknowledgements: 4, unacknowledged: 40, now: .at(5 * second))
    #expect(watchdog.sinceProgress(now: .at(5 * second)) == .zero)
  }

  @Test func aSenderWithNothingToSendIsNotStalled() {
    var watchdog = SRTProgressWatchdog(now: .origin)
    watchdog.observe(acknowledgements: 1, unacknowledged: 3, now: .at(second / 10))
    // Seconds without a write (the input paused), then data again: the clock starts afresh.
    watchdog.observe(acknowledgements: 1, unacknowledged: 3, now: .at(8 * second))
    #expect(watchdog.sinceProgress(now: .at(8 * second)) == .zero)
  }

  @Test func anEmptySendBufferIsNeverStalled() {
    var watchdog = SRTProgressWatchdog(now: .origin)
    watchdog.observe(acknowledgements: 0, unacknowledged: 0, now: .at(9 * second))
    #expect(watchdog.sinceProgress(now: .at(9 * second)) == .zero)
  }

  @Test func aNewConnectionStartsTheClock() {
    var watchdog = SRTProgressWatchdog(now: .at(4 * second))
    watchdog.observe(acknowledgements: 0, unacknowledged: 5, now: .at(4 * second + second / 2))
    #expect(watchdog.sinceProgress(now: .at(6 * second)) == 2 * second)
  }

  /// libsrt now and then reports an empty send buffer for one reading in the middle of a
  /// blackout: that is no progress; two empty readings in a row are.
  @Test func oneEmptyReadingInABlackoutIsNoProgress() {
    var watchdog = SRTProgressWatchdog(now: .origin)
    watchdog.observe(acknowledgements: 5, unacknowledged: 10, now: .at(second / 10))
    for tenth in 2...15 {
      let unacknowledged = tenth == 6 ? 0 : 10 * tenth
      watchdog.observe(
        acknowledgements: 5, unacknowledged: unacknowledged, now: .at(Int64(tenth) * second / 10))
    }
    #expect(watchdog.sinceProgress(now: .at(15 * second / 10)) == 14 * second / 10)
    watchdog.observe(acknowledgements: 5, unacknowledged: 0, now: .at(16 * second / 10))
    watchdog.observe(acknowledgements: 5, unacknowledged: 0, now: .at(17 * second / 10))
    #expect(watchdog.sinceProgress(now: .at(17 * second / 10)) == .zero)
  }
}
