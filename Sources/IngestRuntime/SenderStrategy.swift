import IngestPOSIX

/// Where a run's senders run; chosen by the caller, never inferred from the clock.
public enum SenderStrategy: Sendable {
  /// A network output (SRT, RTMP) is sent from a thread of its own, waiting on `clock`, so its
  /// connects and sends never block the loop that appends; with several outputs of which one
  /// is a network output, every output is. Local outputs alone are pumped inline.
  case threaded(SystemClock)
  /// Every output is pumped by the loop that appends, between samples: deterministic with a
  /// `VirtualClock`, and a network output's blocking calls hold that loop up.
  case inline
}
