import IngestCore

/// Turns `ingest-whip`'s statistics into the `LinkEstimate` the rate controller reads, as
/// SRT's statistics and RTMP's socket figures are: the rate at which RTP got through (where the
/// receiver sends transport-cc feedback, what it says arrived over the last second; else bytes
/// sent over the last second or more, less the share the receiver reports lost; never above
/// the receiver's own bandwidth estimate (REMB) where it sends one), the loss (the feedback's,
/// else the receiver reports') and round trip the receiver's RTCP reports gave, and as queue
/// what waits on our side of the link (the pipe to the child, its appsrc queues) or in the
/// path (the feedback's one-way delays above their least, over the least round trip), or the
/// whole latency when a fresh report lost heavily (a bottleneck's queue overflowed: nothing
/// waits on our side, webrtcbin does not pace).
struct WHIPLinkMeter {
  /// What the queue is judged against: media older than this at the sender is late for a
  /// sub-second stream.
  static let latencyMilliseconds = 400.0
  /// Bytes always in flight in `ingest-whip` at a healthy moment (the frame being packetized:
  /// a keyframe at 2 Mb/s is some 30 KB), not counted as queue: a snapshot of its appsrcs
  /// taken while one passes says nothing of the link.
  static let floorBytes = 48 * 1024
  /// RTCP silence up to this is a receiver's ordinary report interval (about a second), not
  /// a stall.
  static let reportIntervalMilliseconds = 2500.0
  /// A receiver report losing this share of the packets (GCC's threshold for lowering the
  /// rate, draft-ietf-rmcat-gcc) says a bottleneck's queue overflowed, when its round trip is
  /// `overflowRoundTripMargin` above the least (the queue that overflowed is full); from
  /// `heavyLoss` on, whatever the round trip (the report's may be measured on a sender report
  /// sent before the queue grew). A report covers what came since the last one, 0.5 to 1.5 s
  /// with aiortc: random loss of 2 % a packet lost 11 of some 90 in one (11.7 %), at the path's
  /// round trip, and read as an overflow it cut a run to 1.1 Mb/s from 1.7.
  static let overflowLoss = 0.1
  static let heavyLoss = 0.2
  static let overflowRoundTripMargin = 25.0
  /// How long after its statistics line a loss is read as an overflow: long enough for the
  /// controller's two readings (200 ms apart) that make a severe queue, short enough that
  /// the same report, read again until the next line a second later, is not taken for new
  /// congestion once the rate is already lowered.
  static let overflowFreshness: TimeSpan = .milliseconds(450)
  /// RTCP silence from this on, sampled once a second, may be a blackout (aiortc reports every
  /// 0.5 to 1.5 s; a 2 s blackout read 1.4 s): heavy loss in the reports after it, with the
  /// round trip within `darkRoundTripMargin` of its least, is what was sent into the dark, not
  /// a bottleneck's queue overflowing (which shows in the round trip: 400 ms through the
  /// half-rate link). Read as an overflow, a 2 s blackout cut a 2 Mb/s target to the 0.3 Mb/s
  /// floor, and aiortc, which holds every frame behind a packet it did not ask for until 512
  /// more packets came, showed nothing for 7 to 8 s.
  static let darkMilliseconds = 1000.0
  static let darkRoundTripMargin = 25.0
  /// How long after the last statistics that saw the silence the reports' loss is the
  /// blackout's: the silence ends up to a second after that line, and the report that covers
  /// it may be the second after the end, 1.5 s apart (aiortc's first report after a 2 s
  /// blackout, sent before a packet had come, lost nothing; the next, 3 s after the line,
  /// lost 64 %, and at 2.5 s it was read as an overflow that cut the target to 0.5 Mb/s).
  static let afterDark: TimeSpan = .milliseconds(4000)
  /// The span the delivered rate is measured over.
  private static let window: TimeSpan = .seconds(1)

  private var samples:
    [(time: MonotonicInstant, bytes: Int64, lost: Int64, packets: Int64, roundTrip: Double?)] = []
  private(set) var latest: WHIPStatistics?
  /// The last statistics that had transport-cc figures over a second of feedback: the final
  /// lines, after the receiver stopped sending it, have none.
  private(set) var latestWithFeedback: WHIPStatistics?
  private var lastProgress: MonotonicInstant = .origin
  /// How long nothing left while more than `floorBytes` waited, as of the last statistics.
  private var stalled: TimeSpan = .zero
  /// When the statistics last said the receiver had been silent for `darkMilliseconds`.
  private var lastDark: MonotonicInstant?

  /// Takes one `stats` line, received at `now` (pipeline clock).
  mutating func observe(_ statistics: WHIPStatistics, now: MonotonicInstant) {
    if statistics.bytesSent > (latest?.bytesSent ?? 0) || statistics.queueBytes <= Self.floorBytes {
      lastProgress = now
    }
    stalled = now - lastProgress
    if (statistics.rtcpSilenceMilliseconds ?? 0) >= Self.darkMilliseconds { lastDark = now }
    latest = statistics
    if statistics.transportReceivedBitsPerSecond != nil { latestWithFeedback = statistics }
    if samples.count == 16 { samples.removeFirst() }
    samples.append(
      (
        now, statistics.bytesSent, statistics.packetsLost, statistics.packetsSent,
        statistics.roundTripMilliseconds
      ))
  }

