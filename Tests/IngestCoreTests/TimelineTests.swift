import Testing

@testable import IngestCore

private func time(_ value: Int64, _ timescale: Int32) -> MediaTime {
  MediaTime(value: value, timescale: timescale)
}

/// Default start offset: 10 s of ticks.
private let origin: Int64 = 900_000

@Suite struct TimelineTests {
  @Test func allTracksShareOneBaseAtHostClockValues() throws {
    var timeline = Timeline()
    let host: Int64 = 352_417_000_000_000  // about four days of uptime, in nanoseconds
    let video = try timeline.stamp(kind: .video, pts: time(host, 1_000_000_000), dts: nil)
    #expect(video == Timeline.Stamp(pts: origin, dts: origin, isDiscontinuity: false))
    // App audio 40 ms later on the same host clock, expressed at 48 kHz.
    let app = try timeline.stamp(
      kind: .audioApp, pts: time(352_417 * 48000 + 1920, 48000), dts: nil)
    #expect(app.dts == origin + 3600)
    // Mic audio 1 ms before the video's first frame, at 44.1 kHz (44.1 samples: not a whole tick).
    let mic = try timeline.stamp(
      kind: .audioMic, pts: time(352_417 * 44100 - 441, 44100), dts: nil)
    #expect(mic.dts == origin - 900)
    // Offsets stay exact for a long run (about 64 s of 21.3 ms steps): each stamp is its own exact
    // conversion from the one base.
    for frame: Int64 in 1...3000 {
      let videoStamp = try timeline.stamp(
        kind: .video, pts: time(host + frame * 21_333_333, 1_000_000_000), dts: nil)
      #expect(videoStamp.dts == origin + frame * 21_333_333 * 9 / 100_000)
      let appStamp = try timeline.stamp(
        kind: .audioApp, pts: time(352_417 * 48000 + 1920 + frame * 1024, 48000), dts: nil)
      #expect(appStamp.dts == origin + 3600 + frame * 1920)
      let micStamp = try timeline.stamp(
        kind: .audioMic, pts: time(352_417 * 44100 - 441 + frame * 941, 44100), dts: nil)
      #expect(micStamp.dts == origin + (frame * 941 - 441) * 90_000 / 44100)
      #expect(!videoStamp.isDiscontinuity && !appStamp.isDiscontinuity && !micStamp.isDiscontinuity)
    }
    #expect(timeline.discontinuities == 0)
  }

  @Test func firstSampleWithDTSBeforePTSSetsTheBaseAtItsDTS() throws {
    var timeline = Timeline()
    let first = try timeline.stamp(kind: .video, pts: time(40, 600), dts: time(0, 600))
    #expect(first.dts == origin)
    #expect(first.pts == origin + 6000)
  }

  @Test func bFramesKeepDecodeTimeApartFromPresentationTime() throws {
    var timeline = Timeline()
    // I P B B P B B in decode order; (pts, dts) at 600 per second, 20 per frame.
    let frames: [(Int64, Int64)] = [
      (40, 0), (100, 20), (60, 40), (80, 60), (160, 80), (120, 100), (140, 120),
    ]
    var lastDTS = Int64.min
    for (pts, dts) in frames {
      let stamp = try timeline.stamp(kind: .video, pts: time(pts, 600), dts: time(dts, 600))
      #expect(stamp.dts == origin + dts * 150)
      #expect(stamp.pts == origin + pts * 150)
      #expect(stamp.dts > lastDTS)
      #expect(!stamp.isDiscontinuity)
      lastDTS = stamp.dts
    }
  }

  @Test func backwardsAudioJumpIsADiscontinuityNeverABackwardsDTS() throws {
    var timeline = Timeline()
    var last = Timeline.Stamp(pts: 0, dts: 0, isDiscontinuity: false)
    for frame: Int64 in 0..<50 {
      last = try timeline.stamp(kind: .audioApp, pts: time(frame * 1024, 48000), dts: nil)
    }
    #expect(last.dts == origin + 49 * 1920)
    // The clock goes back 40 frames (a phone call reset it).
    let jumped = try timeline.stamp(kind: .audioApp, pts: time(10 * 1024, 48000), dts: nil)
    #expect(jumped.isDiscontinuity)
    #expect(jumped.dts == last.dts + 1920)
    #expect(timeline.discontinuities == 1)
    // The track continues from its new anchor with its own spacing.
    let next = try timeline.stamp(kind: .audioApp, pts: time(11 * 1024, 48000), dts: nil)
    #expect(!next.isDiscontinuity)
    #expect(next.dts == jumped.dts + 1920)
  }

