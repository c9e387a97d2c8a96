import Testing

@testable import IngestCore

/// A mic whose timestamps are whole seconds of the host clock (timescale 1: about 43 frames
/// share each value), next to video at 30 fps and app audio at 48 kHz on the host clock itself,
/// all captured from host time 352417.1 s on and appended in capture order, the mic's first.
@Suite struct TimelineCoarseClockTests {
  /// One sample reaching the timeline.
  struct Arrival {
    var time: Int64
    var kind: SampleKind
    var value: MediaTime
    /// The mic frame's number, for the mic.
    var frame: Int64?
  }

  /// How the mic's producer turned host time into whole seconds.
  enum Rounding: CaseIterable { case down, nearest, up }

  /// Default start offset: 10 s of ticks, where the first fine-clock sample lands.
  static let origin: Int64 = 900_000
  /// The capture's start on the host clock, in tenths of a second.
  static let startTenths: Int64 = 3_524_171
  static let seconds: Int64 = 10
  /// A mic frame's duration in ticks, rounded up.
  static let frame: Int64 = 1024 * 90_000 / 44_100 + 1

  /// A mic frame's capture time on the timeline: 1024 samples at 44.1 kHz per frame.
  static func micTruth(_ frame: Int64) -> Int64 { origin + frame * 1024 * 90_000 / 44_100 }

  /// The capture, in ticks from its start; the mic's frames delivered at `delivery` (from their
  /// capture time) with their time in whole seconds.
  static func capture(_ rounding: Rounding, delivery: (Int64) -> Int64 = { $0 }) -> [Arrival] {
    var arrivals: [Arrival] = []
    let span = seconds * 90_000
    for frame in 0..<Int64(span / 3_000) {
      arrivals.append(
        Arrival(
          time: frame * 3_000, kind: .video,
          value: MediaTime(value: startTenths * 60 + frame * 20, timescale: 600)))
    }
    for frame in 0..<Int64(span / 1_920) {
      arrivals.append(
        Arrival(
          time: frame * 1_920, kind: .audioApp,
          value: MediaTime(value: startTenths * 4_800 + frame * 1_024, timescale: 48_000)))
    }
    for frame in 0..<Int64(span / 2_090) {
      // Host time in 1/441000 s, made whole seconds the producer's way.
      let tenths = startTenths * 44_100 + frame * 10_240
      let seconds =
        switch rounding {
        case .down: tenths / 441_000
        case .nearest: (tenths + 220_500) / 441_000
        case .up: (tenths + 440_999) / 441_000
        }
      let time = micTruth(frame) - origin
      arrivals.append(
        Arrival(
          time: delivery(time), kind: .audioMic, value: MediaTime(value: seconds, timescale: 1),
          frame: frame))
    }
    // The mic first among samples delivered at the same time, as in a device's dump.
    return arrivals.enumerated().sorted {
      ($0.element.time, $0.element.kind == .audioMic ? 0 : 1, $0.offset)
        < ($1.element.time, $1.element.kind == .audioMic ? 0 : 1, $1.offset)
    }.map(\.element)
  }

  /// A mic stamp and what the fine clocks said when it was placed.
  struct Placed {
    var frame: Int64
    var dts: Int64
    /// The newest decode time of video and app audio when the frame arrived.
    var host: Int64
  }

