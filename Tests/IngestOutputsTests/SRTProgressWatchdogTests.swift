import Testing

@testable import IngestOutputs

@Suite struct SRTProgressWatchdogTests {
  private let second: Int64 = 1_000_000_000

  @Test func acknowledgementsAreProgress() {
    var watchdog = SRTProgressWatchdog(now: 0)
    watchdog.observe(acknowledgements: 3, unacknowledged: 10, now: 2 * second)
    #expect(watchdog.sinceProgress(now: 2 * second) == 0)
    // Packets waiting, no new ACK: the time without progress grows.
    watchdog.observe(acknowledgements: 3, unacknowledged: 40, now: 5 * second)
    #expect(watchdog.sinceProgress(now: 7 * second) == 5 * second)
  }

  @Test func anEmptySendBufferIsNeverStalled() {
    var watchdog = SRTProgressWatchdog(now: 0)
    watchdog.observe(acknowledgements: 0, unacknowledged: 0, now: 9 * second)
    #expect(watchdog.sinceProgress(now: 9 * second) == 0)
  }

  @Test func aNewConnectionStartsTheClock() {
    var watchdog = SRTProgressWatchdog(now: 4 * second)
    watchdog.observe(acknowledgements: 0, unacknowledged: 5, now: 6 * second)
    #expect(watchdog.sinceProgress(now: 6 * second) == 2 * second)
  }
}
