import IngestCore
import Testing

@testable import IngestWHIP

/// ingest-whip's statistics as the rate controller's `LinkEstimate`.
@Suite struct WHIPLinkMeterTests {
  static func statistics(bytes: Int64, packets: Int64, lost: Int64 = 0, queue: Int = 0)
    -> WHIPStatistics
  {
    var statistics = WHIPStatistics()
    statistics.bytesSent = bytes
    statistics.packetsSent = packets
    statistics.packetsLost = lost
    statistics.queueBytes = queue
    return statistics
  }

  @Test func nothingBeforeTheFirstStatistics() {
    #expect(WHIPLinkMeter().estimate(now: .origin, pendingBytes: 0) == nil)
  }

  @Test func theDeliveredRateLossAndRoundTripComeFromTheReports() throws {
    var meter = WHIPLinkMeter()
    meter.observe(Self.statistics(bytes: 0, packets: 0), now: .origin)
    let queue = WHIPLinkMeter.floorBytes + 25_000
    var second = Self.statistics(bytes: 250_000, packets: 200, lost: 4, queue: queue)
    second.roundTripMilliseconds = 42
    second.receiverEstimateBitsPerSecond = 2_500_000
    meter.observe(second, now: .at(.seconds(1)))
    let estimate = try #require(meter.estimate(now: .at(.seconds(1)), pendingBytes: 0))
    // 2 Mb/s left; the 2 % the receiver lost did not arrive.
    #expect(estimate.deliveredBitsPerSecond == 1_960_000)
    #expect(estimate.roundTripMilliseconds == 42)
    #expect(estimate.receiverEstimateBitsPerSecond == 2_500_000)
    // No loss fraction in the report: the cumulative counts give it.
    #expect(estimate.lossRatio == 0.02)
    // 25 000 bytes above the floor waiting at 250 000 bytes a second: 100 ms of queue.
    #expect(estimate.queueBytes == queue)
    #expect(estimate.queueMilliseconds == 100)
    #expect(estimate.latencyMilliseconds == WHIPLinkMeter.latencyMilliseconds)
  }

  /// Where the receiver sends transport-cc feedback, what it says arrived over the last second
  /// is the delivered rate (not what left less the reports' loss) and its loss the loss; the
  /// path's queue from its one-way delays counts over the least round trip.
  @Test func transportFeedbackGivesRateLossAndPathQueue() throws {
    var meter = WHIPLinkMeter()
    var first = Self.statistics(bytes: 0, packets: 0)
    first.roundTripMilliseconds = 100
    meter.observe(first, now: .origin)
    var second = Self.statistics(bytes: 250_000, packets: 200, lost: 4)
    second.fractionLost = 0.02
    second.roundTripMilliseconds = 130
    second.transportFeedbackCount = 40
    second.transportReceivedBitsPerSecond = 1_500_000
    second.transportLoss = 0.05
    second.transportQueueMilliseconds = 60
    meter.observe(second, now: .at(.seconds(1)))
    let estimate = try #require(meter.estimate(now: .at(.seconds(1)), pendingBytes: 0))
    #expect(estimate.deliveredBitsPerSecond == 1_500_000)
    #expect(estimate.lossRatio == 0.05)
    // 60 ms in the path's queues over the least round trip seen (100 ms).
    #expect(estimate.queueMilliseconds == 160)
    #expect(meter.queueBaseMilliseconds == 100)
    // Without feedback figures, the reports' path as before.
    var third = second
    third.transportReceivedBitsPerSecond = nil
    third.transportLoss = nil
    third.transportQueueMilliseconds = nil
    third.bytesSent = 500_000
    meter.observe(third, now: .at(.seconds(2)))
    let reports = try #require(meter.estimate(now: .at(.seconds(2)), pendingBytes: 0))
    #expect(reports.deliveredBitsPerSecond == 1_960_000)
    #expect(reports.lossRatio == 0.02)
    #expect(reports.queueMilliseconds == 0)
    #expect(meter.queueBaseMilliseconds == 0)
  }