  /// Stamps the arrivals as `Pipeline` does (AAC frame durations told), checking that video
  /// and app audio land exactly at their own times and that the mic's DTS increases; returns
  /// the placed mic frames and the number refused while waiting for a fine clock.
  static func stamp(_ arrivals: [Arrival]) throws -> (
    mic: [Placed], refused: Int, timeline: Timeline
  ) {
    var timeline = Timeline()
    timeline.setAudioFrameDuration(samples: 1024, sampleRate: 48_000, for: .audioApp)
    timeline.setAudioFrameDuration(samples: 1024, sampleRate: 44_100, for: .audioMic)
    var mic: [Placed] = []
    var refused = 0
    var host: Int64 = .min
    for arrival in arrivals {
      let stamp: Timeline.Stamp
      do {
        stamp = try timeline.stamp(kind: arrival.kind, pts: arrival.value, dts: nil)
      } catch .awaitingSharedClock(let kind) {
        #expect(kind == .audioMic)
        refused += 1
        continue
      }
      #expect(!stamp.isDiscontinuity)
      if let frame = arrival.frame {
        if let last = mic.last { #expect(stamp.dts > last.dts) }
        mic.append(Placed(frame: frame, dts: stamp.dts, host: host))
      } else {
        let own =
          arrival.kind == .video
          ? (arrival.value.value - startTenths * 60) * 150
          : (arrival.value.value - startTenths * 4_800) * 15 / 8
        #expect(stamp.dts == origin + own, "\(arrival.kind) at \(arrival.time)")
        host = max(host, stamp.dts)
      }
    }
    return (mic, refused, timeline)
  }

  /// Whatever the rounding, the mic's first frame (before any other sample) is refused rather
  /// than set the base; every later frame is one frame duration on from the last, never more
  /// than a frame ahead of the host time (placed at it, the capture time of the frames after it
  /// runs ahead of the host time by up to an app frame), and from the clock's first whole second on within a frame of its capture
  /// time, so it runs neither ahead of the video nor, rounded up, a second late.
  @Test(arguments: Rounding.allCases)
  func aCoarseMicFollowsTheHostClock(rounding: Rounding) throws {
    let (mic, refused, timeline) = try Self.stamp(Self.capture(rounding))
    #expect(refused == 1)
    #expect(mic.first?.frame == 1)
    #expect(mic.allSatisfy { $0.dts <= $0.host + Self.frame })
    #expect(timeline.discontinuities == 0)
    for placed in mic where placed.dts >= Self.origin + 90_000 {
      #expect(abs(placed.dts - Self.micTruth(placed.frame)) <= Self.frame, "frame \(placed.frame)")
    }
    // Frames follow each other by one frame duration, but where the clock ticked over a lead.
    let steps = zip(mic.dropFirst(), mic).map { $0.dts - $1.dts }
    #expect(steps.filter { $0 > Self.frame }.count <= 1)
  }

  /// A mic rounded down, delivering each second of frames in one burst when the second ends:
  /// the host time is then up to a second ahead of the frames, and their own clock, behind it,
  /// places them, each within a frame of its capture time from the first whole second on.
  @Test func aCoarseMicInBurstsKeepsItsOwnTime() throws {
    // Host seconds end 0.9 s into the capture, and every second after.
    let (mic, refused, _) = try Self.stamp(
      Self.capture(.down) { ($0 + 9_000) / 90_000 * 90_000 + 81_000 })
    #expect(refused == 0)
    #expect(mic.count == Int(Self.seconds * 90_000 / 2_090))
    for placed in mic where placed.dts >= Self.origin + 90_000 {
      #expect(abs(placed.dts - Self.micTruth(placed.frame)) <= Self.frame, "frame \(placed.frame)")
    }
  }

  /// A mic without another track waits for one for 1 s of its frames, then starts on its own
  /// clock: one frame after the other, moving on once to where its clock ticks.
  @Test func aCoarseMicAloneStartsOnItsOwnClockAfterASecond() throws {
    let (mic, refused, timeline) = try Self.stamp(
      Self.capture(.up).filter { $0.kind == .audioMic })
    #expect(refused == 44)
    #expect(mic.first?.dts == Self.origin)
    let steps = zip(mic.dropFirst(), mic).map { $0.dts - $1.dts }
    #expect(steps.allSatisfy { $0 >= 2_089 })
    #expect(steps.filter { $0 > 2_090 }.count == 1)
    #expect(timeline.discontinuities == 0)
  }

  /// The mic is off from 3 s to 6 s on a continuous host clock: a gap, not a reset. It comes
  /// back without a discontinuity, never more than a frame ahead of the host time, and within a frame of its
  /// capture time from its clock's next whole second on (before that, a clock rounded down
  /// says no more than that the frame is less than a second later).
  @Test(arguments: Rounding.allCases)
  func aCoarseMicTurnedOffAndOnResumesWithoutAReset(rounding: Rounding) throws {
    let off: Range<Int64> = 270_000..<540_000
    let arrivals = Self.capture(rounding).filter {
      $0.frame.map { !off.contains(Self.micTruth($0) - Self.origin) } ?? true
    }
    let (mic, _, timeline) = try Self.stamp(arrivals)
    #expect(timeline.discontinuities == 0)
    #expect(mic.allSatisfy { $0.dts <= $0.host + Self.frame })
    for placed in mic where placed.dts >= Self.origin + 630_000 {
      #expect(abs(placed.dts - Self.micTruth(placed.frame)) <= Self.frame, "frame \(placed.frame)")
    }
  }

  /// A refused frame leaves no trace but its count: the timeline then places the next sample
  /// of every track as if it had not come.
  @Test func aRefusedFrameSetsNoBase() throws {
    var timeline = Timeline()
    #expect(throws: TimelineError.awaitingSharedClock(.audioMic)) {
      try timeline.stamp(kind: .audioMic, pts: MediaTime(value: 352_418, timescale: 1), dts: nil)
    }
    let video = try timeline.stamp(
      kind: .video, pts: MediaTime(value: 352_417_123_456_789, timescale: 1_000_000_000), dts: nil)
    #expect(video.dts == Self.origin)
  }
}
