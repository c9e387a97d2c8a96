import IngestCore

/// How much libsrt's send buffer may hold before the sink holds the next message back: the
/// bytes in flight (the bandwidth-delay product: what the link drains in one round trip and the
/// acknowledgement interval) plus a queue bound (what it drains in `queueBoundMilliseconds`).
///
/// libsrt keeps every packet until it is acknowledged, so its buffer holds the bytes on the
/// wire as well as the bytes waiting to go. Only the waiting ones are late: a packet that
/// waits `q` before its first transmission reaches the receiver `q` later than its timestamp
/// promised, and if it is lost it needs a round trip more, all within the latency. So the
/// queue is bounded in time against the latency and the round trip, and the in-flight bytes
/// are allowed on top: bounding both together by the latency (as before) shrank the queue on
/// every path whose round trip approached half the latency, down to the floor.
///
/// The queue is counted in bytes against the drain rate (`queuedMilliseconds`), not by the send
/// buffer's time span (`msSndBuf`): the span misses a burst (a keyframe handed over at once
/// spans a few milliseconds, yet on a slow link its last packets leave long after their
/// timestamps) and counts retransmission waits as queue. So a burst is fed to libsrt as the
/// link takes it; what cannot go waits in the ring, which drops whole frames.
///
/// The drain rate is measured from the bytes acknowledged over intervals in which data was
/// waiting at both ends, each at least a round trip long (a loss holds the acknowledgements
/// back for a round trip, then they come at once: over shorter intervals the rate read zero,
/// then double), smoothed; before the first such interval the limit comes from the stream's
/// own rate (see `limitBytes`), and never falls below `floorBytes`. The round trip is the
/// path's (`PathRoundTrip`: the minimum of the last 10 s, started again after an outage of a
/// second or a step that stays; distance, not queue).
///
/// What is in flight counts as flight whatever its size: with loss on a long path, packets
/// wait a round trip and more for their retransmission, so the flight outgrows the
/// bandwidth-delay product. Counted against the limit, that held the stream back in the ring
/// at a 300 ms round trip with 1 % loss, and the ring's backlog read as congestion.
struct SRTQueueLimit {
  /// The least the buffer may hold: eight 1316-byte messages, about 0.13 s at 650 kb/s.
  static let floorBytes = 8 * SRTMessageChunker.messageSize
  /// libsrt acknowledges every 10 ms: the newest packets wait that long for their ACK.
  static let acknowledgementIntervalMilliseconds = 10.0
  private var drain = DrainRate()
  private var roundTrips = PathRoundTrip()
  private var latestTime: MonotonicInstant = .origin
  private var latestRoundTrip = 0.0
  /// Since when units are held back for the path's queue alone, and libsrt's figure then.
  private var heldForPath: (since: MonotonicInstant, figure: Double)?
  /// A figure of libsrt's taken as stale (see `heldForPathQueue`): not the path's queue until
  /// libsrt reports another.
  private var staleRoundTrip: Double?
  /// When a unit was last held back for the queue bound, and since when units are held in a
  /// row (none sent since).
  private var heldForQueue: MonotonicInstant?
  private var heldSince: MonotonicInstant?
  /// Until the first queue in libsrt (see `limitBytes`).
  private(set) var slowStart = true

  /// Forgets the measurements (a new connection). A round trip measured while connecting
  /// (`SRTHandshakeProbe`, or a quick handshake; 0: none) stands for libsrt's until libsrt
  /// measures one, a round trip and a half after the first packet: counted as no flight,
  /// that held a 600 ms path's start to the queue bound, and the ring's backlog grew to 1.1 s
  /// before the first acknowledgement came.
  mutating func reset(connectRoundTripMilliseconds: Double = 0) {
    if connectRoundTripMilliseconds > 0 { latestRoundTrip = connectRoundTripMilliseconds }
    drain.reset()
    roundTrips.reset()
    heldForPath = nil
    heldForQueue = nil
    heldSince = nil
    staleRoundTrip = nil
    slowStart = true
  }

  /// Takes libsrt's figures at `now`: bytes acknowledged since the connection was
  /// made, bytes in the send buffer, the smoothed round trip (milliseconds, 0 when unknown: not
  /// libsrt's 100 ms before its first measurement) and whether nothing gets through (`outage`:
  /// the round trip is then stale).
  mutating func observe(
    acknowledgedBytes: Int64, bufferedBytes: Int, roundTripMilliseconds: Double = 0,
    outage: Bool = false, now: MonotonicInstant
  ) {
    latestTime = now
    // While units are held back for the queue bound, the bottleneck's queue is kept at it,
    // flat: no evidence of a new distance (the link at 30 %: a 94 ms queue was taken for the
    // path, and the sink fed it to 200 ms).
    let regulating = heldForQueue.map { now - $0 < Self.regulatedQueueMemory } ?? false
    roundTrips.observe(roundTripMilliseconds, at: now, outage: outage, followSteps: !regulating)
    if roundTripMilliseconds > 0 && !outage && roundTripMilliseconds != staleRoundTrip {
      latestRoundTrip = roundTripMilliseconds
      staleRoundTrip = nil
    }
    let interval = max(
      DrainRate.minimumInterval, TimeSpan(milliseconds: flightRoundTripMilliseconds))
    drain.observe(
      delivered: acknowledgedBytes, waiting: bufferedBytes, now: now, minimumInterval: interval)
    // With nothing of ours in libsrt's buffer, nothing of ours is queued on the path either.
    // libsrt's smoothed round trip is refreshed only by acknowledgements of new data, so after
    // a spike (a receiver starved of CPU for a moment) it may go on showing a queue long gone;
    // counted as queue, it held the sink back for good: nothing sent, so no new sample. The
    // path's queue counts as drained until data is in flight again.
    if bufferedBytes == 0, let base = roundTrips.baseline(at: now) { latestRoundTrip = base }
  }

