import Foundation
import IngestCore
import IngestRuntime
import IngestTestSupport
import Synchronization
import Testing

/// `--audio mix` end to end: a dump made by `ingest-encode` whose app track is a 440 Hz tone and
/// whose mic track is a 660 Hz tone, replayed to nginx-rtmp, a .ts file and HLS (and the same
/// source through `ingest live --encoder-mix`). What was
/// received is decoded by ffmpeg and measured: both tones at their gains (±1 dB of each tone's
/// own track times its gain, by Goertzel), no sample at full scale, and the mixed track where
/// the app track was against the video (every frame on the app track's grid of frames against
/// the video; and, where the timestamps are exact, each tone in phase with its own track at the
/// same time, within half a millisecond).
@Suite struct AudioMixTests {
  static let gains = (app: 0.8, mic: 1.0)
  static let gainArgument = "app=0.8,mic=1.0"
  /// Video, then app audio (440 Hz), then mic audio (660 Hz), for `ingest-encode`.
  static let graph =
    "lavfi:testsrc2=size=320x240:rate=30[out0];sine=frequency=440:sample_rate=48000[out1];"
    + "sine=frequency=660:sample_rate=48000[out2]"
  /// One AAC frame at 48 kHz.
  static let frameSeconds = 1024.0 / 48_000

  /// The tones dump, and each of its audio tracks as replayed unmixed (`--audio both`) and
  /// decoded: the reference every mixed copy is measured against.
  struct Tones {
    var directory: URL
    var dump: String
    var app: DecodedAudio
    var mic: DecodedAudio
  }

  /// Made once for the suite: the encoder runs in real time.
  static let tones = Result { () throws -> Tones in try makeTones() }

  static func makeTones() throws -> Tones {
    let directory = try CommandRunner.temporaryDirectory()
    let dump = directory.appending(path: "tones.dump").path
    let encode = try CommandRunner.run(
      "sh",
      [
        "-c", #"exec "$0" "$@" > "$DUMP""#, CommandRunner.encoder, Self.graph, "--size", "320x240",
        "--bitrate", "300000", "--duration", "8",
      ].map { $0.replacingOccurrences(of: "$DUMP", with: dump) }, timeout: 120)
    guard encode.status == 0 else {
      throw LoopbackServers.Failure("ingest-encode failed: \(encode.stderr)")
    }
    return try references(of: dump, in: directory)
  }

  /// `dump` and its two audio tracks replayed unmixed (`--audio both`) and decoded.
  static func references(of dump: String, in directory: URL) throws -> Tones {
    let reference = directory.appending(path: "both.ts").path
    let replay = try CommandRunner.ingest([
      "replay", dump, "--to", reference, "--audio", "both", "--speed", "max", "--quiet",
    ])
    guard replay.status == 0 else {
      throw LoopbackServers.Failure("replay --audio both failed: \(replay.stderr)")
    }
    return Tones(
      directory: directory, dump: dump,
      app: try DecodedAudio(reference, stream: 0, in: directory),
      mic: try DecodedAudio(reference, stream: 1, in: directory))
  }

  /// The tones, or nil (a visible skip, a failure under CI) when ffmpeg is missing.
  static func prepared() throws -> Tones? {
    for tool in ["ffmpeg", "ffprobe"] where !CommandRunner.has(tool) {
      TestEnvironment.unavailable("\(tool) is not installed")
      return nil
    }
    return try tones.get()
  }

