import Testing

@testable import IngestSRT

/// The figures the SRT link meter derives from libsrt's: the round trip only once it is a
/// measurement, the loss as the receiver's first losses.
@Suite struct SRTLinkMeterTests {
  /// libsrt says 100 ms until its first measurement reaches the sender: not a round trip.
  /// The first figure that differs is, and so is every one after it, 100 ms included.
  @Test func libsrtsInitialRoundTripIsNoMeasurement() {
    var rtt = SRTMeasuredRoundTrip()
    var readings: [Double?] = []
    for msRTT: Double in [100, 100] { readings.append(rtt.reading(msRTT)) }
    #expect(readings == [nil, nil])
    #expect(!rtt.measured)
    for msRTT: Double in [301.5, 100] { readings.append(rtt.reading(msRTT)) }
    #expect(readings == [nil, nil, 301.5, 100])
    #expect(rtt.measured)
  }

  /// A loss reported again every half round trip until its retransmission arrives, a round
  /// trip after the first report, counts about three times on paths of 40 ms and more, twice
  /// at 20 ms (the 20 ms least interval), once on loopback.
  @Test func repeatedLossReportsCountOnce() {
    #expect(SRTLinkMeter.firstLosses(reported: 30, roundTripMilliseconds: 300) == 10)
    #expect(SRTLinkMeter.firstLosses(reported: 30, roundTripMilliseconds: 40) == 10)
    #expect(SRTLinkMeter.firstLosses(reported: 30, roundTripMilliseconds: 20) == 15)
    let loopback = SRTLinkMeter.firstLosses(reported: 30, roundTripMilliseconds: 0.2)
    #expect(loopback > 29.6 && loopback <= 30)
    #expect(SRTLinkMeter.firstLosses(reported: 30, roundTripMilliseconds: nil) == 30)
  }
}
