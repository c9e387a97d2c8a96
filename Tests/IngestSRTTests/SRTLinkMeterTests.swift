import CSRT
import IngestCore
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

  /// The delivered rate counts from the connection's first acknowledgement: before it, time is
  /// the round trip's. On a 600 ms path with a 2 Mb/s link, a second's window from the connect
  /// read a third of that.
  @Test func theDeliveredRateStartsAtTheFirstAcknowledgement() {
    var meter = SRTLinkMeter()
    var stats = SRT_TRACEBSTATS()
    var handed: Int64 = 0
    var acknowledged: Int64 = 0
    var delivered: [Double?] = []
    // Readings every 200 ms: 50 000 bytes handed each time (2 Mb/s), the first acknowledged at
    // 600 ms, then all of it a round trip later.
    for reading in 0...5 {
      handed += 50_000
      if reading >= 3 { acknowledged += 50_000 }
      stats.byteSndBuf = Int32(handed - acknowledged)
      let estimate = meter.estimate(
        stats, handedBytes: handed,
        now: MonotonicInstant(nanoseconds: Int64(reading) * 200_000_000),
        latencyMilliseconds: 2400, queueMilliseconds: 0, roundTripMilliseconds: nil)
      delivered.append(estimate.deliveredBitsPerSecond)
    }
    // Nothing acknowledged yet: nothing delivered (and no rate before a span).
    #expect(delivered[0] == nil)
    #expect(delivered[1] == 0 && delivered[2] == 0)
    // From the last reading with nothing acknowledged: the link's 2 Mb/s, not a share of it.
    for rate in delivered[3...] { #expect(rate == 2_000_000) }
  }

  /// With the round trip known at the connect, the first acknowledgement cannot come before a
  /// round trip after it: the first rate counts from then, not from the reading before.
  @Test func theFirstRateCountsFromARoundTripAfterTheConnect() {
    var meter = SRTLinkMeter()
    meter.reset(connected: .origin, roundTripMilliseconds: 500)
    var stats = SRT_TRACEBSTATS()
    var delivered: Double?
    // Readings every 200 ms, 50 000 bytes handed each; the first acknowledgements between the
    // readings at 400 and 600 ms: 25 000 bytes, which the link carried from 500 ms on.
    for reading in 0...3 {
      stats.byteSndBuf = Int32(50_000 * (reading + 1) - (reading == 3 ? 25_000 : 0))
      delivered =
        meter.estimate(
          stats, handedBytes: Int64(50_000 * (reading + 1)),
          now: MonotonicInstant(nanoseconds: Int64(reading) * 200_000_000),
          latencyMilliseconds: 2000, queueMilliseconds: 0, roundTripMilliseconds: nil
        ).deliveredBitsPerSecond
    }
    #expect(delivered == 2_000_000)
  }
}
