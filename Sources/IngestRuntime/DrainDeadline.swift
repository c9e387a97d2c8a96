import IngestCore
import IngestPOSIX
import Synchronization

/// When a run's drain must be over: set by the replay when it starts draining (at the end of
/// its input, or after a stop), read by the writes that wait on a reader (`--to -` into a pipe
/// nobody reads), which give up a second after it (`FileSink`'s `abandoned`). One per run.
public final class DrainDeadline: Sendable {
  /// The `SystemClock` instant in nanoseconds (atomic storage); `.max` before the drain.
  private let deadline = Atomic<Int64>(MonotonicInstant.distantFuture.nanoseconds)
  /// How long after the deadline a write still waiting is given up.
  public static let grace: TimeSpan = .seconds(1)

  public init() {}

  /// The drain starts now and may take `timeout` (the earliest deadline holds). On the
  /// system's clock, whatever clock paces the run: the waits it bounds are real.
  public func begin(timeout: TimeSpan) {
    deadline.min((SystemClock().now() + timeout).nanoseconds, ordering: .acquiringAndReleasing)
  }

  /// Whether the drain began and its time (and the grace) is over, or a stop signal's drain is.
  public var isOver: Bool {
    let end = MonotonicInstant(nanoseconds: deadline.load(ordering: .acquiring))
    if end != .distantFuture && SystemClock().now() > end + Self.grace { return true }
    return StopSignal.drainIsOver
  }
}
