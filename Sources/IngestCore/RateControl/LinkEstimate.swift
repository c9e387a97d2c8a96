/// What an output knows about its link at one moment, from its own figures: the one input the
/// rate controller reads.
///
/// SRT fills it from libsrt's statistics (send buffer, RTT, retransmissions, acknowledged bytes);
/// a TCP output (RTMP) from the bytes it could not hand to the socket and the socket's own unsent
/// queue. Fields an output cannot measure stay nil, and the controller does without them.
public struct LinkEstimate: Sendable, Equatable {
  /// When the figures were read (pipeline clock).
  public var time: MonotonicInstant
  /// How long the oldest byte not yet acknowledged has waited, in milliseconds (SRT: msSndBuf,
  /// which includes the round trip; TCP: unsent bytes over the delivered rate). Its rise above
  /// its recent minimum is the main congestion signal.
  public var queueMilliseconds: Double
  /// Bytes sent but not acknowledged, or not yet sent, held by the output and the kernel.
  public var queueBytes: Int
  /// How long what the output holds but has not sent yet takes to leave at the link's rate, in
  /// milliseconds, when the output can tell it from what is in flight (SRT: libsrt's buffer
  /// less its flight). The controller then reads the queue from it alone: what is in flight
  /// includes, on a lossy path, packets waiting a round trip for their retransmission, which
  /// is no queue.
  public var unsentMilliseconds: Double?
  /// Smoothed round-trip time, when measured.
  public var roundTripMilliseconds: Double?
  /// Bits per second the receiver acknowledged (or the socket took) since the last estimate.
  public var deliveredBitsPerSecond: Double?
  /// Share of the packets sent since the last estimate that were retransmissions (0...1).
  public var retransmitRatio: Double?
  /// Share of the packets lost (reported by the receiver) since the last estimate (0...1).
  public var lossRatio: Double?
  /// The latency the output was opened with (SRT's latency); the queue is judged against it.
  public var latencyMilliseconds: Double
  /// How long the oldest unit has waited in the output's send ring (the pipeline's backlog,
  /// in front of the output's own queue), in milliseconds.
  public var backlogMilliseconds: Double = 0
  /// How long nothing has been acknowledged while data waited, in milliseconds, when the
  /// output can tell (SRT); a blackout shows here at once, in the delivered rate only after
  /// its window.
  public var stalledMilliseconds: Double?
  /// The bit rate the receiver says it can take (WebRTC's REMB), when it sends one. Reported;
  /// the controller does not steer by it yet.
  public var receiverEstimateBitsPerSecond: Double?

  public init(
    time: MonotonicInstant, queueMilliseconds: Double, queueBytes: Int = 0,
    roundTripMilliseconds: Double? = nil, deliveredBitsPerSecond: Double? = nil,
    retransmitRatio: Double? = nil, lossRatio: Double? = nil, latencyMilliseconds: Double
  ) {
    self.time = time
    self.queueMilliseconds = queueMilliseconds
    self.queueBytes = queueBytes
    self.roundTripMilliseconds = roundTripMilliseconds
    self.deliveredBitsPerSecond = deliveredBitsPerSecond
    self.retransmitRatio = retransmitRatio
    self.lossRatio = lossRatio
    self.latencyMilliseconds = latencyMilliseconds
  }

  /// The estimate as the `link` member of a `rate` status event.
  public var statusObject: JSONObject {
    var object = JSONObject()
    object.add("queue_ms", queueMilliseconds, decimals: 0)
    object.add("queue_bytes", queueBytes)
    if let unsentMilliseconds { object.add("unsent_ms", unsentMilliseconds, decimals: 0) }
    if let roundTripMilliseconds { object.add("rtt_ms", roundTripMilliseconds, decimals: 1) }
    if let deliveredBitsPerSecond { object.add("delivered_bps", Int(deliveredBitsPerSecond)) }
    if let retransmitRatio { object.add("retransmit", retransmitRatio) }
    if let lossRatio { object.add("loss", lossRatio) }
    object.add("latency_ms", latencyMilliseconds, decimals: 0)
    object.add("backlog_ms", backlogMilliseconds, decimals: 0)
    if let stalledMilliseconds { object.add("stalled_ms", stalledMilliseconds, decimals: 0) }
    if let receiverEstimateBitsPerSecond {
      object.add("receiver_estimate_bps", Int(receiverEstimateBitsPerSecond))
    }
    return object
  }
}
