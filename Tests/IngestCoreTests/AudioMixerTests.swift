import Foundation
import IngestTestSupport
import Testing

@testable import IngestCore

/// `AudioMixer` on generated tones: levels by Goertzel, timing by the frames' positions.
@Suite struct AudioMixerTests {
  static let rate = 48_000
  static let frame = 1024

  /// A mono tone of `frequency` at `amplitude`, sampled at timeline positions.
  struct Tone {
    var frequency: Double
    var amplitude: Float

    func samples(at position: Int64, count: Int) -> [Float] {
      (0..<count).map { index in
        let time = Double(position + Int64(index)) / Double(AudioMixerTests.rate)
        return amplitude * Float(sin(2 * Double.pi * frequency * time))
      }
    }
  }

  /// What the mixer emitted: the frames' positions and the samples laid end to end.
  final class Collected {
    var positions: [Int64] = []
    var samples: [Float] = []

    func take(_ frame: AudioMixFrame) {
      positions.append(frame.position)
      samples.append(contentsOf: frame.channel(0))
    }

    /// The frames follow each other with no gap and no overlap.
    var isContiguous: Bool {
      zip(positions, positions.dropFirst()).allSatisfy { $1 - $0 == Int64(AudioMixerTests.frame) }
    }

    /// The samples of the one-second window starting `seconds` after the first frame.
    func second(_ seconds: Int) -> ArraySlice<Float> {
      samples[seconds * AudioMixerTests.rate..<(seconds + 1) * AudioMixerTests.rate]
    }

    func level(_ frequency: Double, second: Int) -> Double {
      ToneMeter.amplitude(of: frequency, in: self.second(second), sampleRate: AudioMixerTests.rate)
    }
  }

  static func mixer(gains: AudioMixGains = AudioMixGains()) -> AudioMixer {
    AudioMixer(configuration: AudioMixConfiguration(sampleRate: rate, channels: 1, gains: gains))
  }

  static func push(
    _ mixer: AudioMixer, _ input: AudioMixInput, _ tone: Tone, at position: Int64,
    stamp: Int64? = nil, count: Int = frame, into collected: Collected
  ) {
    let samples = tone.samples(at: position, count: count)
    samples.withUnsafeBufferPointer { buffer in
      mixer.push(
        input, position: stamp ?? position, count: count, samples: { _ in buffer.baseAddress! },
        emit: collected.take)
    }
  }

  static let app = Tone(frequency: 440, amplitude: 0.25)
  static let mic = Tone(frequency: 660, amplitude: 0.25)

  @Test func bothTonesComeOutAtTheirGains() {
    let mixer = Self.mixer(gains: AudioMixGains(app: 0.8, mic: 1.0))
    let collected = Collected()
    let base: Int64 = 123_456_789
    for index in 0..<200 {
      let position = base + Int64(index * Self.frame)
      Self.push(mixer, .app, Self.app, at: position, into: collected)
      Self.push(mixer, .mic, Self.mic, at: position, into: collected)
    }
    mixer.finish(emit: collected.take)
    #expect(collected.positions.first == base)
    #expect(collected.isContiguous)
    for second in 0..<4 {
      #expect(abs(collected.level(440, second: second) - 0.2) < 1e-4)
      #expect(abs(collected.level(660, second: second) - 0.25) < 1e-4)
    }
    #expect(mixer.limitedFrames == 0)
    #expect(mixer.trimmedSamples == 0)
  }

  @Test func loudInputsAreLimitedNeverClipped() {
    let mixer = Self.mixer(gains: AudioMixGains(app: 4, mic: 4))
    let collected = Collected()
    let loud = (Tone(frequency: 440, amplitude: 0.9), Tone(frequency: 660, amplitude: 0.9))
    for index in 0..<100 {
      let position = Int64(index * Self.frame)
      Self.push(mixer, .app, loud.0, at: position, into: collected)
      Self.push(mixer, .mic, loud.1, at: position, into: collected)
    }
    #expect(mixer.limitedFrames > 90)
    #expect(collected.samples.allSatisfy { abs($0) <= 0.98 })
    // Once settled, the limiter holds both tones at the same ratio, near the ceiling.
    let settled = collected.samples[50 * Self.frame..<100 * Self.frame]
    #expect(settled.map(abs).max()! > 0.9)
  }

