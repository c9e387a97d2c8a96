import IngestCore
import Testing

@testable import IngestRuntime

/// 90 kHz ticks as a `MediaTime`.
private func ticks(_ value: Int64) -> MediaTime { MediaTime(value: value, timescale: 90_000) }

@Suite struct ReplayPacerTests {
  @Test func firstSampleIsDueAtOnce() {
    var pacer = ReplayPacer(speed: 1)
    #expect(
      pacer.due(kind: .video, time: ticks(123_456), now: .at(.microseconds(5)))
        == .at(.nanoseconds(5_000)))
  }

  @Test func samplesAreDueAtTheirMediaTime() {
    var pacer = ReplayPacer(speed: 1)
    _ = pacer.due(kind: .video, time: ticks(90_000), now: .at(.microseconds(1)))
    #expect(
      pacer.due(kind: .video, time: ticks(180_000), now: .at(.microseconds(1)))
        == .at(.nanoseconds(1_000 + 1_000_000_000)))
    #expect(
      pacer.due(kind: .audioApp, time: ticks(135_000), now: .at(.microseconds(1)))
        == .at(.nanoseconds(1_000 + 500_000_000)))
  }

  @Test func speedDividesTheWait() {
    var pacer = ReplayPacer(speed: 4)
    _ = pacer.due(kind: .video, time: ticks(0), now: .origin)
    #expect(
      pacer.due(kind: .video, time: ticks(360_000), now: .origin)
        == .at(.nanoseconds(1_000_000_000)))
  }

  @Test func aJumpedTrackKeepsItsPaceWithoutMovingTheOthers() {
    var pacer = ReplayPacer(speed: 1)
    _ = pacer.due(kind: .video, time: ticks(0), now: .origin)
    _ = pacer.due(kind: .audioMic, time: ticks(0), now: .origin)
    // The mic clock jumps 60 s ahead: its next frame is due one frame on, not a minute later.
    let mic = pacer.due(kind: .audioMic, time: ticks(60 * 90_000), now: .origin)
    #expect(mic == .origin)
    #expect(
      pacer.due(kind: .audioMic, time: ticks(60 * 90_000 + 1_920), now: .origin)
        == .at(.nanoseconds(21_333_333)))
    // A step back is absorbed the same way.
    _ = pacer.due(kind: .audioMic, time: ticks(1_000), now: .origin)
    #expect(
      pacer.due(kind: .video, time: ticks(90_000), now: .origin) == .at(.nanoseconds(1_000_000_000))
    )
  }

  @Test func sampleBeforeTheOriginIsDueAtTheStart() {
    var pacer = ReplayPacer(speed: 1)
    _ = pacer.due(kind: .video, time: ticks(90_000), now: .at(.nanoseconds(7)))
    #expect(
      pacer.due(kind: .audioApp, time: ticks(0), now: .at(.nanoseconds(7))) == .at(.nanoseconds(7)))
  }
}