  /// The sink held a unit back at `now` for the path's queue alone (nothing of ours unsent in
  /// libsrt). libsrt refreshes its smoothed round trip only from acknowledgements of new data,
  /// so while little is sent it keeps showing a queue that has drained: held back longer than
  /// that queue and a round trip, the path counts as drained until libsrt's figure changes.
  /// After a handover the round trip stood 60 ms over the path's for seconds while a trickle
  /// went out and the ring grew to 3 s.
  mutating func heldForPathQueue(now: MonotonicInstant) {
    let held = heldForPath ?? (now, latestRoundTrip)
    heldForPath = held
    let drained = TimeSpan(milliseconds: pathQueueMilliseconds + minimumRoundTripMilliseconds)
    if now - held.since > drained {
      staleRoundTrip = latestRoundTrip
      latestRoundTrip = minimumRoundTripMilliseconds
      heldForPath = nil
    }
  }

  /// The sink held a unit back at `now` because the queue is at its bound. Held for a second
  /// in a row, the link is full and the slow start is over. (It ended only when `limitBytes`
  /// saw a queue, and that is not asked while units are held: on a link faster than the
  /// stream until its capacity fell to 30 %, the slow start outlived nine seconds of holding,
  /// and the first time the path's queue read as drained it let 190 KB through at twice the
  /// drain, which the bottleneck dropped. A moment's hold at the start, before the drain is
  /// measured, does not end it.)
  mutating func heldForQueueBound(now: MonotonicInstant) {
    heldForQueue = now
    let since = heldSince ?? now
    heldSince = since
    if now - since >= Self.fullLinkHold { slowStart = false }
  }

  /// A unit went out: whatever held it back is over.
  mutating func released() {
    heldForPath = nil
    heldSince = nil
  }

  /// How long units held back in a row for the queue bound say the link is full.
  static let fullLinkHold: TimeSpan = .seconds(1)

  /// How long after a unit was last held back for the queue bound a flat round trip may still
  /// be that queue: a step must stand this long with nothing held.
  static let regulatedQueueMemory: TimeSpan = .seconds(1)

  /// Bytes per second the link drained while data waited, smoothed; nil before a measurement.
  var drainBytesPerSecond: Double? { drain.bytesPerSecond }

  /// The path's round trip: the least smoothed RTT of the last 10 s, or since the path
  /// changed (0 before one is known).
  var minimumRoundTripMilliseconds: Double { roundTrips.baseline(at: latestTime) ?? 0 }

  /// The round trip a byte in flight takes: the path's, or while that settles after an outage
  /// (a handover), libsrt's latest figure. Not 0 then: counted as no distance, the limit
  /// allowed a sixth of a 180 ms path's flight for the two seconds of settling, and what the
  /// link drained, measured on that trickle, kept the sink at a tenth of the link after it.
  /// Before libsrt's first measurement, the one made while connecting (`reset`).
  var flightRoundTripMilliseconds: Double {
    roundTrips.baseline(at: latestTime) ?? latestRoundTrip
  }

  /// How long the newest byte in libsrt's buffer has been there when it is in flight rather
  /// than queued: one round trip and the acknowledgement interval.
  var inFlightMilliseconds: Double {
    flightRoundTripMilliseconds + Self.acknowledgementIntervalMilliseconds
  }

  /// How long a packet may wait in libsrt before its first transmission, for a receiver
  /// latency of `latencyMilliseconds`: half the latency on a short path; on a long one what
  /// the latency leaves after two round trips (a retransmission of the packet and its NAK),
  /// but never less than a quarter of it.
  func queueBoundMilliseconds(latencyMilliseconds: Int) -> Double {
    let latency = Double(max(latencyMilliseconds, 1))
    let afterRetransmission = latency - 2 * flightRoundTripMilliseconds
    return max(latency / 4, min(latency / 2, afterRetransmission))
  }

  /// The path's own queue: the smoothed round trip above its minimum; none while the path's
  /// round trip is not known (before libsrt's first measurement, and while it settles after
  /// an outage: the whole round trip counted as queue then and held every unit back for the
  /// settling time after a handover).
  var pathQueueMilliseconds: Double {
    guard let base = roundTrips.baseline(at: latestTime) else { return 0 }
    return max(0, latestRoundTrip - base)
  }