  @Test func limiterRecoversAfterThePeakIsGone() {
    var limiter = PeakLimiter()
    var loud = [Float](repeating: 3, count: Self.frame)
    loud.withUnsafeMutableBufferPointer { limiter.process($0, channels: 1, count: Self.frame) }
    #expect(loud.allSatisfy { $0 <= 0.98 })
    let lowered = limiter.gain
    var quiet = [Float](repeating: 0.1, count: Self.frame)
    for _ in 0..<200 {
      quiet.withUnsafeMutableBufferPointer { limiter.process($0, channels: 1, count: Self.frame) }
    }
    #expect(lowered < 0.34)
    #expect(limiter.gain > 0.999)
    var broken: [Float] = [.nan, .infinity, 0.5]
    broken.withUnsafeMutableBufferPointer { limiter.process($0, channels: 1, count: 3) }
    #expect(broken[0] == 0 && broken[1] == 0)
  }

  /// The mic starts two seconds after the app: the first two seconds are app alone, mixed
  /// after the holdback, with no gap, and the mic lands at its own time.
  @Test func lateMicIsSilenceUntilItStarts() {
    let mixer = Self.mixer()
    let collected = Collected()
    let micStart = 2 * Self.rate / Self.frame + 1
    for index in 0..<300 {
      let position = Int64(index * Self.frame)
      Self.push(mixer, .app, Self.app, at: position, into: collected)
      if index >= micStart { Self.push(mixer, .mic, Self.mic, at: position, into: collected) }
    }
    #expect(collected.positions.first == 0)
    #expect(collected.isContiguous)
    #expect(collected.level(660, second: 0) < 1e-6)
    #expect(collected.level(660, second: 1) < 1e-6)
    #expect(abs(collected.level(660, second: 3) - 0.25) < 1e-4)
    // The window where the mic starts holds part of a 660 Hz tone, which leaks a little into
    // the 440 Hz bin.
    for second in 0..<5 { #expect(abs(collected.level(440, second: second) - 0.25) < 1e-3) }
    #expect(mixer.resets(of: .mic) == 0)
  }

  /// The mic's first sample comes 24 samples before the app's: the frames still fall on the
  /// app's grid (the mixed track keeps the app track's A/V offset), the first one taking the mic
  /// from its first sample.
  @Test func framesFollowTheAppGridWhenTheMicStartsFirst() {
    let mixer = Self.mixer()
    let collected = Collected()
    let app: Int64 = 48_000
    Self.push(mixer, .mic, Self.mic, at: app - 24, count: 24, into: collected)
    for index in 0..<100 {
      let position = app + Int64(index * Self.frame)
      Self.push(mixer, .app, Self.app, at: position, into: collected)
      Self.push(mixer, .mic, Self.mic, at: position, into: collected)
    }
    #expect(collected.positions.first == app - Int64(Self.frame))
    #expect(collected.isContiguous)
    #expect(mixer.trimmedSamples == 0)
    #expect(collected.samples[..<(Self.frame - 24)].allSatisfy { $0 == 0 })
    #expect(collected.samples[(Self.frame - 24)..<Self.frame].contains { $0 != 0 })
    #expect(abs(collected.level(660, second: 1) - 0.25) < 1e-4)
  }

  /// A mic that delivers in bursts, up to 200 ms behind the app, is still mixed whole.
  @Test func burstyMicWithinTheHoldbackIsNotLost() {
    let mixer = Self.mixer()
    let collected = Collected()
    var pendingMic: [Int64] = []
    for index in 0..<200 {
      let position = Int64(index * Self.frame)
      Self.push(mixer, .app, Self.app, at: position, into: collected)
      pendingMic.append(position)
      if pendingMic.count == 9 {
        for mic in pendingMic { Self.push(mixer, .mic, Self.mic, at: mic, into: collected) }
        pendingMic.removeAll()
      }
    }
    #expect(mixer.trimmedSamples == 0)
    #expect(collected.isContiguous)
    for second in 0..<3 { #expect(abs(collected.level(660, second: second) - 0.25) < 1e-4) }
  }

  /// The mic pauses for a second and comes back at its true time: silence there, no gap, and
  /// no reset.
  @Test func pausedMicIsSilenceAndComesBackInPlace() {
    let mixer = Self.mixer()
    let collected = Collected()
    let pause = (2 * Self.rate / Self.frame + 1)...(3 * Self.rate / Self.frame + 1)
    for index in 0..<300 {
      let position = Int64(index * Self.frame)
      Self.push(mixer, .app, Self.app, at: position, into: collected)
      if !pause.contains(index) { Self.push(mixer, .mic, Self.mic, at: position, into: collected) }
    }
    #expect(collected.isContiguous)
    #expect(mixer.resets(of: .mic) == 0)
    #expect(abs(collected.level(660, second: 1) - 0.25) < 1e-4)
    #expect(collected.level(660, second: 2) < 0.03)
    #expect(abs(collected.level(660, second: 4) - 0.25) < 1e-4)
    // Windows with part of the 660 Hz tone leak a little into the 440 Hz bin.
    for second in 0..<5 { #expect(abs(collected.level(440, second: second) - 0.25) < 1e-3) }
  }

  /// Both inputs pause (the app made no sound, the mic was off) while the video goes on: when
  /// the app comes back the pause is silence, not a reset that would pull it early.
  @Test func pauseOfBothInputsFollowsTheVideoClock() {
    let mixer = Self.mixer()
    let collected = Collected()
    for index in 0..<300 {
      let position = Int64(index * Self.frame)
      mixer.observeReference(position)
      if index < 50 || index > 150 {
        Self.push(mixer, .app, Self.app, at: position, into: collected)
        Self.push(mixer, .mic, Self.mic, at: position, into: collected)
      }
    }
    #expect(mixer.resets(of: .app) == 0 && mixer.resets(of: .mic) == 0)
    #expect(collected.isContiguous)
    #expect(collected.level(440, second: 2) < 1e-6)
    #expect(abs(collected.level(440, second: 4) - 0.25) < 1e-4)
  }

  /// The mic's clock jumps back five seconds: it goes on where it ended, and the app, whose
  /// timestamps the mixed track keeps, does not move.
  @Test func micClockResetMovesOnlyTheMic() {
    let mixer = Self.mixer()
    let collected = Collected()
    let jump = Int64(5 * Self.rate)
    for index in 0..<300 {
      let position = Int64(index * Self.frame) + 10 * Int64(Self.rate)
      Self.push(mixer, .app, Self.app, at: position, into: collected)
      let stamp = index >= 150 ? position - jump : position
      Self.push(mixer, .mic, Self.mic, at: position, stamp: stamp, into: collected)
    }
    #expect(mixer.resets(of: .mic) == 1)
    #expect(mixer.resets(of: .app) == 0)
    #expect(collected.positions.first == 10 * Int64(Self.rate))
    #expect(collected.isContiguous)
    for second in 0..<5 {
      #expect(abs(collected.level(440, second: second) - 0.25) < 1e-4)
      #expect(abs(collected.level(660, second: second) - 0.25) < 1e-4)
    }
  }

  /// A mic stamped in whole seconds (rounded down, about 47 frames on each value) is placed by
  /// its sample count: the mix keeps pace with the app, never a second ahead per second, and
  /// both tones stay whole.
  @Test func coarseMicClockIsPlacedBySampleCount() {
    let mixer = Self.mixer()
    let collected = Collected()
    let frames = 300
    for index in 0..<frames {
      let position = Int64(index * Self.frame)
      Self.push(mixer, .app, Self.app, at: position, into: collected)
      let stamp = position / Int64(Self.rate) * Int64(Self.rate)
      let samples = Self.mic.samples(at: position, count: Self.frame)
      samples.withUnsafeBufferPointer { buffer in
        mixer.push(
          .mic, position: stamp, count: Self.frame, coarse: true,
          samples: { _ in buffer.baseAddress! }, emit: collected.take)
      }
    }
    mixer.finish(emit: collected.take)
    #expect(collected.isContiguous)
    // Without the count, each second's first frame read as a step forward and the mix grew
    // by up to a second per second.
    #expect(collected.positions.count <= frames + 1, "\(collected.positions.count) frames")
    for second in 1..<5 {
      #expect(abs(collected.level(440, second: second) - 0.25) < 1e-4)
      #expect(abs(collected.level(660, second: second) - 0.25) < 1e-3)
    }
  }

  /// Small timestamp jitter is absorbed: the samples stay back to back.
  @Test func jitterDoesNotOpenGapsOrOverlaps() {
    let mixer = Self.mixer()
    let collected = Collected()
    for index in 0..<200 {
      let position = Int64(index * Self.frame)
      let jitter = Int64([0, 37, -41, 12, -5][index % 5])
      Self.push(mixer, .app, Self.app, at: position, stamp: position + jitter, into: collected)
      Self.push(mixer, .mic, Self.mic, at: position, stamp: position - jitter, into: collected)
    }
    #expect(mixer.resets(of: .app) == 0 && mixer.resets(of: .mic) == 0)
    #expect(abs(collected.level(440, second: 2) - 0.25) < 1e-4)
    #expect(abs(collected.level(660, second: 2) - 0.25) < 1e-4)
  }

  /// Muting the mic (the ladder's mic tier) removes 660 Hz within a frame and leaves 440 Hz,
  /// with no gap; unmuting brings it back.
  @Test func mutedMicLeavesTheAppAlone() {
    let mixer = Self.mixer()
    let collected = Collected()
    for index in 0..<400 {
      let position = Int64(index * Self.frame)
      mixer.isMicMuted = (94..<235).contains(index)
      Self.push(mixer, .app, Self.app, at: position, into: collected)
      Self.push(mixer, .mic, Self.mic, at: position, into: collected)
    }
    #expect(collected.isContiguous)
    #expect(abs(collected.level(660, second: 1) - 0.25) < 1e-4)
    #expect(collected.level(660, second: 3) < 1e-6)
    #expect(abs(collected.level(660, second: 6) - 0.25) < 1e-4)
    for second in 0..<7 { #expect(abs(collected.level(440, second: second) - 0.25) < 1e-4) }
  }

  /// Stereo: each channel mixed on its own; a chunk larger than the ring's piece is split.
  @Test func stereoAndLargeChunks() {
    var configuration = AudioMixConfiguration(sampleRate: Self.rate, channels: 2)
    configuration.largestChunkSamples = 1000
    let mixer = AudioMixer(configuration: configuration)
    final class Stereo {
      var left: [Float] = []
      var right: [Float] = []
      func take(_ frame: AudioMixFrame) {
        left.append(contentsOf: frame.channel(0))
        right.append(contentsOf: frame.channel(1))
      }
    }
    let collected = Stereo()
    let chunk = 4800
    let silence = [Float](repeating: 0, count: chunk)
    for index in 0..<20 {
      let position = Int64(index * chunk)
      for (input, tone) in [(AudioMixInput.app, Self.app), (.mic, Self.mic)] {
        let samples = tone.samples(at: position, count: chunk)
        samples.withUnsafeBufferPointer { left in
          silence.withUnsafeBufferPointer { right in
            mixer.push(
              input, position: position, count: chunk,
              samples: { $0 == 0 ? left.baseAddress! : right.baseAddress! }, emit: collected.take)
          }
        }
      }
    }
    let left = collected.left[0..<Self.rate]
    #expect(abs(ToneMeter.amplitude(of: 440, in: left, sampleRate: Self.rate) - 0.25) < 1e-4)
    #expect(abs(ToneMeter.amplitude(of: 660, in: left, sampleRate: Self.rate) - 0.25) < 1e-4)
    #expect(collected.right.count == collected.left.count)
    #expect(collected.right.allSatisfy { $0 == 0 })
  }

  @Test func positionsAreExactForAnyTimescale() {
    #expect(
      AudioMixer.position(
        of: MediaTime(value: 1_000_000_000, timescale: 1_000_000_000), sampleRate: 48_000) == 48_000
    )
    // A monotonic clock of days in nanoseconds does not overflow.
    let days = MediaTime(value: 9 * 86_400 * 1_000_000_000 + 500_000_000, timescale: 1_000_000_000)
    #expect(AudioMixer.position(of: days, sampleRate: 48_000) == 9 * 86_400 * 48_000 + 24_000)
    #expect(
      AudioMixer.position(of: MediaTime(value: 1024, timescale: 44_100), sampleRate: 44_100) == 1024
    )
    #expect(
      AudioMixer.position(of: MediaTime(value: -1, timescale: 90_000), sampleRate: 48_000) == -1)
  }

  @Test func bufferBytesCoverTheRingsAndTheFrame() {
    let configuration = AudioMixConfiguration(sampleRate: 48_000, channels: 2)
    #expect(configuration.ringSamples == 12_000 + 2048 + 4096)
    #expect(configuration.bufferBytes == (2 * 18_144 + 1024) * 2 * 4)
  }
}

@Suite struct AudioMixGainsTests {
  @Test func parsesEitherOrBothEntries() throws {
    #expect(try AudioMixGains(parsing: "app=0.8,mic=1.0") == AudioMixGains(app: 0.8, mic: 1))
    #expect(try AudioMixGains(parsing: "mic=2") == AudioMixGains(app: 1, mic: 2))
    #expect(try AudioMixGains(parsing: "app=0") == AudioMixGains(app: 0, mic: 1))
  }

