import IngestAudioMix
import IngestCore
import IngestSinks
import Testing

@testable import IngestRuntime

/// Which audio each output carries (`--audio`), and the program it gets for it.
@Suite struct OutputAudioTests {
  static let app = try! AACFormat(objectType: 2, sampleRate: 48_000, channels: 2)
  static let mic = try! AACFormat(objectType: 2, sampleRate: 48_000, channels: 1)
  static let both = TrackFormats(audioApp: app, audioMic: mic)
  static let rtmp = OutputTarget.rtmp(url: "rtmp://127.0.0.1/live/key")
  static let file = OutputTarget.file(path: "out.ts", shaper: LinkShaper())
  static let gains = AudioMixGains(app: 0.5, mic: 2)

  static func audio(_ selection: AudioSelection?, _ target: OutputTarget, _ tracks: TrackFormats)
    -> OutputAudio
  {
    OutputAudio(selection: selection, target: target, tracks: tracks, gains: gains)
  }

  /// RTMP mixes by default and keeps both when asked (the mic as an E-RTMP multitrack track);
  /// WHIP, which carries one audio track, mixes for `both` too.
  @Test func rtmpMixesByDefaultAndKeepsBothWhenAsked() {
    #expect(Self.audio(nil, Self.rtmp, Self.both) == .mix(Self.gains))
    #expect(Self.audio(.both, Self.rtmp, Self.both) == .both)
    let whip = OutputTarget.whip(url: "whip+http://127.0.0.1/whip")
    #expect(Self.audio(.both, whip, Self.both) == .mix(Self.gains))
    #expect(Self.audio(nil, Self.file, Self.both) == .both)
    #expect(Self.audio(.mix, Self.file, Self.both) == .mix(Self.gains))
    #expect(Self.audio(.app, Self.rtmp, Self.both) == .track(.audioApp))
    #expect(Self.audio(.mic, Self.file, Self.both) == .track(.audioMic))
  }

  /// HLS plays in players at their defaults with one audio track beside the video: the mix by
  /// default; `both` still muxes the two when asked for.
  @Test func hlsMixesByDefaultAndKeepsBothWhenAsked() {
    let hls = OutputTarget.hls(directory: "rec", playlist: "index.m3u8")
    #expect(Self.audio(nil, hls, Self.both) == .mix(Self.gains))
    #expect(Self.audio(.both, hls, Self.both) == .both)
    #expect(Self.audio(.app, hls, Self.both) == .track(.audioApp))
  }

  /// `hls:DIR?audio=...` is that output's own choice, before `--audio`.
  @Test func hlsQueryGoesBeforeTheRunsAudio() {
    let both = OutputTarget.hls(directory: "rec", playlist: "index.m3u8", audio: .both)
    #expect(Self.audio(nil, both, Self.both) == .both)
    #expect(Self.audio(.mix, both, Self.both) == .both)
    let mic = OutputTarget.hls(directory: "rec", playlist: "index.m3u8", audio: .mic)
    #expect(Self.audio(.both, mic, Self.both) == .track(.audioMic))
  }

  @Test func oneAudioTrackIsSentWhateverWasAsked() {
    for selection in [nil, AudioSelection.mix, .app, .mic, .both] {
      #expect(
        Self.audio(selection, Self.rtmp, TrackFormats(audioMic: Self.mic)) == .track(.audioMic))
      #expect(
        Self.audio(selection, Self.file, TrackFormats(audioApp: Self.app)) == .track(.audioApp))
      #expect(Self.audio(selection, Self.file, TrackFormats()) == OutputAudio.none)
    }
  }

  /// A mix replaces both audio tracks with the mixed one (as app audio); a file with one track
  /// chosen leaves the other out of its program; RTMP keeps both for FLV to choose from.
  @Test func programOfEachOutput() throws {
    let mixed = try AACFormat(objectType: 2, sampleRate: 48_000, channels: 2)
    let mix = RunBuilder.tracks(
      of: Self.both, carrying: .mix(Self.gains), to: Self.file, mixed: mixed)
    #expect(mix == TrackFormats(audioApp: mixed))
    #expect(
      RunBuilder.tracks(of: Self.both, carrying: .track(.audioMic), to: Self.file, mixed: nil)
        == TrackFormats(audioMic: Self.mic))
    #expect(
      RunBuilder.tracks(of: Self.both, carrying: .track(.audioMic), to: Self.rtmp, mixed: nil)
        == Self.both)
    #expect(
      RunBuilder.tracks(of: Self.both, carrying: .both, to: Self.file, mixed: nil) == Self.both)
  }

  /// `ingest live --encoder-mix`: the one app track is the encoder's mix, and says so.
  @Test func encoderMixIsNamedAsSuch() {
    let app = TrackFormats(audioApp: Self.app)
    let audio = OutputAudio(
      selection: nil, target: Self.rtmp, tracks: app, gains: Self.gains,
      mixedByEncoder: Self.gains)
    #expect(audio == .encoderMix(Self.gains))
    #expect(audio.name == "mix" && !audio.isMix)
    #expect(
      audio.note
        == "app and mic mixed by the encoder into one AAC track (gains app=0.5,mic=2.0, limited)")
    #expect(RunBuilder.tracks(of: app, carrying: audio, to: Self.rtmp, mixed: nil) == app)
  }

  /// `ingest inspect`'s sample limit is the replay's: the mix's reservation comes off it.
  @Test func largestSampleLeavesRoomForTheMix() throws {
    var options = ReplayOptions(target: Self.file)
    options.pipeline.budgetBytes = 37_000_000
    let unmixed = try ReplaySession.maximumSampleBytes(tracks: Self.both, options: options)
    options.audio = .mix
    let mixed = try ReplaySession.maximumSampleBytes(tracks: Self.both, options: options)
    #expect(mixed < unmixed)
    #expect(
      AudioMixStage.ledgerBytes(app: Self.app, mic: Self.mic)
        == AudioMixConfiguration(sampleRate: 48_000, channels: 2).bufferBytes
        + 2 * (2048 + 256) * 2 * 4 + AudioMixStage.codecStateBytes
        + AudioMixHandOff(app: Self.app, mic: Self.mic).bytes)
  }

  @Test func summaryNamesWhatWasCarried() {
    #expect(OutputAudio.mix(Self.gains).name == "mix")
    #expect(
      OutputAudio.mix(Self.gains).note
        == "audioApp and audioMic mixed into one AAC track (gains app=0.5,mic=2.0, limited)")
    #expect(OutputAudio.track(.audioMic).note == "audioMic only, one track")
    #expect(OutputAudio.both.note == "audioApp and audioMic, two tracks")
    #expect(OutputAudio.none.note == nil)
  }
}