  /// How much longer than the path's round trip the newest byte handed to libsrt takes to
  /// reach the receiver: what libsrt has not sent yet (`unsentBytes`, its buffer less its
  /// flight) at the drain rate, and the path's own queue.
  ///
  /// Not the send buffer's time span (`msSndBuf`): that runs from the oldest unacknowledged
  /// packet, and with loss on a long path the oldest is one waiting for its retransmission, a
  /// round trip or more old. Counted as queue, every loss looked like congestion and halved the
  /// rate at a 300 ms round trip with 1 % loss. Only before the drain is measured, with bytes
  /// unsent, does the span stand in for the unsent time.
  func queuedMilliseconds(unsentBytes: Int, sendBufferMilliseconds: Int) -> Double {
    guard unsentBytes > 0 else { return pathQueueMilliseconds }
    guard let rate = drainBytesPerSecond, rate > 0 else {
      return max(pathQueueMilliseconds, Double(sendBufferMilliseconds) - inFlightMilliseconds)
    }
    return pathQueueMilliseconds + Double(unsentBytes) / rate * 1000
  }

  /// How long `unsentBytes` take to leave at the drain rate (or, before it is measured, at
  /// `fallbackBytesPerSecond`), in milliseconds; 0 without a rate.
  func unsentMilliseconds(unsentBytes: Int, fallbackBytesPerSecond: Double? = nil) -> Double {
    guard unsentBytes > 0,
      let rate = drainBytesPerSecond ?? fallbackBytesPerSecond, rate > 0
    else { return 0 }
    return Double(unsentBytes) / rate * 1000
  }

  /// Whether more is queued (`queuedMilliseconds`) than the bound allows.
  func isQueueLong(queuedMilliseconds: Double, latencyMilliseconds: Int) -> Bool {
    queuedMilliseconds > queueBoundMilliseconds(latencyMilliseconds: latencyMilliseconds)
  }

  /// A connection starts at the stream's own rate (`streamBytesPerSecond`, see
  /// `SRTStreamRate`) and then quickly: until libsrt first holds bytes it has not sent
  /// (`queued`, in milliseconds, beyond an acknowledgement interval) or the path's own queue
  /// shows (the round trip up by half and 20 ms), the drain measured says only how much this
  /// bound let through, so the bound doubles it, as a slow start doubles its window each round
  /// trip, and never goes below the stream's rate. Without the doubling a long path was held
  /// back while the measurement grew (at 100 ms, from the floor to 2 Mb/s took a second and
  /// left the first keyframe waiting in the ring); without the stream's rate a 50 Mb/s stream
  /// waited in the ring for its first two seconds while the doubling caught up. After the
  /// first queue, the measured drain alone (the stream's rate until it is measured): a keyframe
  /// on a slow link is fed to libsrt as the link takes it.
  ///
  /// `flightBytes` is what libsrt has sent and not had acknowledged: the flight part of the
  /// limit is never less (see the type's note on retransmission waits).
  mutating func limitBytes(
    latencyMilliseconds: Int, queuedMilliseconds: Double? = nil,
    streamBytesPerSecond: Double? = nil, flightBytes: Int = 0
  ) -> Int {
    var rate = drainBytesPerSecond
    if slowStart, let queued = queuedMilliseconds {
      // A queue in libsrt, or one on the path: over.
      let pathQueue = latestRoundTrip > 1.5 * flightRoundTripMilliseconds + 20
      if queued - pathQueueMilliseconds <= Self.acknowledgementIntervalMilliseconds && !pathQueue {
        let doubled = rate.map { 2 * $0 } ?? 0
        rate = max(doubled, streamBytesPerSecond ?? 0)
      } else {
        slowStart = false
      }
    }
    // Before the drain is measured, the stream's own rate even after the slow start: one that
    // ended at once (the ring's backlog from the handshake handed over together spans more
    // than a round trip) left the floor alone, a trickle at a 600 ms round trip, and the drain
    // measured on the trickle held the stream back for 8 s.
    if rate == nil { rate = streamBytesPerSecond }
    guard let rate, rate > 0 else { return max(Self.floorBytes, flightBytes) }
    // What waits for a retransmission is flight, but only for one more round trip than the
    // link's own flight: counted whole, a link that takes half the stream (a shaper queueing
    // and dropping) grew the flight, and the limit with it, until libsrt dropped what had
    // waited longer than the latency, and nothing was ever held back in the ring.
    let retransmissionWait = 2 * rate * inFlightMilliseconds / 1000
    let flight = max(
      rate * inFlightMilliseconds / 1000, min(Double(max(flightBytes, 0)), retransmissionWait))
    let queue = rate * queueBoundMilliseconds(latencyMilliseconds: latencyMilliseconds) / 1000
    return max(Self.floorBytes, Int(min(flight + queue, Double(Int32.max))))
  }
}
