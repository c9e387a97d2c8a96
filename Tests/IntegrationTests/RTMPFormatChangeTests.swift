import Foundation
import IngestCore
import IngestTestSupport
import Testing

/// A format change mid-stream published over RTMP to a private nginx-rtmp that records it: the
/// recording carries a new sequence header where the format changed, and ffmpeg decodes it
/// with zero errors in both formats.
@Suite(.serialized) struct RTMPFormatChangeTests {
  static let key = "format-change-key"

  /// Replays `items` to a fresh nginx-rtmp and returns the recording's path, after checking
  /// the run succeeded and reported `changes` format changes of `kind`.
  static func publish(
    _ items: [DumpItems.Item], kind: SampleKind, changes: Int, in directory: URL
  ) throws -> String {
    let dump = directory.appending(path: "case.dump").path
    try DumpItems.write(items, to: dump)
    let server = try NginxRTMP(
      port: try LoopbackServers.freePort(SOCK_STREAM), directory: directory.appending(path: "nginx")
    )
    defer { server.kill() }
    let status = directory.appending(path: "status.jsonl").path
    let result = try CommandRunner.ingest(
      [
        "replay", dump, "--to", "rtmp://127.0.0.1:\(server.port)/live/\(Self.key)", "--speed",
        "max", "--quiet", "--status", status,
        // The app track as it is: a mix is encoded again at one format whatever its inputs do.
        "--audio", "app",
      ], timeout: 60)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(!result.timedOut)
    try server.waitForSessionEnd()
    server.kill()
    let events = try ConformanceCaseTests.statusLines(status).filter {
      $0.contains("\"formatChanged\"")
    }
    #expect(events.count == changes)
    #expect(events.allSatisfy { $0.contains("\"kind\":\"\(kind)\"") })
    return server.recording(key: Self.key).path
  }

  @Test func rotationSendsANewAVCSequenceHeader() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let recording = try Self.publish(
      try ConformanceCaseTests.rotated(), kind: .video, changes: 2, in: directory)
    #expect(try CommandRunner.decodeErrors(recording) == "")
    // Portrait, landscape after the first change, portrait again after the second.
    let sizes = try Self.frameSizes(recording)
    #expect(Self.runs(of: sizes) == ["720x1280", "1280x720", "720x1280"], "\(Set(sizes))")
    // nginx-rtmp's recorder may repeat the first header at the start of the file; what counts
    // is a new one where the format changed: 2 s (portrait), 4 s (landscape), 10 s (portrait).
    let headers = FLVTags.changes(in: try FLVTags(path: recording).avcSequenceHeaders)
    #expect(headers.count == 3)
    #expect(headers.map { $0.timestamp / 1000 } == [0, 2, 4], "\(headers.map(\.timestamp))")
  }

  /// screen.dump's app audio (48 kHz stereo) replaced from its 5th second by its mic audio
  /// (44.1 kHz mono) after a new app-audio format record: an audio route change.
  static func audioRouteChanged() throws -> [DumpItems.Item] {
    let screen = try ConformanceCaseTests.screen()
    guard
      case .format(_, let micFormat)? = screen.first(where: {
        if case .format(.audioMic, _) = $0 { true } else { false }
      })
    else { throw CocoaError(.fileReadCorruptFile) }
    let cut = 5.0
    func seconds(_ sample: MediaSample) -> Double {
      Double(sample.pts.value) / Double(sample.pts.timescale)
    }
    let start = screen.compactMap(\.sample).map(seconds).min() ?? 0
    var items: [DumpItems.Item] = []
    var changed = false
    for item in screen {
      guard let sample = item.sample, sample.kind.isAudio else {
        items.append(item)
        continue
      }
      let late = seconds(sample) - start >= cut
      switch (sample.kind, late) {
      case (.audioApp, false): items.append(item)
      case (.audioMic, true):
        if !changed {
          items.append(.format(.audioApp, micFormat))
          changed = true
        }
        var moved = sample
        moved.kind = .audioApp
        items.append(.sample(moved))
      default: continue
      }
    }
    return items
  }

  @Test func audioFormatChangeSendsANewAACSequenceHeader() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let recording = try Self.publish(
      try Self.audioRouteChanged(), kind: .audioApp, changes: 1, in: directory)
    #expect(try CommandRunner.decodeErrors(recording) == "")
    let formats = try Self.audioFrameFormats(recording)
    #expect(Self.runs(of: formats) == ["stereo 48000", "mono 44100"], "\(Set(formats))")
    let headers = FLVTags.changes(in: try FLVTags(path: recording).aacSequenceHeaders)
    // 48 kHz stereo (AAC-LC 0x1190), then 44.1 kHz mono (0x1208) at 5 s.
    #expect(headers.map { Array($0.body.dropFirst(2)) } == [[0x11, 0x90], [0x12, 0x08]])
    #expect(headers.map { $0.timestamp / 1000 } == [0, 4], "\(headers.map(\.timestamp))")
  }

  /// "WIDTHxHEIGHT" of each decoded video frame.
  static func frameSizes(_ path: String) throws -> [String] {
    let probe = try CommandRunner.run(
      "ffprobe",
      [
        "-v", "error", "-select_streams", "v:0", "-show_entries", "frame=width,height", "-of",
        "default=nw=1", path,
      ])
    #expect(probe.status == 0, "\(probe.stderr)")
    var sizes: [String] = []
    var width = ""
    for line in probe.stdout.split(separator: "\n") {
      if line.hasPrefix("width=") { width = String(line.dropFirst(6)) }
      if line.hasPrefix("height=") { sizes.append("\(width)x\(line.dropFirst(7))") }
    }
    return sizes
  }

  /// "LAYOUT RATE" of each decoded audio frame, as the decoder set it up (ffmpeg's ashowinfo:
  /// ffprobe 5.1 shows no sample rate per frame).
  static func audioFrameFormats(_ path: String) throws -> [String] {
    let run = try CommandRunner.run(
      "ffmpeg",
      [
        "-nostdin", "-hide_banner", "-i", path, "-map", "0:a", "-af", "ashowinfo", "-f", "null",
        "-",
      ])
    #expect(run.status == 0, "\(run.stderr)")
    return run.stderr.split(separator: "\n").compactMap { line -> String? in
      guard line.contains("Parsed_ashowinfo"),
        let layout = line.firstRange(of: "chlayout:"), let rate = line.firstRange(of: "rate:")
      else { return nil }
      let field = { (start: String.Index) in line[start...].prefix { $0 != " " } }
      return "\(field(layout.upperBound)) \(field(rate.upperBound))"
    }
  }

  /// The values in order with repeats collapsed.
  static func runs(of values: [String]) -> [String] {
    values.reduce(into: []) { runs, value in if runs.last != value { runs.append(value) } }
  }
}