  /// A receiver's REMB below what got through bounds the delivered rate the controller climbs
  /// from; one above it changes nothing (the first test).
  @Test func theReceiversEstimateBoundsTheDeliveredRate() throws {
    var meter = WHIPLinkMeter()
    meter.observe(Self.statistics(bytes: 0, packets: 0), now: .origin)
    var second = Self.statistics(bytes: 250_000, packets: 200)
    second.receiverEstimateBitsPerSecond = 1_200_000
    meter.observe(second, now: .at(.seconds(1)))
    let estimate = try #require(meter.estimate(now: .at(.seconds(1)), pendingBytes: 0))
    #expect(estimate.deliveredBitsPerSecond == 1_200_000)
  }

  /// webrtcbin neither paces nor blocks: a bottleneck narrower than the stream shows only as
  /// the receiver's loss, which is read as its queue overflowing, once, while fresh.
  @Test func heavyLossIsAnOverflowedQueueWhileFresh() throws {
    var meter = WHIPLinkMeter()
    meter.observe(Self.statistics(bytes: 0, packets: 0), now: .origin)
    var second = Self.statistics(bytes: 125_000, packets: 100, lost: 20)
    second.fractionLost = 0.2
    meter.observe(second, now: .at(.seconds(1)))
    let fresh = try #require(meter.estimate(now: .at(.milliseconds(1200)), pendingBytes: 0))
    #expect(fresh.queueMilliseconds == WHIPLinkMeter.latencyMilliseconds)
    #expect(fresh.deliveredBitsPerSecond == 800_000)
    // The same report read again later is no new overflow.
    let stale = try #require(meter.estimate(now: .at(.milliseconds(1600)), pendingBytes: 0))
    #expect(stale.queueMilliseconds == 0)
  }

  /// A report losing a tenth (but under a fifth) is an overflow only with the round trip up by
  /// the queue that overflowed: at the path's round trip it is random loss on a short report.
  @Test(arguments: [(104.0, false), (160.0, true)])
  func aTenthLostIsAnOverflowOnlyWithTheQueue(roundTrip: Double, overflows: Bool) throws {
    var meter = WHIPLinkMeter()
    let estimate = try Self.reportAfter(
      roundTrip: 102, silence: nil, fractionLost: 0.117, roundTripAfter: roundTrip, in: &meter)
    #expect(estimate.queueMilliseconds == (overflows ? WHIPLinkMeter.latencyMilliseconds : 0))
  }

  /// The estimate 200 ms after a second report (1 s after a first at `roundTrip`, with
  /// `silence` since the receiver's last RTCP), which lost `fractionLost`.
  static func reportAfter(
    roundTrip: Double, silence: Double?, fractionLost: Double, roundTripAfter: Double,
    in meter: inout WHIPLinkMeter
  ) throws -> LinkEstimate {
    var first = statistics(bytes: 0, packets: 0)
    first.roundTripMilliseconds = roundTrip
    first.rtcpSilenceMilliseconds = silence
    meter.observe(first, now: .origin)
    var second = statistics(
      bytes: 125_000, packets: 100, lost: Int64((fractionLost * 100).rounded()))
    second.fractionLost = fractionLost
    second.roundTripMilliseconds = roundTripAfter
    meter.observe(second, now: .at(.seconds(1)))
    return try #require(meter.estimate(now: .at(.milliseconds(1200)), pendingBytes: 0))
  }

