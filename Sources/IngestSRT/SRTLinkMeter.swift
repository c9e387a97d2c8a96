import CSRT
import IngestCore

/// Turns libsrt's cumulative statistics into a `LinkEstimate`: what the receiver acknowledged
/// over about the last second, the send buffer, the round trip, retransmissions and loss.
///
/// libsrt counts no acknowledged bytes, so they are derived: bytes that left the send buffer
/// other than by a too-late drop, i.e. unique bytes sent minus the growth of the buffer minus
/// the bytes dropped.
///
/// The loss is the receiver's first losses over the packets sent for the first time, not
/// libsrt's count as it stands (`firstLosses`): libsrt counts a packet again each time a loss
/// report names it, and a receiver repeats its reports (SRT's periodic NAK, every half round
/// trip or 20 ms) until the retransmission arrives, a round trip after the first. So on a
/// 300 ms path that loses 1 % each way libsrt counted 2 to 8 % lost, and retransmissions
/// (`retransmit`, reported as they are) as many.
struct SRTLinkMeter {
  private struct Sample {
    var time: MonotonicInstant
    var acknowledgedBytes: Int64
    var packetsSent: Int64
    var retransmitted: Int64
    var lost: Int64
  }

  /// The window the delivered rate is measured over.
  private let window: TimeSpan = .seconds(1)
  private var samples: [Sample] = []

  /// libsrt's receiver repeats its loss report every (RTT + 4 RTTVar) / 2, at least 20 ms
  /// (LiveCC's NAK interval), until the retransmission arrives about a round trip after the
  /// first report; each report counts the packet again. So each first loss is counted
  /// 1 + RTT / interval times: about 3 on a path of 40 ms and more, 2 at 20 ms, 1 on
  /// loopback. (The interval's RTTVar part, which libsrt does not report, makes it a little
  /// less: the estimate errs toward less loss, which the controller reads only beside a queue.)
  static func firstLosses(reported: Double, roundTripMilliseconds: Double?) -> Double {
    guard let rtt = roundTripMilliseconds, rtt > 0 else { return reported }
    let interval = max(minimumReportIntervalMilliseconds, rtt / 2)
    return reported / (1 + rtt / interval)
  }

  /// libsrt's least interval between two periodic loss reports (LiveCC, milliseconds).
  static let minimumReportIntervalMilliseconds = 20.0

  /// The earliest the connection's first acknowledgement can come: its first packet left at
  /// the connect, a round trip before (nil: the round trip is not known).
  private var firstAcknowledgementNotBefore: MonotonicInstant?

  /// Forgets what was measured (a new connection starts its counters at zero), for a connection
  /// made at `connected` on a path of `roundTripMilliseconds` (measured while connecting; nil:
  /// not known).
  mutating func reset(
    connected: MonotonicInstant = .origin, roundTripMilliseconds: Double? = nil
  ) {
    samples.removeAll(keepingCapacity: true)
    firstAcknowledgementNotBefore = roundTripMilliseconds.map {
      connected + TimeSpan(milliseconds: $0)
    }
  }

  /// Bytes the receiver acknowledged since the connection was made: the bytes handed to
  /// libsrt (`handedBytes`, counted by the sink), less what is still in its send buffer and
  /// what it dropped as too late. Not from the unique bytes sent: a message is in the buffer
  /// before it is sent, so that figure dipped by each message queued and rose twice as fast as
  /// the link while they left (once sent, once acknowledged), and the drain measured on it read
  /// 11 Mb/s on a 1.3 Mb/s link.
  static func acknowledgedBytes(_ stats: SRT_TRACEBSTATS, handedBytes: Int64) -> Int64 {
    handedBytes - Int64(max(stats.byteSndBuf, 0)) - Int64(clamping: stats.byteSndDropTotal)
  }

