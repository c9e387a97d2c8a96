import IngestCore

/// Tells whether an SRT connection is still delivering: the time since the receiver last
/// acknowledged anything while data was waiting for it.
///
/// Progress is an ACK packet from the receiver. A receiver sends one only when its acknowledged
/// sequence number advances, so ACKs stop both when nothing gets through and when the connection
/// only keeps itself alive (keepalives, handshakes). Counts derived from the send buffer are not
/// used: libsrt 1.5 empties it by too-late drops as well, and counts those drops per event, not
/// per packet. A connection with nothing unacknowledged is never stalled: it has nothing to
/// deliver; but only two readings in a row say so: libsrt 1.5 now and then reports an empty
/// send buffer in the middle of a blackout (one reading, between two of a hundred packets),
/// which restarted the stall's clock and hid a 1.5 s blackout from the rate controller. Nor is one that had nothing new to send: the clock starts again when observations
/// resume after more than `idleGap` (a sender with data observes at least every send timeout).
struct SRTProgressWatchdog {
  /// A pause between observations longer than this means the sender had nothing to send.
  static let idleGap: TimeSpan = .seconds(1)
  private var acknowledgements: Int64 = 0
  private var lastProgress: MonotonicInstant
  private var lastObservation: MonotonicInstant
  /// Whether the previous reading found nothing unacknowledged.
  private var lastWasEmpty = false

  /// Starts watching a new connection at `now`.
  init(now: MonotonicInstant) {
    lastProgress = now
    lastObservation = now
  }

  /// Records what libsrt reports at `now`.
  /// - Parameters:
  ///   - acknowledgements: ACK packets received since the connection was made.
  ///   - unacknowledged: packets in the send buffer that the receiver has not acknowledged.
  mutating func observe(acknowledgements: Int64, unacknowledged: Int, now: MonotonicInstant) {
    let empty = unacknowledged == 0
    if acknowledgements > self.acknowledgements || (empty && lastWasEmpty)
      || now - lastObservation > Self.idleGap
    {
      lastProgress = now
    }
    lastWasEmpty = empty
    lastObservation = now
    self.acknowledgements = max(self.acknowledgements, acknowledgements)
  }

  /// The time since the last acknowledgement (or since the buffer was last empty) at `now`.
  func sinceProgress(now: MonotonicInstant) -> TimeSpan { max(.zero, now - lastProgress) }
}
