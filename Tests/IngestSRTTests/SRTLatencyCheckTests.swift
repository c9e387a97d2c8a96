import IngestCore
import Testing

@testable import IngestSRT

/// The latency against the round trip at connect, and what `latency=auto` picks.
@Suite struct SRTLatencyCheckTests {
  @Test func autoPicksFourRoundTripsAndAtLeast120Milliseconds() {
    #expect(SRTLatencyCheck.automaticLatency(roundTripMilliseconds: 0.5) == 120)
    #expect(SRTLatencyCheck.automaticLatency(roundTripMilliseconds: 100.2) == 410)
    #expect(SRTLatencyCheck.automaticLatency(roundTripMilliseconds: 300) == 1200)
  }

  @Test func underThreeRoundTripsWarnsAndNamesWhoseLatencyApplies() {
    let check = SRTLatencyCheck(
      askedMilliseconds: 200, agreedMilliseconds: 250, automatic: false,
      roundTripMilliseconds: 100, roundTripSource: "handshake")
    #expect(check.appliedBy == "receiver")
    let warning = try! #require(check.warning)
    #expect(warning.contains("250 ms"))
    #expect(warning.contains("receiver"))
    #expect(warning.contains("400 ms"))
    #expect(check.statusObject.rendered.contains("\"warning\""))
  }

  @Test func enoughLatencyOrAnUnknownRoundTripDoesNotWarn() {
    var check = SRTLatencyCheck(
      askedMilliseconds: 1000, agreedMilliseconds: 1000, automatic: true,
      roundTripMilliseconds: 300, roundTripSource: "probe")
    #expect(check.warning == nil)
    #expect(check.appliedBy == "sender")
    check.roundTripMilliseconds = nil
    #expect(check.warning == nil)
  }

  /// During the run: a handover from 40 ms to 180 ms leaves a 200 ms latency under three
  /// round trips. One warning, naming the path's round trip; with `latency=auto`, what a
  /// reconnect would ask for. Not again while the path stays; again once it grew by a quarter.
  @Test func aRoundTripThatGrowsDuringTheRunWarnsOnce() {
    var run = RunLatencyCheck()
    let second = TimeSpan.seconds(1)
    var due: Bool
    due = run.isDue(now: .origin, roundTripMilliseconds: 40, latencyMilliseconds: 200)
    #expect(!due)
    due = run.isDue(now: .at(second), roundTripMilliseconds: 180, latencyMilliseconds: 200)
    #expect(due)
    run.warned(roundTripMilliseconds: 180)
    due = run.isDue(now: .at(2 * second), roundTripMilliseconds: 185, latencyMilliseconds: 200)
    #expect(!due)
    // Checked at most twice a second.
    due = run.isDue(
      now: .at(2 * second + .nanoseconds(1)), roundTripMilliseconds: 300, latencyMilliseconds: 200)
    #expect(!due)
    due = run.isDue(now: .at(3 * second), roundTripMilliseconds: 300, latencyMilliseconds: 200)
    #expect(due)
    run.warned(roundTripMilliseconds: 300)
    // Back on a short path, then long again: a new warning.
    due = run.isDue(now: .at(4 * second), roundTripMilliseconds: 40, latencyMilliseconds: 200)
    #expect(!due)
    due = run.isDue(now: .at(5 * second), roundTripMilliseconds: 180, latencyMilliseconds: 200)
    #expect(due)

    var check = SRTLatencyCheck(
      askedMilliseconds: 200, agreedMilliseconds: 200, automatic: true,
      roundTripMilliseconds: 180, roundTripSource: "libsrt")
    check.duringRun = true
    let warning = try! #require(check.warning)
    #expect(warning.contains("180 ms the path's, measured during the run"))
    #expect(warning.contains("latency=auto would ask for 720 ms on a reconnect"))
    let event = check.statusObject.rendered
    #expect(event.contains("\"during_run\":true"))
    #expect(event.contains("\"reconnect_ms\":720"))
    #expect(event.contains("\"warning\""))
  }

  /// A warning given at connect counts: the run does not repeat it for the same path.
  @Test func aWarningAtConnectIsNotRepeatedForTheSamePath() {
    var run = RunLatencyCheck()
    run.warned(roundTripMilliseconds: 100)
    var due: Bool
    due = run.isDue(now: .origin, roundTripMilliseconds: 102, latencyMilliseconds: 250)
    #expect(!due)
    due = run.isDue(now: .at(.seconds(1)), roundTripMilliseconds: 130, latencyMilliseconds: 250)
    #expect(due)
  }
}