  @Test func forwardAudioJumpBeyondThresholdIsADiscontinuity() throws {
    var timeline = Timeline()
    var last = try timeline.stamp(kind: .audioMic, pts: time(0, 44100), dts: nil)
    for frame: Int64 in 1..<20 {
      last = try timeline.stamp(kind: .audioMic, pts: time(frame * 1024, 44100), dts: nil)
    }
    // A gap under the threshold (0.5 s) is kept as it is.
    let gap = try timeline.stamp(kind: .audioMic, pts: time(19 * 1024 + 22050, 44100), dts: nil)
    #expect(!gap.isDiscontinuity)
    #expect(gap.dts == origin + (19 * 1024 + 22050) * 90_000 / 44100)
    // 3 s forward is a reset: re-anchored one frame after the last.
    let delta = gap.dts - last.dts
    let jumped = try timeline.stamp(
      kind: .audioMic, pts: time(19 * 1024 + 22050 + 3 * 44100, 44100), dts: nil)
    #expect(jumped.isDiscontinuity)
    #expect(jumped.dts > gap.dts && jumped.dts <= gap.dts + delta)
    #expect(timeline.discontinuities == 1)
  }

  /// The app stops playing for 3 s while the video goes on, on the same host clock: when its
  /// audio comes back it keeps its timestamps, with no reset.
  @Test func audioSilentForSecondsOnTheSharedClockIsAGapNotAReset() throws {
    var timeline = Timeline()
    for frame: Int64 in 0..<300 {
      let seconds = Double(frame) / 30
      _ = try timeline.stamp(kind: .video, pts: time(frame * 20, 600), dts: nil)
      // App audio for the first 2 s and again from 5 s on: 1024-sample frames at 48 kHz.
      let audioFrame = Int64(seconds * 48_000) / 1024
      if seconds < 2 || seconds >= 5 {
        let stamp = try timeline.stamp(
          kind: .audioApp, pts: time(audioFrame * 1024, 48_000), dts: nil)
        #expect(!stamp.isDiscontinuity, "frame \(frame)")
        #expect(stamp.dts == origin + audioFrame * 1024 * 90_000 / 48_000, "frame \(frame)")
      }
    }
    #expect(timeline.discontinuities == 0)
  }

  @Test func resetAudioClockIsReanchoredAtTheSharedNow() throws {
    var timeline = Timeline()
    // Video and mic run together for 2 s; then the mic stops while video goes on to 10 s.
    var videoDTS: Int64 = 0
    for frame: Int64 in 0..<300 {
      videoDTS = try timeline.stamp(kind: .video, pts: time(frame * 20, 600), dts: nil).dts
      if frame < 60 {
        _ = try timeline.stamp(kind: .audioMic, pts: time(frame * 1470, 44100), dts: nil)
      }
    }
    #expect(videoDTS == origin + 299 * 3000)
    // The mic comes back with its clock 5 s behind where the video is.
    let back = try timeline.stamp(kind: .audioMic, pts: time(5 * 44100, 44100), dts: nil)
    #expect(back.isDiscontinuity)
    #expect(back.dts == videoDTS)
    // Another mic interruption that comes back on the right clock is no reset.
    let resumed = try timeline.stamp(
      kind: .audioMic, pts: time(5 * 44100 + 1024, 44100), dts: nil)
    #expect(!resumed.isDiscontinuity)
    #expect(resumed.dts == back.dts + 2089 || resumed.dts == back.dts + 2090)
  }

