import CSRT
import IngestCore

/// Turns libsrt's cumulative statistics into a `LinkEstimate`: what the receiver acknowledged
/// over about the last second, the send buffer, the round trip, retransmissions and loss.
///
/// libsrt counts no acknowledged bytes, so they are derived: bytes that left the send buffer
/// other than by a too-late drop, i.e. unique bytes sent minus the growth of the buffer minus
/// the bytes dropped.
struct SRTLinkMeter {
  private struct Sample {
    var time: Int64
    var acknowledgedBytes: Int64
    var packetsSent: Int64
    var retransmitted: Int64
    var lost: Int64
  }

  /// The window the delivered rate is measured over.
  private let window: Int64 = 1_000_000_000
  private var samples: [Sample] = []

  /// Forgets what was measured (a new connection starts its counters at zero).
  mutating func reset() { samples.removeAll(keepingCapacity: true) }

  /// Bytes the receiver acknowledged since the connection was made: unique bytes sent, less
  /// what is still in the send buffer and what libsrt dropped as too late.
  static func acknowledgedBytes(_ stats: SRT_TRACEBSTATS) -> Int64 {
    Int64(clamping: stats.byteSentUniqueTotal) - Int64(max(stats.byteSndBuf, 0))
      - Int64(clamping: stats.byteSndDropTotal)
  }

  /// The estimate at `now`, with `queueMilliseconds` the time the newest byte has before it
  /// reaches the receiver (flight and queue, `SRTSink`), not libsrt's buffer span, which counts
  /// retransmission waits.
  mutating func estimate(
    _ stats: SRT_TRACEBSTATS, now: Int64, latencyMilliseconds: Int, queueMilliseconds: Double
  ) -> LinkEstimate {
    let buffered = Int64(max(stats.byteSndBuf, 0))
    let sample = Sample(
      time: now,
      acknowledgedBytes: Self.acknowledgedBytes(stats),
      packetsSent: stats.pktSentTotal, retransmitted: Int64(stats.pktRetransTotal),
      lost: Int64(stats.pktSndLossTotal))
    if samples.count == 16 { samples.removeFirst() }
    samples.append(sample)
    let oldest = samples.last { now - $0.time >= window } ?? samples[0]
    var delivered: Double?
    var retransmit: Double?
    var loss: Double?
    let span = now - oldest.time
    if span > 0 {
      let bytes = max(0, sample.acknowledgedBytes - oldest.acknowledgedBytes)
      delivered = Double(bytes) * 8 * 1e9 / Double(span)
      let sent = sample.packetsSent - oldest.packetsSent
      if sent > 0 {
        retransmit = Double(sample.retransmitted - oldest.retransmitted) / Double(sent)
        loss = Double(max(0, sample.lost - oldest.lost)) / Double(sent)
      }
    }
    samples.removeAll { now - $0.time > 2 * window }
    return LinkEstimate(
      time: now, queueMilliseconds: queueMilliseconds, queueBytes: Int(buffered),
      roundTripMilliseconds: stats.msRTT > 0 ? stats.msRTT : nil, deliveredBitsPerSecond: delivered,
      retransmitRatio: retransmit, lossRatio: loss,
      latencyMilliseconds: Double(latencyMilliseconds))
  }
}
