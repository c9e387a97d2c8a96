import IngestPOSIX
import Testing

@testable import IngestRuntime

/// The end of a run waits for the outputs as long as a live stream's ring is worth it.
@Suite struct ReplayerDrainTests {
  /// A 3 s ring: 11 s (twice the ring, and 5 s for one reconnection), not the 30 s it was; a
  /// 5 s ring: 15 s.
  @Test func theDrainFollowsTheRing() {
    #expect(Replayer<FileByteSource>.drainTimeout(longestRingMilliseconds: 3_000) == .seconds(11))
    #expect(Replayer<FileByteSource>.drainTimeout(longestRingMilliseconds: 5_000) == .seconds(15))
  }
}