  /// What the estimate's queue counts beyond what waits: the least round trip of the recent
  /// statistics where the path's queue comes from transport-cc feedback, else 0.
  var queueBaseMilliseconds: Double {
    guard latest?.transportQueueMilliseconds != nil else { return 0 }
    return leastRoundTrip ?? 0
  }

  /// The least round trip of the recent statistics, nil before the first report gave one.
  private var leastRoundTrip: Double? { samples.compactMap(\.roundTrip).min() }

  /// The estimate at `now`; nil before the first statistics.
  /// - Parameter pendingBytes: bytes written for the child and not yet taken by its pipe.
  func estimate(now: MonotonicInstant, pendingBytes: Int) -> LinkEstimate? {
    guard let latest, let newest = samples.last else { return nil }
    var delivered: Double?
    var loss = latest.fractionLost
    if let oldest = samples.last(where: { newest.time - $0.time >= Self.window }) ?? samples.first,
      newest.time > oldest.time, newest.bytes >= oldest.bytes
    {
      delivered = Double(newest.bytes - oldest.bytes) * 8 / (newest.time - oldest.time).inSeconds
      // Loss over the window from the cumulative counts when the reports give no fraction.
      let sent = newest.packets - oldest.packets
      if loss == nil, sent > 0 { loss = Double(max(0, newest.lost - oldest.lost)) / Double(sent) }
    }
    let queued = latest.queueBytes + pendingBytes
    let excess = max(0, queued - Self.floorBytes)
    let rate = (delivered ?? 0) / 8
    var queueMilliseconds = rate > 0 ? Double(excess) / rate * 1000 : 0
    // Transport-cc feedback, where the receiver sends it, says per packet what arrived and
    // when, some 100 ms after: fresher than a receiver report (every second or so, its round
    // trip measured on a sender report that may be half a second old). What arrived is the
    // delivered rate as it is, and what did not the loss.
    let feedback = latest.transportReceivedBitsPerSecond != nil
    if let received = latest.transportReceivedBitsPerSecond {
      delivered = received
      loss = latest.transportLoss ?? loss
    }
    // webrtcbin does not pace and libnice does not block: a bottleneck slower than the stream
    // shows here neither as bytes waiting nor (RTP having left) as a lower sent rate, only in
    // the receiver's reports, whose round trip lags (it needs a sender report through the
    // full queue and a report back). What left but was lost did not arrive; and heavy loss
    // is the bottleneck's queue overflowing, so it is reported as a queue of the whole
    // latency, which the controller answers at once rather than after the round trip rises.
    if let loss, let sent = delivered {
      if !feedback { delivered = sent * (1 - min(1, max(0, loss))) }
      let afterDark =
        (lastDark.map { now - $0 <= Self.afterDark } ?? false)
        && (latest.roundTripMilliseconds.map {
          $0 <= (leastRoundTrip ?? $0) + Self.darkRoundTripMargin
        }
          ?? true)
      let queueShows =
        loss >= Self.heavyLoss
        || (latest.roundTripMilliseconds.map {
          $0 >= (leastRoundTrip ?? $0) + Self.overflowRoundTripMargin
        } ?? true)
      if loss >= Self.overflowLoss, queueShows, now - newest.time <= Self.overflowFreshness,
        !afterDark
      {
        queueMilliseconds = max(queueMilliseconds, Self.latencyMilliseconds)
      }
    }
    // The path's own queue from the feedback's one-way delays, as a queue that includes the
    // round trip (as SRT's does, and as the controller judges it: above the path's round
    // trip): the least round trip seen, plus what waits in the path now.
    if let pathQueue = latest.transportQueueMilliseconds {
      queueMilliseconds = max(queueMilliseconds, queueBaseMilliseconds + max(0, pathQueue))
    }
    // A receiver that estimates its own bandwidth (REMB) says what it can take: the rate the
    // controller climbs from, and judges keeping up by, is at most that.
    if let remb = latest.receiverEstimateBitsPerSecond, remb > 0, let got = delivered {
      delivered = min(got, remb)
    }
    var estimate = LinkEstimate(
      time: now, queueMilliseconds: queueMilliseconds,
      queueBytes: queued, roundTripMilliseconds: latest.roundTripMilliseconds,
      deliveredBitsPerSecond: delivered, lossRatio: loss,
      latencyMilliseconds: Self.latencyMilliseconds)
    // A receiver that stopped reporting acknowledges nothing: a blackout shows here at once,
    // while RTP still leaves (into the void) and the queue stays empty.
    estimate.receiverEstimateBitsPerSecond = latest.receiverEstimateBitsPerSecond
    let silence = latest.rtcpSilenceMilliseconds ?? 0
    estimate.stalledMilliseconds = max(
      stalled.inMilliseconds,
      silence > Self.reportIntervalMilliseconds ? silence : 0)
    return estimate
  }
}