  @Test func stallWithAudioFirstPullsTheVideoBackAsFarAsTheAudio() throws {
    var timeline = Timeline()
    // Video at 30 fps and app audio at 48 kHz for 2 s; then nothing for 6 s.
    var (video, audio): (Int64, Int64) = (0, 0)
    var audioFrame: Int64 = 0
    for frame: Int64 in 0..<60 {
      video = try timeline.stamp(kind: .video, pts: time(frame * 20, 600), dts: nil).dts
      // The audio frames that start before the next video frame, in time order as captured.
      while audioFrame * 1024 * 600 < (frame + 1) * 20 * 48000 {
        audio = try timeline.stamp(kind: .audioApp, pts: time(audioFrame * 1024, 48000), dts: nil)
          .dts
        audioFrame += 1
      }
    }
    #expect(audioFrame == 94)
    // Audio comes back first, 6 s on: it is pulled back next to the video.
    let stall: Int64 = 6
    let audioBack = try timeline.stamp(
      kind: .audioApp, pts: time(94 * 1024 + stall * 48000, 48000), dts: nil)
    #expect(audioBack.isDiscontinuity)
    #expect(audioBack.dts > audio && audioBack.dts - audio < 90_000)
    // The video, 6 s on too, follows it: the two stay as far apart as their clocks say.
    let videoBack = try timeline.stamp(
      kind: .video, pts: time(60 * 20 + stall * 600, 600), dts: nil)
    #expect(videoBack.isDiscontinuity)
    let clockDistance: Int64 = (60 * 20 * 90_000 / 600) - (94 * 1024 * 90_000 / 48000)
    #expect(abs((videoBack.dts - audioBack.dts) - clockDistance) <= 1)
    #expect(videoBack.dts > video)
    // A later long still screen is a pause again, not a reset.
    let still = try timeline.stamp(
      kind: .video, pts: time(60 * 20 + stall * 600 + 5 * 600, 600), dts: nil)
    #expect(!still.isDiscontinuity)
    #expect(still.dts - videoBack.dts == 5 * 90_000)
  }

  @Test func audioTrackStartingOnAnotherClockJoinsAtTheSharedNow() throws {
    var timeline = Timeline()
    var videoDTS: Int64 = 0
    for frame: Int64 in 0..<100 {
      videoDTS = try timeline.stamp(
        kind: .video, pts: time(1_000_000 + frame * 20, 600), dts: nil
      ).dts
    }
    // The mic's first sample comes from a clock that started at zero, far from the video's.
    let first = try timeline.stamp(kind: .audioMic, pts: time(0, 44100), dts: nil)
    #expect(first.isDiscontinuity)
    #expect(first.dts == videoDTS)
    let second = try timeline.stamp(kind: .audioMic, pts: time(1024, 44100), dts: nil)
    #expect(!second.isDiscontinuity)
    #expect(second.dts - first.dts == 2089)
  }

  @Test func videoPausesAreNotDiscontinuities() throws {
    var timeline = Timeline()
    var last = try timeline.stamp(kind: .video, pts: time(0, 600), dts: nil)
    // A still screen: one frame a second, then ten seconds without a frame.
    for (value, step) in [(Int64(600), Int64(90_000)), (1200, 90_000), (7200, 900_000)] {
      let stamp = try timeline.stamp(kind: .video, pts: time(value, 600), dts: nil)
      #expect(!stamp.isDiscontinuity)
      #expect(stamp.dts - last.dts == step)
      last = stamp
    }
    #expect(timeline.discontinuities == 0)
  }

  @Test func videoRepeatingADTSIsNudgedAndABigStepBackIsReanchored() throws {
    var timeline = Timeline()
    let first = try timeline.stamp(kind: .video, pts: time(600, 600), dts: nil)
    let repeated = try timeline.stamp(kind: .video, pts: time(600, 600), dts: nil)
    #expect(repeated.dts == first.dts + 1)
    #expect(!repeated.isDiscontinuity)
    let stepBack = try timeline.stamp(kind: .video, pts: time(590, 600), dts: nil)
    #expect(stepBack.dts == repeated.dts + 1)
    let next = try timeline.stamp(kind: .video, pts: time(620, 600), dts: nil)
    let reset = try timeline.stamp(kind: .video, pts: time(-3000, 600), dts: nil)
    #expect(reset.isDiscontinuity)
    #expect(reset.dts > next.dts)
    #expect(timeline.discontinuities == 1)
  }

