import IngestCore

/// When to try a request again, and how long to wait first.
///
/// The wait doubles from `initialDelay` with each failure of the same request up to
/// `maximumDelay`, spread by the jitter of `Backoff` (so clients that failed together do not come
/// back together); it is counted from the end of the failed attempt and starts again from
/// `initialDelay` for the next request.
public struct RetryPolicy: Equatable, Sendable {
  /// Seconds before the first retry (nominal).
  public var initialDelay: Double
  /// Upper bound of the nominal delay, in seconds: after an outage ends, the next attempt comes
  /// at most this long (plus jitter) later.
  public var maximumDelay: Double

  public init(initialDelay: Double = 0.5, maximumDelay: Double = 5) {
    self.initialDelay = initialDelay
    self.maximumDelay = max(initialDelay, maximumDelay)
  }

  /// What a response status means for the request.
  public enum Verdict: Equatable, Sendable {
    case success
    case retry
    case refuse
  }

  /// 2xx succeeds; 5xx, 408 (request timeout) and 429 (too many requests) are retried; the other
  /// statuses (4xx, and 1xx/3xx that a PUT must not end with) are final.
  public static func verdict(status: Int) -> Verdict {
    switch status {
    case 200..<300: .success
    case 408, 429, 500..<600: .retry
    default: .refuse
    }
  }

  /// The delays for one request.
  public func backoff(seed: UInt64) -> Backoff {
    var backoff = Backoff(seed: seed)
    backoff.initial = TimeSpan(seconds: initialDelay)
    backoff.maximum = TimeSpan(seconds: maximumDelay)
    return backoff
  }
}
