import CFFmpeg
import IngestCore
import IngestPOSIX

/// The deadline libavformat's interrupt callback polls while a call blocks in the sender thread.
///
/// libavformat checks the callback at least every 100 ms while it waits on a socket, so a passed
/// deadline makes a blocked call return `AVERROR_EXIT` within about that long. The callback runs
/// on the thread blocked in the call, the one that armed the deadline, so a plain stored value
/// is all it needs.
final class RTMPInterrupt {
  /// The `SystemClock` instant after which the current call is abandoned.
  private var deadline = MonotonicInstant.distantFuture

  /// Starts the budget of the next libavformat call.
  func arm(for budget: TimeSpan) {
    deadline = SystemClock().now() + budget
  }

  /// Whether the current call ran out of time.
  var deadlinePassed: Bool { SystemClock().now() >= deadline }

  /// The value for `AVFormatContext.interrupt_callback`; valid while `self` is alive.
  var callback: AVIOInterruptCB {
    AVIOInterruptCB(
      callback: { opaque in
        guard let opaque else { return 0 }
        let state = Unmanaged<RTMPInterrupt>.fromOpaque(opaque).takeUnretainedValue()
        return state.deadlinePassed ? 1 : 0
      },
      opaque: Unmanaged.passUnretained(self).toOpaque())
  }
}