  @Test func videoResetAfterALongStillScreenStaysNextToTheSharedNow() throws {
    var timeline = Timeline()
    _ = try timeline.stamp(kind: .video, pts: time(0, 600), dts: nil)
    // Ten minutes of still screen, with app audio flowing all along.
    var audioDTS: Int64 = 0
    for frame: Int64 in 0..<(600 * 48000 / 1024) {
      audioDTS = try timeline.stamp(kind: .audioApp, pts: time(frame * 1024, 48000), dts: nil).dts
    }
    let resumed = try timeline.stamp(kind: .video, pts: time(600 * 600, 600), dts: nil)
    #expect(!resumed.isDiscontinuity)
    #expect(resumed.dts == origin + 600 * 90_000)
    // The video clock then resets backwards: it must land next to the audio, not ten minutes on.
    let reset = try timeline.stamp(kind: .video, pts: time(0, 600), dts: nil)
    #expect(reset.isDiscontinuity)
    #expect(reset.dts > resumed.dts)
    #expect(reset.dts - max(audioDTS, resumed.dts) <= MediaTicks.perSecond)
  }

  @Test func invalidTimescaleThrowsAndLeavesTheTimelineUnchanged() throws {
    var timeline = Timeline()
    // Rejected before anything was seen: the base is not taken from it.
    #expect(throws: TimelineError.invalidTimescale(.video, time(5, 0))) {
      try timeline.stamp(kind: .video, pts: time(5, 0), dts: nil)
    }
    let first = try timeline.stamp(kind: .audioApp, pts: time(48000, 48000), dts: nil)
    #expect(first.dts == origin)

