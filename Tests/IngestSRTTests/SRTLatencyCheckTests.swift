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
}
