import Synchronization

/// What the encoding threads share: whether to stop and why, the first error, and the mic switch
/// (set by the control requests on the video thread, read by whichever thread encodes the mic).
final class RunState: Sendable {
  private let stopReason = Mutex<String?>(nil)
  private let failure = Mutex<EncoderError?>(nil)
  private let micOn = Atomic<Bool>(true)

  /// Whether the run should end (a reason was given, or a stop signal arrived).
  var isStopping: Bool { StopSignal.received || stopReason.withLock { $0 != nil } }

  /// Why the run ended; the first reason given wins.
  var reason: String { stopReason.withLock { $0 } ?? (StopSignal.received ? "signal" : "source") }

  /// Ends the run for `reason` (the first reason is kept).
  func stop(_ reason: String) {
    stopReason.withLock { if $0 == nil { $0 = reason } }
  }

  /// Ends the run with an error, which `run` then throws.
  func fail(_ error: EncoderError) {
    failure.withLock { if $0 == nil { $0 = error } }
    stop("error")
  }

  /// The first error, if any.
  var error: EncoderError? { failure.withLock { $0 } }

  /// Whether mic audio is encoded (false: silence on the mic track).
  var micEnabled: Bool {
    get { micOn.load(ordering: .relaxed) }
    set { micOn.store(newValue, ordering: .relaxed) }
  }
}