    var reference = timeline
    #expect(throws: TimelineError.invalidTimescale(.audioApp, time(1, -48000))) {
      try timeline.stamp(kind: .audioApp, pts: time(1, -48000), dts: nil)
    }
    #expect(throws: TimelineError.invalidTimescale(.video, time(0, 0))) {
      try timeline.stamp(kind: .video, pts: time(600, 600), dts: time(0, 0))
    }
    #expect(throws: TimelineError.outOfRange(.video, time(.max, 600))) {
      try timeline.stamp(kind: .video, pts: time(.max, 600), dts: nil)
    }
    for frame: Int64 in 1...10 {
      let sample = time(48000 + frame * 1024, 48000)
      #expect(
        try timeline.stamp(kind: .audioApp, pts: sample, dts: nil)
          == reference.stamp(kind: .audioApp, pts: sample, dts: nil))
    }
    #expect(timeline.discontinuities == 0)
  }

  @Test func valuesStayExactBeyondThirtyThreeBits() throws {
    var timeline = Timeline()
    _ = try timeline.stamp(kind: .video, pts: time(0, 600), dts: nil)
    // 30 hours later: past 2^33 ticks (about 26.5 hours); wrapping is the writer's job.
    let late = try timeline.stamp(kind: .video, pts: time(30 * 3600 * 600, 600), dts: nil)
    #expect(late.dts == origin + 30 * 3600 * 90_000)
    #expect(late.dts > 1 << 33)
    let audio = try timeline.stamp(
      kind: .audioApp, pts: time(30 * 3600 * 48000 + 1024, 48000), dts: nil)
    #expect(audio.dts == late.dts + 1920)
  }

  @Test func randomClocksNeverTrapAndDTSAlwaysIncreases() {
    var generator = SeededGenerator(state: 0x71E_11E)
    let timescales: [Int32] = [1, 600, 44100, 48000, 90_000, 1_000_000_000, .max]
    for _ in 0..<50 {
      var timeline = Timeline()
      var lastDTS = [Int64?](repeating: nil, count: 3)
      var values = [Int64](repeating: 0, count: 3)
      for step in 0..<400 {
        let kind = SampleKind.allCases.randomElement(using: &generator)!
        let index = Int(kind.rawValue)
        let timescale = timescales.randomElement(using: &generator)!
        switch Int.random(in: 0..<20, using: &generator) {
        case 0: values[index] = Int64.random(in: .min ... .max, using: &generator)
        case 1: values[index] = [Int64.min, .max, 0, -1].randomElement(using: &generator)!
        case 2: values[index] &-= Int64.random(in: 0...1 << 40, using: &generator)
        default: values[index] &+= Int64.random(in: 0...2000, using: &generator)
        }
        let dts = time(values[index], timescale)
        let pts = time(values[index] &+ Int64.random(in: 0...100, using: &generator), timescale)
        let copy = timeline
        do {
          let stamp = try timeline.stamp(kind: kind, pts: pts, dts: step % 3 == 0 ? nil : dts)
          if let last = lastDTS[index] { #expect(stamp.dts > last, "\(kind) \(dts)") }
          #expect(stamp.pts >= stamp.dts)
          lastDTS[index] = stamp.dts
        } catch .awaitingSharedClock {
          // A coarse clock's sample before any fine one: only its count of refusals changes.
          continue
        } catch {
          // A refused sample leaves the timeline as it was.
          var a = copy
          var b = timeline
          let probe = time(0, 1)
          #expect(
            (try? a.stamp(kind: kind, pts: probe, dts: nil))
              == (try? b.stamp(kind: kind, pts: probe, dts: nil)))
        }
      }
    }
  }

  @Test func repeatedAndSlightlyEarlyAudioTimestampsLeaveNoLastingShift() throws {
    var timeline = Timeline()
    // Mic at 44.1 kHz: frame 100 and 200 repeat the previous timestamp, frame 150 is 3 ms
    // before the previous one.
    func value(_ frame: Int64) -> Int64 {
      switch frame {
      case 100, 200: (frame - 1) * 1024
      case 150: 149 * 1024 - 132
      default: frame * 1024
      }
    }
    var last: Int64 = .min
    for frame: Int64 in 0..<300 {
      let stamp = try timeline.stamp(kind: .audioMic, pts: time(value(frame), 44100), dts: nil)
      #expect(!stamp.isDiscontinuity)
      #expect(stamp.dts > last)
      // Each frame at its own time; a glitched one lands one frame on, within a tick.
      #expect(abs(stamp.dts - (origin + frame * 1024 * 90_000 / 44100)) <= 1, "frame \(frame)")
      last = stamp.dts
    }
    #expect(timeline.discontinuities == 0)
    #expect(timeline.corrections == 3)
  }

  @Test func micClockOnOneTickPerSecondIsSpreadAndMovesNoOtherTrack() throws {
    var timeline = Timeline()
    var lastMic: Int64 = .min
    for frame: Int64 in 0..<500 {
      let app = try timeline.stamp(kind: .audioApp, pts: time(frame * 1024, 48000), dts: nil)
      #expect(app.dts == origin + frame * 1920)
      #expect(!app.isDiscontinuity)
      // A timescale of 1: about 43 frames land on each whole second.
      let mic = try timeline.stamp(kind: .audioMic, pts: time(frame * 1024 / 44100, 1), dts: nil)
      #expect(mic.dts > lastMic)
      #expect(abs(mic.dts - app.dts) <= MediaTicks.perSecond, "frame \(frame)")
      lastMic = mic.dts
    }
    #expect(timeline.discontinuities == 0)
  }

  @Test func micClockOneSecondPerFrameIsCorrectedAndMovesNoOtherTrack() throws {
    var timeline = Timeline()
    var lastMic: Int64 = .min
    for frame: Int64 in 0..<500 {
      let app = try timeline.stamp(kind: .audioApp, pts: time(frame * 1024, 48000), dts: nil)
      #expect(app.dts == origin + frame * 1920)
      #expect(!app.isDiscontinuity)
      // Each mic frame stamped a whole second after the previous one.
      let mic = try timeline.stamp(kind: .audioMic, pts: time(frame, 1), dts: nil)
      #expect(mic.dts > lastMic)
      // Corrected from its first step on: one frame after the other, next to the app audio.
      #expect(abs(mic.dts - app.dts) <= 200 * 90, "frame \(frame)")
      lastMic = mic.dts
    }
    #expect(timeline.discontinuities == 0)
  }
}