  /// The estimate at `now`, with `queueMilliseconds` the time the newest byte has before it
  /// reaches the receiver (flight and queue, `SRTSink`), not libsrt's buffer span, which counts
  /// retransmission waits.
  ///
  /// `roundTripMilliseconds` is libsrt's round trip once it is a measurement (nil before).
  mutating func estimate(
    _ stats: SRT_TRACEBSTATS, handedBytes: Int64, now: MonotonicInstant,
    latencyMilliseconds: Int, queueMilliseconds: Double, roundTripMilliseconds: Double?
  ) -> LinkEstimate {
    let buffered = Int64(max(stats.byteSndBuf, 0))
    let sample = Sample(
      time: now,
      acknowledgedBytes: Self.acknowledgedBytes(stats, handedBytes: handedBytes),
      packetsSent: stats.pktSentUniqueTotal, retransmitted: Int64(stats.pktRetransTotal),
      lost: Int64(stats.pktSndLossTotal))
    if samples.count == 16 { samples.removeFirst() }
    samples.append(sample)
    var oldest = samples.last { now - $0.time >= window } ?? samples[0]
    // Before its first acknowledgement a connection's time is its round trip, not a rate: at
    // 600 ms the first second's figure was a third of what the link carried, and the start-up
    // climb took two steps more than it needed. The rate counts from the last reading with
    // nothing acknowledged, or from a round trip after the connect if that is later (the
    // reading interval before the first acknowledgement made the first figure at 600 ms 12 %
    // under the nominal rate, with the link carrying twice it); until then it is nothing.
    var start = oldest.time
    if sample.acknowledgedBytes > 0,
      let unacknowledged = samples.last(where: { $0.acknowledgedBytes <= 0 }),
      unacknowledged.time > oldest.time
    {
      oldest = unacknowledged
      start = unacknowledged.time
      if let notBefore = firstAcknowledgementNotBefore, notBefore > start, notBefore < now {
        start = notBefore
      }
    }
    var delivered: Double?
    var retransmit: Double?
    var loss: Double?
    let span = now - start
    if span > .zero {
      let bytes = max(0, sample.acknowledgedBytes - oldest.acknowledgedBytes)
      delivered = Double(bytes) * 8 / span.inSeconds
      let sent = sample.packetsSent - oldest.packetsSent
      if sent > 0 {
        let retransmitted = sample.retransmitted - oldest.retransmitted
        retransmit = Double(retransmitted) / Double(sent + retransmitted)
        let reported = Double(max(0, sample.lost - oldest.lost))
        loss = min(
          1,
          Self.firstLosses(reported: reported, roundTripMilliseconds: roundTripMilliseconds)
            / Double(sent))
      }
    }
    samples.removeAll { now - $0.time > 2 * window }
    return LinkEstimate(
      time: now, queueMilliseconds: queueMilliseconds, queueBytes: Int(buffered),
      roundTripMilliseconds: roundTripMilliseconds, deliveredBitsPerSecond: delivered,
      retransmitRatio: retransmit, lossRatio: loss,
      latencyMilliseconds: Double(latencyMilliseconds))
  }
}

/// libsrt's smoothed round trip once it is a measurement. libsrt reports 100 ms (its initial
/// value, `INITIAL_RTT`) until the first round trip measured at the receiver reaches the
/// sender in an acknowledgement: on a 300 ms path, the first half second of them. Counted, it
/// made a 300 ms path look like 200 ms of queue for the 10 s its minimum was remembered. The
/// first figure that differs is a measurement (libsrt's own test), and so is every one after
/// it, 100 ms included.
struct SRTMeasuredRoundTrip {
  /// libsrt's round trip before its first measurement, in milliseconds.
  static let initialMilliseconds = 100.0
  /// Whether the round trip has left its initial value on this connection.
  private(set) var measured = false

  /// `msRTT` when it is a measurement, nil before.
  mutating func reading(_ msRTT: Double) -> Double? {
    if !measured, msRTT > 0, msRTT != Self.initialMilliseconds { measured = true }
    return measured && msRTT > 0 ? msRTT : nil
  }
}
