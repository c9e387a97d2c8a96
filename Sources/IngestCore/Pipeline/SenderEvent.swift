/// What the sender reports about its connection, for status events.
public enum SenderEvent: Sendable, Equatable {
  /// The sink opened (`attempt` 1 is the first connection).
  case connected(attempt: Int)
  /// The connection broke; the ring keeps absorbing while the sender retries.
  case disconnected(reason: String)
  /// An attempt failed; the next one is in `delayNanoseconds`.
  case retrying(reason: String, delay: TimeSpan)
  /// A failure that retrying cannot fix; the run stops.
  case failed(reason: String)
}
