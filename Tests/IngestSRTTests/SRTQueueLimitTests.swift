import IngestCore
import Testing

@testable import IngestSRT

/// The byte bound on libsrt's send buffer: what is in flight plus what the link drains within
/// the queue bound.
@Suite struct SRTQueueLimitTests {
  private let ms = TimeSpan.milliseconds(1)

  /// `count` readings 100 ms apart from `now` on: nothing acknowledged, 5 000 bytes buffered,
  /// libsrt's round trip `roundTrip`; with `held`, a unit held back for the queue bound at each.
  private func observe(
    _ limit: inout SRTQueueLimit, _ count: Int, roundTrip: Double, outage: Bool = false,
    held: Bool = false, from now: inout MonotonicInstant
  ) {
    for _ in 0..<count {
      limit.observe(
        acknowledgedBytes: 0, bufferedBytes: 5_000, roundTripMilliseconds: roundTrip,
        outage: outage, now: now)
      if held { limit.heldForQueueBound(now: now) }
      now += 100 * ms
    }
  }

  /// A round trip that rose while data was in flight is the path's queue; once libsrt holds
  /// nothing of ours it is not (only acknowledgements of new data would bring libsrt's smoothed
  /// figure down again, and nothing is sent while it stays up).
  @Test func aRoundTripSpikeIsNoQueueOnceNothingIsInFlight() {
    var limit = SRTQueueLimit()
    limit.observe(
      acknowledgedBytes: 0, bufferedBytes: 5_000, roundTripMilliseconds: 2, now: .origin)
    limit.observe(
      acknowledgedBytes: 10_000, bufferedBytes: 5_000, roundTripMilliseconds: 70, now: .at(100 * ms)
    )
    #expect(limit.pathQueueMilliseconds == 68)
    limit.observe(
      acknowledgedBytes: 15_000, bufferedBytes: 0, roundTripMilliseconds: 70, now: .at(200 * ms))
    #expect(limit.pathQueueMilliseconds == 0)
    #expect(
      !limit.isQueueLong(
        queuedMilliseconds: limit.queuedMilliseconds(unsentBytes: 0, sendBufferMilliseconds: 0),
        latencyMilliseconds: 120))
    // Data in flight again: libsrt's figure counts once more.
    limit.observe(
      acknowledgedBytes: 15_000, bufferedBytes: 1_316, roundTripMilliseconds: 60, now: .at(300 * ms)
    )
    #expect(limit.pathQueueMilliseconds == 58)
  }

  @Test func beforeAMeasurementTheFloorHolds() {
    var limit = SRTQueueLimit()
    #expect(limit.limitBytes(latencyMilliseconds: 200) == SRTQueueLimit.floorBytes)
  }

  /// 162,500 bytes a second drained while data waited (a 1.3 Mb/s link) on a short path: the
  /// acknowledgement interval in flight (10 ms) and half of a 200 ms latency queued, 17,875
  /// bytes.
  @Test func aBusyLinkSetsTheLimitToHalfTheLatencyAtItsRate() {
    var limit = SRTQueueLimit()
    var acknowledged: Int64 = 0
    for step in 0...20 {
      limit.observe(
        acknowledgedBytes: acknowledged, bufferedBytes: 15_000, now: .at(Int64(step) * 100 * ms))
      acknowledged += 16_250
    }
    let bytes = limit.limitBytes(latencyMilliseconds: 200)
    #expect(abs(bytes - 17_875) < 200, "\(bytes)")
    #expect(limit.limitBytes(latencyMilliseconds: 1000) > 4 * bytes)
  }

  /// On a 100 ms round trip the bytes in flight come on top of the queue: the limit is not
  /// squeezed by the distance (it once fell to the floor once the round trip passed half the
  /// latency), and the queue keeps what the latency leaves after two round trips.
  @Test func aLongPathAddsItsBytesInFlight() {
    var limit = SRTQueueLimit()
    var acknowledged: Int64 = 0
    for step in 0...20 {
      limit.observe(
        acknowledgedBytes: acknowledged, bufferedBytes: 30_000, roundTripMilliseconds: 100,
        now: .at(Int64(step) * 100 * ms))
      acknowledged += 25_000
    }
    #expect(limit.minimumRoundTripMilliseconds == 100)
    // 250 kB/s: 110 ms in flight and a quarter of 200 ms queued (200 - 2 x 100 leaves none).
    #expect(limit.queueBoundMilliseconds(latencyMilliseconds: 200) == 50)
    #expect(abs(limit.limitBytes(latencyMilliseconds: 200) - 40_000) < 300)
    // A latency of four round trips queues half of it.
    #expect(limit.queueBoundMilliseconds(latencyMilliseconds: 400) == 200)
    // 10 kB not yet sent wait 40 ms at 250 kB/s: under the 50 ms bound; 15 kB wait 60 ms.
    #expect(
      !limit.isQueueLong(
        queuedMilliseconds: limit.queuedMilliseconds(
          unsentBytes: 10_000, sendBufferMilliseconds: 300),
        latencyMilliseconds: 200))
    #expect(
      limit.isQueueLong(
        queuedMilliseconds: limit.queuedMilliseconds(
          unsentBytes: 15_000, sendBufferMilliseconds: 300),
        latencyMilliseconds: 200))
  }

  /// With loss on a long path the oldest packet in libsrt's buffer waits for its
  /// retransmission, so the buffer spans two round trips and more: with nothing unsent and the
  /// round trip at its minimum, nothing is queued.
  @Test func aRetransmissionWaitIsNoQueue() {
    var limit = SRTQueueLimit()
    var acknowledged: Int64 = 0
    for step in 0...20 {
      limit.observe(
        acknowledgedBytes: acknowledged, bufferedBytes: 150_000, roundTripMilliseconds: 300,
        now: .at(Int64(step) * 100 * ms))
      acknowledged += 25_000
    }
    let queued = limit.queuedMilliseconds(unsentBytes: 0, sendBufferMilliseconds: 700)
    #expect(queued == 0)
    #expect(!limit.isQueueLong(queuedMilliseconds: queued, latencyMilliseconds: 1000))
    // The path's own queue shows in its round trip.
    limit.observe(
      acknowledgedBytes: acknowledged, bufferedBytes: 150_000, roundTripMilliseconds: 450,
      now: .at(21 * 100 * ms))
    #expect(limit.queuedMilliseconds(unsentBytes: 0, sendBufferMilliseconds: 700) == 150)
  }

  /// libsrt reports a 100 ms round trip before it has measured one; the minimum follows the
  /// measured path once that first reading is out of the 10 s window.
  @Test func theRoundTripIsTheMinimumOfTheLastTenSeconds() {
    var limit = SRTQueueLimit()
    limit.observe(acknowledgedBytes: 0, bufferedBytes: 0, roundTripMilliseconds: 100, now: .origin)
    for step in 1...120 {
      limit.observe(
        acknowledgedBytes: 0, bufferedBytes: 0, roundTripMilliseconds: 300,
        now: .at(Int64(step) * 100 * ms))
    }
    #expect(limit.minimumRoundTripMilliseconds == 300)
  }

  /// Intervals that start or end with an empty buffer measure what was offered, not what the
  /// link can take: they change nothing.
  @Test func anIdleLinkIsNotMeasured() {
    var limit = SRTQueueLimit()
    limit.observe(acknowledgedBytes: 0, bufferedBytes: 0, now: .origin)
    limit.observe(acknowledgedBytes: 1_000, bufferedBytes: 0, now: .at(100 * ms))
    limit.observe(acknowledgedBytes: 2_000, bufferedBytes: 5_000, now: .at(200 * ms))
    #expect(limit.drainBytesPerSecond == nil)
    limit.observe(acknowledgedBytes: 30_000, bufferedBytes: 5_000, now: .at(300 * ms))
    #expect(limit.drainBytesPerSecond == 280_000)
  }

  /// A slower link lowers the limit within a few intervals; it never goes below the floor.
  @Test func aSlowerLinkLowersTheLimitDownToTheFloor() {
    var limit = SRTQueueLimit()
    var acknowledged: Int64 = 0
    var now = MonotonicInstant.origin
    for _ in 0...10 {
      limit.observe(acknowledgedBytes: acknowledged, bufferedBytes: 9_000, now: now)
      acknowledged += 50_000
      now += 100 * ms
    }
    let fast = limit.limitBytes(latencyMilliseconds: 200)
    for _ in 0...10 {
      limit.observe(acknowledgedBytes: acknowledged, bufferedBytes: 9_000, now: now)
      acknowledged += 500
      now += 100 * ms
    }
    #expect(fast > 40_000)
    #expect(limit.limitBytes(latencyMilliseconds: 200) == SRTQueueLimit.floorBytes)
  }

  @Test func shortIntervalsWaitForALongerOne() {
    var limit = SRTQueueLimit()
    limit.observe(acknowledgedBytes: 0, bufferedBytes: 5_000, now: .origin)
    limit.observe(acknowledgedBytes: 10_000, bufferedBytes: 5_000, now: .at(10 * ms))
    #expect(limit.drainBytesPerSecond == nil)
    limit.observe(acknowledgedBytes: 20_000, bufferedBytes: 5_000, now: .at(100 * ms))
    #expect(limit.drainBytesPerSecond == 200_000)
  }

  /// A connection starts from the stream's own rate: 6.25 MB/s (50 Mb/s) on a short path with
  /// a 120 ms latency allows 10 ms in flight and 60 ms queued, 437,500 bytes, where the floor
  /// alone held the first seconds in the ring. Once libsrt holds bytes it has not sent, the
  /// measured drain alone sets the limit, whatever the stream's rate.
  @Test func aConnectionStartsFromTheStreamsRateUntilTheFirstQueue() {
    var limit = SRTQueueLimit()
    #expect(
      limit.limitBytes(
        latencyMilliseconds: 120, queuedMilliseconds: 0, streamBytesPerSecond: 6_250_000)
        == 437_500)
    // A measured drain above the stream's rate, doubled, wins.
    limit.observe(acknowledgedBytes: 0, bufferedBytes: 5_000, now: .origin)
    limit.observe(acknowledgedBytes: 400_000, bufferedBytes: 5_000, now: .at(100 * ms))
    #expect(
      limit.limitBytes(
        latencyMilliseconds: 120, queuedMilliseconds: 0, streamBytesPerSecond: 1_000_000)
        == 560_000)
    // A queue in libsrt ends the slow start: the drain alone, 4 MB/s over 70 ms.
    #expect(
      limit.limitBytes(
        latencyMilliseconds: 120, queuedMilliseconds: 40, streamBytesPerSecond: 6_250_000)
        == 280_000)
    #expect(!limit.slowStart)
    #expect(
      limit.limitBytes(
        latencyMilliseconds: 120, queuedMilliseconds: 0, streamBytesPerSecond: 6_250_000)
        == 280_000)
  }

  /// A slow start that ends before the drain is measured (the ring's backlog from the
  /// handshake handed over at once spans more than a round trip) leaves the stream's rate, not
  /// the floor: 250,000 bytes a second over a 600 ms round trip, the acknowledgement interval
  /// and half of a 2,410 ms latency.
  @Test func aSlowStartEndedBeforeAMeasurementKeepsTheStreamsRate() {
    var limit = SRTQueueLimit()
    var now = MonotonicInstant.origin
    observe(&limit, 1, roundTrip: 600, from: &now)
    let limitBytes = limit.limitBytes(
      latencyMilliseconds: 2_410, queuedMilliseconds: 90, streamBytesPerSecond: 250_000)
    #expect(!limit.slowStart)
    #expect(limitBytes == Int(250_000 * (0.610 + 2.410 / 2)))
  }

  /// Units held back for the queue bound for a second in a row end the slow start as well:
  /// the link is full. A moment's hold does not.
  @Test func unitsHeldForTheQueueBoundEndTheSlowStart() {
    var limit = SRTQueueLimit()
    limit.observe(acknowledgedBytes: 0, bufferedBytes: 5_000, now: .origin)
    limit.observe(acknowledgedBytes: 400_000, bufferedBytes: 5_000, now: .at(100 * ms))
    limit.heldForQueueBound(now: .at(100 * ms))
    limit.heldForQueueBound(now: .at(500 * ms))
    limit.released()
    limit.heldForQueueBound(now: .at(700 * ms))
    #expect(limit.slowStart)
    limit.heldForQueueBound(now: .at(1_700 * ms))
    #expect(!limit.slowStart)
    // The drain alone (4 MB/s over 70 ms), not twice it nor the stream's rate.
    #expect(
      limit.limitBytes(
        latencyMilliseconds: 120, queuedMilliseconds: 0, streamBytesPerSecond: 6_250_000)
        == 280_000)
  }

  @Test func aNewConnectionForgetsTheRate() {
    var limit = SRTQueueLimit()
    limit.observe(acknowledgedBytes: 0, bufferedBytes: 5_000, now: .origin)
    limit.observe(acknowledgedBytes: 100_000, bufferedBytes: 5_000, now: .at(100 * ms))
    limit.reset()
    #expect(limit.drainBytesPerSecond == nil)
    #expect(limit.limitBytes(latencyMilliseconds: 200) == SRTQueueLimit.floorBytes)
  }

  /// 300 ms with 1 % loss: every loss holds the acknowledgements back for a round trip, so
  /// libsrt's flight (sent, not acknowledged) is twice the bandwidth-delay product. That is
  /// flight, not queue: the limit still leaves the queue bound on top of it, where counting
  /// the whole buffer against drain x (flight + bound) held the stream back in the ring.
  @Test func aFlightLongerThanTheRoundTripIsNotQueue() {
    var limit = SRTQueueLimit()
    var acknowledged: Int64 = 0
    for step in 0...40 {
      limit.observe(
        acknowledgedBytes: acknowledged, bufferedBytes: 200_000, roundTripMilliseconds: 300,
        now: .at(Int64(step) * 100 * ms))
      acknowledged += 31_250
    }
    // 312.5 kB/s: 310 ms in flight (96,875 bytes) and 400 ms queued (125,000 bytes).
    let plain = limit.limitBytes(latencyMilliseconds: 1000)
    #expect(abs(plain - 221_875) < 1_000, "\(plain)")
    let flight = 190_000
    let withFlight = limit.limitBytes(latencyMilliseconds: 1000, flightBytes: flight)
    #expect(abs(withFlight - (flight + 125_000)) < 1_000, "\(withFlight)")
  }

  /// Acknowledgements that stop for a round trip (a loss) and then come at once are one
  /// drain rate over intervals of a round trip, not a rate that reads zero, then double.
  @Test func onALongPathTheDrainIsMeasuredOverARoundTrip() {
    var limit = SRTQueueLimit()
    var acknowledged: Int64 = 0
    for step in 0...60 {
      // 50 ms readings; every sixth one brings 300 ms of acknowledgements at once.
      if step % 6 == 0 { acknowledged += 6 * 12_500 }
      limit.observe(
        acknowledgedBytes: acknowledged, bufferedBytes: 100_000, roundTripMilliseconds: 300,
        now: .at(Int64(step) * 50 * ms))
    }
    let rate = limit.drainBytesPerSecond ?? 0
    #expect(abs(rate - 250_000) < 30_000, "\(rate)")
  }

  /// An outage of a second or more may end on another path: the round trip's minimum starts
  /// again, so a handover from 40 ms to 180 ms is not 140 ms of path queue for 10 s.
  @Test func anOutageStartsTheRoundTripAgain() {
    var limit = SRTQueueLimit()
    var now = MonotonicInstant.origin
    observe(&limit, 50, roundTrip: 40, from: &now)
    observe(&limit, 15, roundTrip: 40, outage: true, from: &now)
    observe(&limit, 10, roundTrip: 180, from: &now)
    #expect(limit.minimumRoundTripMilliseconds == 180)
    #expect(limit.pathQueueMilliseconds == 0)
  }

  /// While the path's round trip settles after an outage it is unknown: no path queue, where
  /// the whole round trip once counted as one and held every unit back.
  @Test func whileThePathSettlesThereIsNoPathQueue() {
    var limit = SRTQueueLimit()
    var now = MonotonicInstant.origin
    observe(&limit, 30, roundTrip: 40, from: &now)
    observe(&limit, 15, roundTrip: 40, outage: true, from: &now)
    limit.observe(acknowledgedBytes: 0, bufferedBytes: 5_000, roundTripMilliseconds: 183, now: now)
    #expect(limit.pathQueueMilliseconds == 0)
    #expect(
      !limit.isQueueLong(
        queuedMilliseconds: limit.queuedMilliseconds(unsentBytes: 0, sendBufferMilliseconds: 200),
        latencyMilliseconds: 200))
  }

  /// Held back for the path's queue alone (nothing unsent), little goes out and libsrt's
  /// smoothed figure stays where it was: after the queue's own time and a round trip it counts
  /// as drained, until libsrt reports another figure.
  @Test func aPathQueueHeldLongerThanItselfCountsAsDrained() {
    var limit = SRTQueueLimit()
    var now = MonotonicInstant.origin
    for _ in 0..<20 {
      limit.observe(
        acknowledgedBytes: 0, bufferedBytes: 1_316, roundTripMilliseconds: 180, now: now)
      now += 100 * ms
    }
    limit.observe(acknowledgedBytes: 0, bufferedBytes: 1_316, roundTripMilliseconds: 250, now: now)
    #expect(limit.pathQueueMilliseconds == 70)
    let start = now
    while now - start <= 300 * ms {
      limit.heldForPathQueue(now: now)
      limit.observe(
        acknowledgedBytes: 0, bufferedBytes: 1_316, roundTripMilliseconds: 250, now: now)
      now += 10 * ms
    }
    #expect(limit.pathQueueMilliseconds == 0)
    // The same stale figure again changes nothing; a new one counts.
    limit.observe(acknowledgedBytes: 0, bufferedBytes: 1_316, roundTripMilliseconds: 250, now: now)
    #expect(limit.pathQueueMilliseconds == 0)
    limit.observe(acknowledgedBytes: 0, bufferedBytes: 1_316, roundTripMilliseconds: 230, now: now)
    #expect(limit.pathQueueMilliseconds == 50)
  }

  /// While the path settles after an outage (a handover) the flight is libsrt's latest round
  /// trip, not none: counted as none, the limit let a sixth of a 180 ms path's flight through.
  @Test func whileThePathSettlesTheFlightIsTheLatestRoundTrip() {
    var limit = SRTQueueLimit()
    var now = MonotonicInstant.origin
    var acknowledged: Int64 = 0
    for _ in 0..<30 {
      acknowledged += 30_000  // 300 kB/s
      limit.observe(
        acknowledgedBytes: acknowledged, bufferedBytes: 20_000, roundTripMilliseconds: 40,
        now: now)
      now += 100 * ms
    }
    for _ in 0..<15 {
      limit.observe(
        acknowledgedBytes: acknowledged, bufferedBytes: 20_000, roundTripMilliseconds: 40,
        outage: true, now: now)
      now += 100 * ms
    }
    limit.observe(
      acknowledgedBytes: acknowledged + 1_000, bufferedBytes: 20_000, roundTripMilliseconds: 180,
      now: now)
    #expect(limit.minimumRoundTripMilliseconds == 0)
    #expect(limit.inFlightMilliseconds == 190)
    // The rate from before the blackout, over the new path's flight and a queue bound.
    let rate = limit.drainBytesPerSecond ?? 0
    #expect(abs(rate - 300_000) < 30_000, "\(rate)")
    #expect(limit.limitBytes(latencyMilliseconds: 200) >= Int(rate * 0.19))
  }

  /// A round trip that stands flat above the path's while units are held back for the queue
  /// bound is that queue, kept at the bound by the sink: not a new path. Once nothing has been
  /// held for a while, a step that stays is followed.
  @Test func aQueueKeptAtTheBoundIsNoNewPath() {
    var limit = SRTQueueLimit()
    var now = MonotonicInstant.origin
    observe(&limit, 30, roundTrip: 10, from: &now)
    observe(&limit, 60, roundTrip: 100, held: true, from: &now)
    #expect(limit.minimumRoundTripMilliseconds == 10)
    observe(&limit, 60, roundTrip: 100, from: &now)
    #expect(limit.minimumRoundTripMilliseconds == 100)
  }

  /// Before libsrt's first round trip, the one measured while connecting counts as flight: at
  /// 100 000 bytes a second over a 600 ms path, the 61 000 bytes in flight are allowed on top of
  /// the queue bound (half of a 2 410 ms latency), not the acknowledgement interval's 1 000.
  @Test func theRoundTripMeasuredWhileConnectingCountsAsFlight() {
    var limit = SRTQueueLimit()
    limit.reset(connectRoundTripMilliseconds: 600)
    limit.observe(
      acknowledgedBytes: 0, bufferedBytes: 50_000, roundTripMilliseconds: 0, now: .origin)
    #expect(limit.inFlightMilliseconds == 610)
    let seeded = limit.limitBytes(latencyMilliseconds: 2_410, streamBytesPerSecond: 100_000)
    #expect(seeded == 61_000 + 120_500)
    var unmeasured = SRTQueueLimit()
    unmeasured.observe(
      acknowledgedBytes: 0, bufferedBytes: 50_000, roundTripMilliseconds: 0, now: .origin)
    #expect(
      unmeasured.limitBytes(latencyMilliseconds: 2_410, streamBytesPerSecond: 100_000)
        == 1_000 + 120_500)
    // libsrt's own figure takes over once it has one.
    limit.observe(
      acknowledgedBytes: 1_000, bufferedBytes: 50_000, roundTripMilliseconds: 300,
      now: .at(100 * ms))
    #expect(limit.inFlightMilliseconds == 310)
  }
}
