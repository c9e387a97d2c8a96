import Testing

@testable import IngestSRT

@Suite struct SRTProgressWatchdogTests {
  private let second: Int64 = 1_000_000_000

  @Test func acknowledgementsAreProgress() {
    var watchdog = SRTProgressWatchdog(now: 0)
    watchdog.observe(acknowledgements: 3, unacknowledged: 10, now: 2 * second)
    #expect(watchdog.sinceProgress(now: 2 * second) == 0)
    // Packets waiting, no new ACK, observed as a busy sender does: the time grows.
    for tenth in 21...50 {
      watchdog.observe(acknowledgements: 3, unacknowledged: 40, now: Int64(tenth) * second / 10)
    }
    #expect(watchdog.sinceProgress(now: 5 * second) == 3 * second)
    watchdog.observe(acknowledgements: 4, unacknowledged: 40, now: 5 * second)
    #expect(watchdog.sinceProgress(now: 5 * second) == 0)
  }

  @Test func aSenderWithNothingToSendIsNotStalled() {
    var watchdog = SRTProgressWatchdog(now: 0)
    watchdog.observe(acknowledgements: 1, unacknowledged: 3, now: second / 10)
    // Seconds without a write (the input paused), then data again: the clock starts afresh.
    watchdog.observe(acknowledgements: 1, unacknowledged: 3, now: 8 * second)
    #expect(watchdog.sinceProgress(now: 8 * second) == 0)
  }

  @Test func anEmptySendBufferIsNeverStalled() {
    var watchdog = SRTProgressWatchdog(now: 0)
    watchdog.observe(acknowledgements: 0, unacknowledged: 0, now: 9 * second)
    #expect(watchdog.sinceProgress(now: 9 * second) == 0)
  }

  @Test func aNewConnectionStartsTheClock() {
    var watchdog = SRTProgressWatchdog(now: 4 * second)
    watchdog.observe(acknowledgements: 0, unacknowledged: 5, now: 4 * second + second / 2)
    #expect(watchdog.sinceProgress(now: 6 * second) == 2 * second)
  }

  /// libsrt now and then reports an empty send buffer for one reading in the middle of a
  /// blackout: that is no progress; two empty readings in a row are.
  @Test func oneEmptyReadingInABlackoutIsNoProgress() {
    var watchdog = SRTProgressWatchdog(now: 0)
    watchdog.observe(acknowledgements: 5, unacknowledged: 10, now: second / 10)
    for tenth in 2...15 {
      let unacknowledged = tenth == 6 ? 0 : 10 * tenth
      watchdog.observe(
        acknowledgements: 5, unacknowledged: unacknowledged, now: Int64(tenth) * second / 10)
    }
    #expect(watchdog.sinceProgress(now: 15 * second / 10) == 14 * second / 10)
    watchdog.observe(acknowledgements: 5, unacknowledged: 0, now: 16 * second / 10)
    watchdog.observe(acknowledgements: 5, unacknowledged: 0, now: 17 * second / 10)
    #expect(watchdog.sinceProgress(now: 17 * second / 10) == 0)
  }
}