  /// The heavy loss of the reports after a blackout (the receiver silent for a second and more,
  /// the round trip at its least) is what was sent into the dark, no overflow; with the round
  /// trip up by the bottleneck's queue, or later, it is one again.
  @Test(arguments: [(42.0, false), (400.0, true)])
  func lossAfterABlackoutIsNoOverflow(roundTrip: Double, overflows: Bool) throws {
    var meter = WHIPLinkMeter()
    let estimate = try Self.reportAfter(
      roundTrip: 40, silence: 1400, fractionLost: 0.6, roundTripAfter: roundTrip, in: &meter)
    #expect(estimate.queueMilliseconds == (overflows ? WHIPLinkMeter.latencyMilliseconds : 0))
    #expect(estimate.lossRatio == 0.6)
    var later = Self.statistics(bytes: 250_000, packets: 200, lost: 80)
    later.fractionLost = 0.2
    later.roundTripMilliseconds = 40
    meter.observe(later, now: .at(.seconds(5)))
    let overflow = try #require(meter.estimate(now: .at(.milliseconds(5200)), pendingBytes: 0))
    #expect(overflow.queueMilliseconds == WHIPLinkMeter.latencyMilliseconds)
  }

  @Test func theReceiverReportsLossFractionWins() throws {
    var meter = WHIPLinkMeter()
    meter.observe(Self.statistics(bytes: 0, packets: 0), now: .origin)
    var second = Self.statistics(bytes: 100_000, packets: 100, lost: 50)
    second.fractionLost = 0.1
    meter.observe(second, now: .at(.seconds(1)))
    #expect(meter.estimate(now: .at(.seconds(1)), pendingBytes: 0)?.lossRatio == 0.1)
  }

  @Test func bytesWaitingForThePipeAreQueueToo() throws {
    var meter = WHIPLinkMeter()
    meter.observe(Self.statistics(bytes: 0, packets: 0), now: .origin)
    let queue = WHIPLinkMeter.floorBytes + 1000
    meter.observe(
      Self.statistics(bytes: 100_000, packets: 100, queue: queue), now: .at(.seconds(1)))
    let estimate = try #require(meter.estimate(now: .at(.seconds(1)), pendingBytes: 9000))
    #expect(estimate.queueBytes == queue + 9000)
    #expect(estimate.queueMilliseconds == 100)
  }

  @Test func aFrameInFlightIsNoQueue() throws {
    var meter = WHIPLinkMeter()
    meter.observe(Self.statistics(bytes: 0, packets: 0), now: .origin)
    meter.observe(
      Self.statistics(bytes: 100_000, packets: 100, queue: 30_000), now: .at(.seconds(1)))
    let estimate = try #require(meter.estimate(now: .at(.seconds(1)), pendingBytes: 0))
    #expect(estimate.queueMilliseconds == 0)
    #expect(estimate.stalledMilliseconds == 0)
  }

  /// A receiver that stopped reporting: RTP still leaves, the queue is empty, and only the
  /// RTCP silence tells.
  @Test func aSilentReceiverShowsAsAStall() throws {
    var meter = WHIPLinkMeter()
    var quiet = Self.statistics(bytes: 100_000, packets: 100)
    quiet.rtcpSilenceMilliseconds = 900
    meter.observe(quiet, now: .at(.seconds(1)))
    #expect(meter.estimate(now: .at(.seconds(1)), pendingBytes: 0)?.stalledMilliseconds == 0)
    var silent = Self.statistics(bytes: 200_000, packets: 200)
    silent.rtcpSilenceMilliseconds = 4000
    meter.observe(silent, now: .at(.seconds(2)))
    #expect(meter.estimate(now: .at(.seconds(2)), pendingBytes: 0)?.stalledMilliseconds == 4000)
  }

  @Test func aQueueThatStopsDrainingShowsAsAStall() throws {
    var meter = WHIPLinkMeter()
    meter.observe(Self.statistics(bytes: 0, packets: 0), now: .origin)
    meter.observe(Self.statistics(bytes: 100_000, packets: 100, queue: 5000), now: .at(.seconds(1)))
    meter.observe(
      Self.statistics(bytes: 100_000, packets: 100, queue: 90_000), now: .at(.seconds(3)))
    let estimate = try #require(meter.estimate(now: .at(.seconds(3)), pendingBytes: 0))
    #expect(estimate.stalledMilliseconds == 2000)
  }
}
