import IngestCore
import IngestPOSIX
import Synchronization

/// One memory reading for every output of a run: the process's memory is the same whichever
/// output's control loop asks, and reading it (`ProcFootprintProbe` reads
/// `/proc/self/smaps_rollup`, which walks every page table of the process) costs more than the
/// rest of a control tick. Each loop asks once a second, from its own sender thread; a reading
/// younger than `maximumAge` is handed to the next one that asks.
final class SharedResidentProbe: ResidentMemoryProbe {
  private let probe: any ResidentMemoryProbe
  private let clock: SystemClock
  private let maximumAge: TimeSpan
  private let latest = Mutex<(time: MonotonicInstant, bytes: Int?)?>(nil)

  /// - Parameter maximumAge: how long a reading serves: half the control loops' second by
  ///   default, so that each loop's reading is at most that old.
  init(
    _ probe: any ResidentMemoryProbe, clock: SystemClock,
    maximumAge: TimeSpan = .milliseconds(500)
  ) {
    self.probe = probe
    self.clock = clock
    self.maximumAge = maximumAge
  }

  func residentBytes() -> Int? {
    let now = clock.now()
    if let reading = latest.withLock({ $0 }), now - reading.time < maximumAge {
      return reading.bytes
    }
    let bytes = probe.residentBytes()
    latest.withLock { $0 = (now, bytes) }
    return bytes
  }
}
