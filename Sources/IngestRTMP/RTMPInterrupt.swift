import CFFmpeg
import Glibc
import Synchronization

/// The state libavformat's interrupt callback polls while a call blocks in the sender thread.
///
/// libavformat checks the callback at least every 100 ms while it waits on a socket, so setting
/// `cancelled` from another thread, or a passed deadline, makes a blocked call return
/// `AVERROR_EXIT` within about that long.
final class RTMPInterrupt: Sendable {
  /// Sticky: once cancelled, every later call is interrupted at once.
  let cancelled = Atomic<Bool>(false)
  /// CLOCK_MONOTONIC nanoseconds after which the current call is abandoned.
  let deadline = Atomic<Int64>(.max)

  /// Starts the budget of the next libavformat call.
  func arm(for nanoseconds: Int64) {
    deadline.store(Self.monotonicNow() &+ nanoseconds, ordering: .relaxed)
  }

  /// Whether the last interrupted call ran out of time (rather than being cancelled).
  var deadlinePassed: Bool { Self.monotonicNow() >= deadline.load(ordering: .relaxed) }

  var shouldInterrupt: Bool {
    cancelled.load(ordering: .relaxed) || deadlinePassed
  }

  /// The value for `AVFormatContext.interrupt_callback`; valid while `self` is alive.
  var callback: AVIOInterruptCB {
    AVIOInterruptCB(
      callback: { opaque in
        guard let opaque else { return 0 }
        let state = Unmanaged<RTMPInterrupt>.fromOpaque(opaque).takeUnretainedValue()
        return state.shouldInterrupt ? 1 : 0
      },
      opaque: Unmanaged.passUnretained(self).toOpaque())
  }

  static func monotonicNow() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
  }
}