  /// Both tones at their gains in every whole second but the first and last (an encoder's
  /// start and end), nothing clipped, and the mixed track as far from the video as the app
  /// track was.
  /// - Parameters:
  ///   - timed: whether the A/V offset is compared with the tones dump's (the same dump
  ///     replayed; a live run has its own).
  ///   - precise: whether the container's timestamps are exact enough (not FLV's milliseconds)
  ///     to compare the tones' phase with their tracks'.
  static func expectMixed(
    _ mixed: DecodedAudio, _ tones: Tones, gains: (app: Double, mic: Double) = gains,
    timed: Bool = true, precise: Bool = true,
    sourceLocation: SourceLocation = #_sourceLocation
  ) {
    let seconds = 1..<min(mixed.seconds, tones.app.seconds, 6) - 1
    #expect(seconds.count >= 3, "\(mixed.seconds) s decoded", sourceLocation: sourceLocation)
    let app = tones.app.meanLevel(440, seconds: 1..<5)
    let mic = tones.mic.meanLevel(660, seconds: 1..<5)
    for second in seconds {
      let appDB = ToneMeter.decibels(mixed.level(440, second: second), relativeTo: gains.app * app)
      let micDB = ToneMeter.decibels(mixed.level(660, second: second), relativeTo: gains.mic * mic)
      #expect(abs(appDB) <= 1, "440 Hz at \(second) s: \(appDB) dB", sourceLocation: sourceLocation)
      #expect(abs(micDB) <= 1, "660 Hz at \(second) s: \(micDB) dB", sourceLocation: sourceLocation)
    }
    #expect(mixed.peak < 0.99, "peak \(mixed.peak)", sourceLocation: sourceLocation)
    guard timed else { return }
    guard let videoStart = mixed.videoStart, let reference = tones.app.offsetFromVideo else {
      Issue.record("no video start time", sourceLocation: sourceLocation)
      return
    }
    // Every mixed frame on the app track's grid of frames against the video: the A/V offset
    // is the app track's, to the rounding of the container's timestamps (FLV: 1 ms).
    #expect(mixed.packetTimes.count > 200, sourceLocation: sourceLocation)
    let residuals = mixed.packetTimes.map { time in
      let offset = time - videoStart - reference
      return abs(offset - (offset / frameSeconds).rounded() * frameSeconds)
    }
    #expect(
      residuals.allSatisfy { $0 <= 0.0015 }, "off the grid by \(residuals.max() ?? 0) s",
      sourceLocation: sourceLocation)
    // And the sound where its timestamps say: the tones in phase with their own tracks at the
    // same time against the video (a shift of a frame would be 0.9 ms at 440 Hz).
    guard precise else { return }
    let time = 2.0
    for (frequency, track) in [(440.0, tones.app), (660.0, tones.mic)] {
      guard let trackVideo = track.videoStart else { continue }
      var cycles =
        mixed.phase(frequency, at: videoStart + time)
        - track.phase(frequency, at: trackVideo + time)
      cycles -= cycles.rounded()
      #expect(
        abs(cycles / frequency) <= 0.0005, "\(frequency) Hz \(cycles / frequency) s off",
        sourceLocation: sourceLocation)
    }
  }

  /// The default for RTMP with both tracks is the mix: nginx's recording holds both tones.
  /// At real time: a paced replay drops what the mix or the link falls behind by, as a capture
  /// would, and at four times real time one second of a loaded machine's recording came out
  /// 8 dB down.
  @Test func rtmpCarriesBothTonesAtTheirGains() throws {
    guard let tones = try Self.prepared() else { return }
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let server = try NginxRTMP(
      port: try LoopbackServers.freePort(SOCK_STREAM), directory: directory.appending(path: "nginx")
    )
    defer { server.kill() }
    let result = try CommandRunner.ingest(
      [
        "replay", tones.dump, "--to", "rtmp://127.0.0.1:\(server.port)/live/tones", "--speed",
        "realtime", "--mix-gain", Self.gainArgument, "--json",
      ], timeout: 60)
    #expect(result.status == 0, "\(result.stderr)")
    try server.waitForSessionEnd()
    server.kill()
    let summary = try JSONLines.summary(result.stdout)
    #expect(summary["audio"] as? String == "mix")
    #expect(summary["mix_gains"] as? String == "app=0.8,mic=1.0")
    #expect(summary["mix_clock_resets"] as? [String: Int] == ["app": 0, "mic": 0])
    let recording = server.recording(key: "tones").path
    #expect(try CommandRunner.decodeErrors(recording) == "")
    Self.expectMixed(try DecodedAudio(recording, in: directory), tones, precise: false)
  }

  /// A .ts file with `--audio mix`: one audio stream with both tones.
  @Test func transportStreamCarriesOneMixedTrackInPhase() throws {
    guard let tones = try Self.prepared() else { return }
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let output = directory.appending(path: "mixed.ts").path
    let result = try CommandRunner.ingest([
      "replay", tones.dump, "--to", output, "--audio", "mix", "--mix-gain", Self.gainArgument,
      "--speed", "max",
    ])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stderr.contains("audio    audioApp and audioMic mixed into one AAC track"))
    #expect(try CommandRunner.streams(output) == ["h264", "aac,48000,2"])
    #expect(try CommandRunner.decodeErrors(output) == "")
    Self.expectMixed(try DecodedAudio(output, in: directory), tones)
  }

  @Test func hlsCarriesBothTonesAtTheirGains() throws {
    guard let tones = try Self.prepared() else { return }
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let playlist = directory.appending(path: "hls/live.m3u8").path
    let result = try CommandRunner.ingest([
      "replay", tones.dump, "--to", playlist, "--audio", "mix", "--mix-gain", Self.gainArgument,
      "--speed", "max", "--hls-window", "0", "--quiet",
    ])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(try CommandRunner.decodeErrors(playlist) == "")
    Self.expectMixed(try DecodedAudio(playlist, in: directory), tones)
  }

  /// A mic at another rate and channel count (44.1 kHz mono, from a file through `ingest
  /// capture`) is resampled into the app's 48 kHz stereo at its own level, in step.
  @Test func micAtAnotherRateIsResampledInStep() throws {
    guard try Self.prepared() != nil else { return }
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let media = directory.appending(path: "rates.mkv").path
    let make = try CommandRunner.run(
      "ffmpeg",
      [
        "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-f",
        "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-f", "lavfi", "-i",
        "sine=frequency=660:sample_rate=44100", "-t", "7", "-map", "0", "-map", "1", "-map", "2",
        "-c:v", "libx264", "-g", "60", "-c:a", "aac", "-ac:1", "2", "-ac:2", "1", media,
      ])
    #expect(make.status == 0, "\(make.stderr)")
    let dump = directory.appending(path: "rates.dump").path
    let capture = try CommandRunner.ingest(["capture", media, "-o", dump])
    #expect(capture.status == 0, "\(capture.stderr)")
    let tones = try Self.references(of: dump, in: directory)
    let output = directory.appending(path: "mixed.ts").path
    let result = try CommandRunner.ingest([
      "replay", dump, "--to", output, "--audio", "mix", "--speed", "max", "--quiet",
    ])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(try CommandRunner.streams(output) == ["h264", "aac,48000,2"])
    Self.expectMixed(try DecodedAudio(output, in: directory), tones, gains: (1, 1))
  }

  /// The fixture whose mic clock jumps mid-stream: the mix re-anchors the mic alone, the mixed
  /// track goes on frame after frame, and its frames stay on the app track's grid against the
  /// video.
  @Test func micClockResetMovesOnlyTheMic() throws {
    guard try Self.prepared() != nil else { return }
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let dump = CommandRunner.fixture("mic-clock-reset.dump")
    let reference = try Self.references(of: dump, in: directory)
    let output = directory.appending(path: "mixed.ts").path
    let result = try CommandRunner.ingest([
      "replay", dump, "--to", output, "--audio", "mix", "--speed", "max", "--json",
    ])
    #expect(result.status == 0, "\(result.stderr)")
    let summary = try JSONLines.summary(result.stdout)
    let resets = try #require(summary["mix_clock_resets"] as? [String: Int])
    #expect(resets == ["app": 0, "mic": 1])
    let mixed = try DecodedAudio(output, in: directory)
    let steps = Set(zip(mixed.packetTimes, mixed.packetTimes.dropFirst()).map { $1 - $0 })
    #expect(steps.allSatisfy { abs($0 - Self.frameSeconds) < 0.0001 }, "steps \(steps)")
    let videoStart = try #require(mixed.videoStart)
    let offset = try #require(reference.app.offsetFromVideo)
    for time in mixed.packetTimes {
      let residual = time - videoStart - offset
      #expect(
        abs(residual - (residual / Self.frameSeconds).rounded() * Self.frameSeconds) <= 0.0015)
    }
  }

  /// `ingest live --encoder-mix`: the encoder mixes before encoding (as a device with
  /// AVAudioMixerNode would) and sends one audio track, which holds both tones at their gains.
  @Test func liveEncoderMixesBeforeEncoding() throws {
    guard let tones = try Self.prepared() else { return }
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let output = directory.appending(path: "live.ts").path
    let result = try CommandRunner.ingest(
      [
        "live", Self.graph, "--size", "320x240", "--bitrate", "300000", "--duration", "7",
        "--encoder-mix", "--mix-gain", Self.gainArgument, "--to", output, "--quiet",
      ], timeout: 60)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stderr.contains("audio    app and mic mixed by the encoder into one AAC track"))
    #expect(try CommandRunner.streams(output) == ["h264", "aac,48000,2"])
    Self.expectMixed(try DecodedAudio(output, in: directory), tones, timed: false)
  }

  /// Resident memory that puts the ladder at the mic tier from the fourth reading (about three
  /// seconds in): 92% of the budget.
  final class MicTierProbe: ResidentMemoryProbe {
    let budget: Int
    let readings = Atomic<Int>(0)

    init(budget: Int) { self.budget = budget }

    func residentBytes() -> Int? {
      readings.add(1, ordering: .relaxed).newValue > 3 ? budget * 92 / 100 : nil
    }
  }

  /// The ladder's mic tier mutes the mic in the mix: 660 Hz goes, 440 Hz stays at its level,
  /// and the mixed track goes on frame after frame.
  @Test func micTierMutesTheMicAndKeepsTheApp() throws {
    guard let tones = try Self.prepared() else { return }
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let output = directory.appending(path: "muted.ts").path
    var options = ReplayOptions(target: .file(path: output, shaper: LinkShaper()))
    options.audio = .mix
    options.mixGains = AudioMixGains(app: 0.8, mic: 1)
    options.speed = .factor(1)
    options.residentProbe = MicTierProbe(budget: options.pipeline.budgetBytes)
    let summary = try ReplaySession.run(
      dumpPath: tones.dump, options: options, clock: VirtualClock(), senders: .inline)
    #expect(summary.succeeded)
    #expect(summary.outputs[0].snapshot.tier == .noMic)

    let mixed = try DecodedAudio(output, in: directory)
    let app = tones.app.meanLevel(440, seconds: 1..<5)
    let mic = tones.mic.meanLevel(660, seconds: 1..<5)
    #expect(abs(ToneMeter.decibels(mixed.level(660, second: 1), relativeTo: mic)) <= 1)
    for second in 5..<7 {
      #expect(ToneMeter.decibels(mixed.level(660, second: second), relativeTo: mic) < -40)
    }
    for second in 1..<7 {
      let db = ToneMeter.decibels(mixed.level(440, second: second), relativeTo: 0.8 * app)
      #expect(abs(db) <= 1, "440 Hz at \(second) s: \(db) dB")
    }
    // No gap: every AAC frame follows the one before it by exactly one frame.
    let probe = try CommandRunner.run(
      "ffprobe",
      [
        "-v", "error", "-select_streams", "a:0", "-show_entries", "packet=pts", "-of", "csv=p=0",
        output,
      ])
    let times = probe.stdout.split(separator: "\n").compactMap { Int($0.split(separator: ",")[0]) }
    #expect(times.count > 250)
    let steps = Set(zip(times, times.dropFirst()).map { $1 - $0 })
    #expect(steps.isSubset(of: [1920]), "90 kHz steps \(steps)")
  }
}
