import Foundation
import IngestTestSupport
import Testing

/// Recordings played as a viewer would, in real players at their defaults (`Player`): every HLS
/// form (TS, fMP4, HEVC's fMP4) and the `.mp4` and `.ts` files, from the fixtures with app and
/// mic audio. A player that refuses a form fails the test; none is configured to forgive it.
@Suite struct HLSPlayerTests {
  /// One recording a player is tried on.
  enum Form: String, CaseIterable, CustomStringConvertible {
    case hlsTS
    case hlsFragmentedMP4
    case hlsHEVC
    case mp4File
    case tsFile
    /// `--audio both`: alternate audio renditions, TS, fMP4 and HEVC's fMP4.
    case renditionsTS
    case renditionsFragmentedMP4
    case renditionsHEVC

    var description: String { rawValue }

    /// The `ingest replay` arguments that write it into `directory`, and the path to play.
    func recording(in directory: URL) -> (arguments: [String], path: String) {
      let hls = directory.appending(path: "hls").path
      switch self {
      case .hlsTS:
        return ([CommandRunner.fixture("screen.dump"), "--to", "hls:\(hls)"], hls)
      case .hlsFragmentedMP4:
        return (
          [CommandRunner.fixture("screen.dump"), "--to", "hls:\(hls)?container=fmp4"], hls
        )
      case .hlsHEVC:
        return ([CommandRunner.fixture("screen-hevc.dump"), "--to", "hls:\(hls)"], hls)
      case .mp4File:
        let file = directory.appending(path: "screen.mp4").path
        return ([CommandRunner.fixture("screen.dump"), "--to", file], file)
      case .tsFile:
        let file = directory.appending(path: "screen.ts").path
        return ([CommandRunner.fixture("screen.dump"), "--to", file], file)
      case .renditionsTS:
        return (
          [CommandRunner.fixture("screen.dump"), "--to", "hls:\(hls)", "--audio", "both"], hls
        )
      case .renditionsFragmentedMP4:
        return (
          [
            CommandRunner.fixture("screen.dump"), "--to", "hls:\(hls)?container=fmp4", "--audio",
            "both",
          ], hls
        )
      case .renditionsHEVC:
        return (
          [CommandRunner.fixture("screen-hevc.dump"), "--to", "hls:\(hls)", "--audio", "both"], hls
        )
      }
    }

    /// The players it must play in: hls.js only where Chromium decodes the codec (H.264), and
    /// Chromium's `<video>` for the `.mp4` (web pages play HLS through hls.js).
    var players: [Player] {
      switch self {
      case .hlsTS, .hlsFragmentedMP4, .renditionsTS, .renditionsFragmentedMP4:
        [.playbin3, .playbin, .vlc, .hlsjs]
      case .hlsHEVC, .tsFile, .renditionsHEVC: [.playbin3, .playbin, .vlc]
      case .mp4File: [.playbin3, .playbin, .vlc, .chromiumVideo]
      }
    }
  }

  static let cases: [(Form, Player)] = Form.allCases.flatMap { form in
    form.players.map { (form, $0) }
  }

  @Test(arguments: cases)
  func recordingPlays(form: Form, player: Player) throws {
    if let reason = player.unavailableReason {
      TestEnvironment.unavailable(reason)
      return
    }
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let (arguments, path) = form.recording(in: directory)
    let replay = try CommandRunner.ingest(
      ["replay"] + arguments + ["--speed", "max", "--quiet"], timeout: 60)
    try #require(replay.status == 0, "\(replay.stderr)")
    // With two audio renditions, hls.js must list both and play on after switching.
    let renditions = [Form.renditionsTS, .renditionsFragmentedMP4].contains(form)
    let verdict = try player.play(path, switchAudio: renditions && player == .hlsjs)
    #expect(verdict.ok, "\(form) in \(player): \(verdict.line)")
    if renditions && player == .hlsjs {
      #expect(verdict.fields["audio_tracks"] as? Int == 2, "\(verdict.line)")
    }
  }

  /// The default HLS recording of a capture with app and mic audio carries one audio track, the
  /// mix, in TS and fMP4 segments alike; the files keep both, the app track first.
  @Test(arguments: [Form.hlsTS, .hlsFragmentedMP4, .mp4File, .tsFile])
  func audioTracksByDefault(form: Form) throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let (arguments, path) = form.recording(in: directory)
    let replay = try CommandRunner.ingest(
      ["replay"] + arguments + ["--speed", "max", "--json"], timeout: 60)
    try #require(replay.status == 0, "\(replay.stderr)")
    let summary = try JSONLines.summary(replay.stdout)
    let file: String
    switch form {
    case .hlsTS: file = path + "/seg00000.ts"
    case .hlsFragmentedMP4:
      // A segment read with its initialization section, as a player does.
      let joined = directory.appending(path: "joined.mp4")
      let initData = try Data(contentsOf: URL(filePath: path + "/init00000.mp4"))
      let segment = try Data(contentsOf: URL(filePath: path + "/seg00000.m4s"))
      try (initData + segment).write(to: joined)
      file = joined.path
    default: file = path
    }
    let streams = try CommandRunner.streams(file)
    switch form {
    case .hlsTS, .hlsFragmentedMP4:
      // The mix, at the app track's rate and channels.
      #expect(streams == ["h264", "aac,48000,2"], "\(form): \(streams)")
      #expect(summary["audio"] as? String == "mix", "\(summary)")
    default:
      // The app track (48 kHz stereo in the fixture) before the mic (44.1 kHz mono).
      #expect(streams == ["h264", "aac,48000,2", "aac,44100,1"], "\(form): \(streams)")
      #expect(summary["audio"] as? String == "both", "\(summary)")
    }
  }
}