  @Test func refusesWhatItCannotRead() {
    #expect(throws: AudioMixError.gainEntry("game=1")) { try AudioMixGains(parsing: "game=1") }
    #expect(throws: AudioMixError.gainEntry("app")) { try AudioMixGains(parsing: "app") }
    #expect(throws: AudioMixError.gainEntry("")) { try AudioMixGains(parsing: "app=1,") }
    #expect(throws: AudioMixError.gainValue(input: "mic", value: "loud")) {
      try AudioMixGains(parsing: "mic=loud")
    }
    #expect(throws: AudioMixError.gainValue(input: "app", value: "-1")) {
      try AudioMixGains(parsing: "app=-1")
    }
    #expect(throws: AudioMixError.gainValue(input: "app", value: "nan")) {
      try AudioMixGains(parsing: "app=nan")
    }
  }

  /// `Float` reads these as numbers; a gain is written as a plain decimal number.
  @Test(arguments: ["0x10", "1e1", "+1", "inf", "1.5.2", ".", " 1", "1_0"])
  func refusesAnythingButAPlainDecimalNumber(value: String) {
    #expect(throws: AudioMixError.gainValue(input: "app", value: value)) {
      try AudioMixGains(parsing: "app=\(value)")
    }
  }

  @Test func acceptsPlainDecimalNumbers() throws {
    #expect(try AudioMixGains(parsing: "app=16,mic=.5") == AudioMixGains(app: 16, mic: 0.5))
    #expect(try AudioMixGains(parsing: "mic=2.") == AudioMixGains(app: 1, mic: 2))
  }

  /// The description is what `ingest live` hands the encoder: it parses back, even for a gain
  /// `Float` would print with an exponent.
  @Test func theDescriptionParsesBack() throws {
    for gains in [AudioMixGains(app: 0.8, mic: 1), AudioMixGains(app: 0.00001, mic: 16)] {
      #expect(try AudioMixGains(parsing: gains.description) == gains, "\(gains)")
    }
    #expect(AudioMixGains(app: 0.00001, mic: 1).description == "app=0.00001,mic=1.0")
  }

  /// `app=1,app=3` used to take the last one without a word.
  @Test func refusesAnInputNamedTwice() {
    #expect(throws: AudioMixError.gainRepeated(input: "app")) {
      try AudioMixGains(parsing: "app=1,app=3")
    }
    #expect(throws: AudioMixError.gainRepeated(input: "mic")) {
      try AudioMixGains(parsing: "mic=1,app=2,mic=1")
    }
  }
}
