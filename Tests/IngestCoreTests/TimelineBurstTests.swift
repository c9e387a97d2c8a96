import Testing

@testable import IngestCore

/// A producer that stamps samples on delivery: after a 2 s stall, 2 s of audio frames come
/// with one time. They are laid out frame by frame from there, past the clock; once the clock
/// ticks on, what comes behind them is dropped until it catches up, so the track is back on its
/// own clock (A/V sync) instead of 2 s behind it for the rest of the run.
@Suite struct TimelineBurstTests {
  static let frame: Int64 = 1920  // 1024 samples at 48 kHz, in 90 kHz ticks
  static let origin: Int64 = 900_000

  static func audio(_ timeline: inout Timeline, at sample: Int64) throws(TimelineError)
    -> Timeline.Stamp
  {
    try timeline.stamp(
      kind: .audioApp, pts: MediaTime(value: sample, timescale: 48_000), dts: nil)
  }

  /// Video frames (30 fps, on the encoder's own times) up to `seconds`.
  static func video(_ timeline: inout Timeline, through seconds: Double, from next: inout Int64)
    throws
  {
    while Double(next) / 30 <= seconds {
      _ = try timeline.stamp(
        kind: .video, pts: MediaTime(value: next * 20, timescale: 600), dts: nil)
      next += 1
    }
  }

  @Test func aBurstWithOneTimeComesBackToTheClock() throws {
    var timeline = Timeline()
    timeline.setAudioFrameDuration(samples: 1024, sampleRate: 48_000, for: .audioApp)
    var videoFrame: Int64 = 0
    for index: Int64 in 0..<50 {
      try Self.video(&timeline, through: Double(index) * 1024 / 48_000, from: &videoFrame)
      _ = try Self.audio(&timeline, at: index * 1024)
    }
    // The audio stalled from frame 50 to 144 (2 s) while the video went on; the 94 frames
    // come at once, stamped at frame 144's time, then the clock goes on from there.
    let burstTime: Int64 = 144 * 1024
    try Self.video(&timeline, through: Double(burstTime) / 48_000, from: &videoFrame)
    var burst: [Timeline.Stamp] = []
    for _ in 0..<94 { burst.append(try Self.audio(&timeline, at: burstTime)) }
    #expect(zip(burst, burst.dropFirst()).allSatisfy { $1.dts == $0.dts + Self.frame })
    var dropped = 0
    var placed: [(index: Int64, dts: Int64)] = []
    for index: Int64 in 145..<400 {
      try Self.video(&timeline, through: Double(index) * 1024 / 48_000, from: &videoFrame)
      do throws(TimelineError) {
        placed.append((index, try Self.audio(&timeline, at: index * 1024).dts))
      } catch .behindPlacedFrames {
        dropped += 1
        #expect(placed.isEmpty, "dropped after frames were placed again")
      }
    }
    // About the burst's length is dropped, then every frame is on its own clock again.
    #expect((90...94).contains(dropped), "\(dropped)")
    let last = try #require(placed.last)
    // Back on its clock, to within a frame (21 ms; it was 2 s behind for good).
    #expect(abs(last.dts - (Self.origin + last.index * Self.frame)) <= Self.frame)
    #expect(zip(placed, placed.dropFirst()).allSatisfy { $1.dts > $0.dts })
    #expect(timeline.discontinuities == 0)
  }

  /// A single repeated timestamp (a glitch) is still placed one frame on, nothing dropped.
  @Test func aGlitchDropsNothing() throws {
    var timeline = Timeline()
    timeline.setAudioFrameDuration(samples: 1024, sampleRate: 48_000, for: .audioApp)
    for index: Int64 in 0..<10 { _ = try Self.audio(&timeline, at: index * 1024) }
    let repeated = try Self.audio(&timeline, at: 9 * 1024)
    #expect(repeated.dts == Self.origin + 10 * Self.frame)
    for index: Int64 in 11..<20 {
      let stamp = try Self.audio(&timeline, at: index * 1024)
      #expect(stamp.dts == Self.origin + index * Self.frame)
    }
  }
}
