import Foundation
import Glibc
import IngestHLS
import IngestTestSupport
import Testing

/// HLS in fMP4 (`hls:DIR?container=fmp4`, the default for HEVC): the fixtures recorded and read
/// back by ffprobe, ffmpeg, GStreamer (hlsdemux and qtdemux) and mediainfo, every segment decoded alone after
/// its initialization section, a recording killed with SIGKILL and recovered, and the upload
/// order (the initialization section before the segments that need it).
@Suite struct HLSFragmentedMP4IntegrationTests {
  /// Fixture, `--to` query, video codec, video pictures in it.
  static let fixtures = [
    ("screen.dump", "?container=fmp4", "h264", 300), ("screen-hevc.dump", "", "hevc", 300),
  ]

  /// Records `fixture` into `DIR/rec` as fast as possible; returns DIR and the recording.
  static func record(_ fixture: String, query: String, extra: [String] = []) throws -> (URL, URL) {
    let work = try CommandRunner.temporaryDirectory()
    let recording = work.appending(path: "rec")
    let result = try CommandRunner.ingest(
      [
        "replay", CommandRunner.fixture(fixture), "--to", "hls:\(recording.path)\(query)",
        "--speed", "max", "--quiet",
      ] + extra)
    #expect(result.status == 0, "\(result.stderr)")
    return (work, recording)
  }

  static func journal(_ recording: URL) -> HLSJournal {
    HLSJournal.parse(LoopbackServers.text(of: recording.appending(path: HLSJournal.fileName)))
  }

  /// `map` followed by `segments`, in one file, as a player hands them to its demuxer.
  static func concatenate(_ recording: URL, map: String, segments: [String], into name: String)
    throws -> String
  {
    var bytes = try Data(contentsOf: recording.appending(path: map))
    for segment in segments { bytes += try Data(contentsOf: recording.appending(path: segment)) }
    let path = recording.deletingLastPathComponent().appending(path: name).path
    try bytes.write(to: URL(fileURLWithPath: path))
    return path
  }

  /// Video pictures ffprobe decodes from `path`.
  static func videoFrames(_ path: String) throws -> Int? {
    let counted = try CommandRunner.run(
      "ffprobe",
      [
        "-v", "error", "-select_streams", "v:0", "-count_frames", "-show_entries",
        "stream=nb_read_frames", "-of", "csv=p=0", path,
      ])
    return Int(counted.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
  }

  @Test(arguments: fixtures) func recordingReadsCleanlyInEveryReader(
    fixture: String, query: String, codec: String, frames: Int
  ) throws {
    let (work, recording) = try Self.record(fixture, query: query)
    defer { try? FileManager.default.removeItem(at: work) }
    let journal = Self.journal(recording)
    #expect(journal.isFinished)
    #expect(journal.maps.map(\.name) == ["init00000.mp4"])
    #expect(journal.segments.count == 5)
    #expect(journal.segments.allSatisfy { $0.name.hasSuffix(".m4s") && $0.map == "init00000.mp4" })
    let playlist = recording.appending(path: "index.m3u8").path
    let text = LoopbackServers.text(of: recording.appending(path: "index.m3u8"))
    #expect(text.hasPrefix("#EXTM3U\n#EXT-X-VERSION:7\n"), "\(text)")
    #expect(text.contains("#EXT-X-MAP:URI=\"init00000.mp4\"\n"), "\(text)")

    // ffprobe and ffmpeg through the playlist: the video and one audio track (the mix of app
    // and mic, HLS's default, at the app's rate and channels), 10 s, a clean decode.
    #expect(try CommandRunner.streams(playlist) == [codec, "aac,48000,2"])
    let duration = try MP4RecordingTests.times(playlist).format
    #expect(abs(duration - 10) < 0.2, "\(duration)")
    #expect(try CommandRunner.decodeErrors(playlist) == "")

    // GStreamer through the playlist (hlsdemux), and with mediainfo the initialization section
    // and every segment in a row.
    let hls = try MP4RecordingTests.qtdemux(playlist, codec: codec, audioTracks: 1, playlist: true)
    #expect(hls.problems == [])
    #expect(hls.frames == frames)
    let whole = try Self.concatenate(
      recording, map: "init00000.mp4", segments: journal.segments.map(\.name), into: "whole.mp4")
    let gstreamer = try MP4RecordingTests.qtdemux(whole, codec: codec, audioTracks: 1)
    #expect(gstreamer.problems == [])
    #expect(gstreamer.frames == frames)
    try MP4RecordingTests.expectBoxReadersAccept(whole, codec: codec, audioTracks: 1)

    // Each segment decodes on its own after the initialization section: it starts at a
    // keyframe and references nothing before it.
    var decoded = 0
    for segment in journal.segments {
      let alone = try Self.concatenate(
        recording, map: "init00000.mp4", segments: [segment.name], into: "alone.mp4")
      #expect(try CommandRunner.decodeErrors(alone) == "", "\(segment.name)")
      decoded += try Self.videoFrames(alone) ?? 0
    }
    #expect(decoded == frames)
  }

  /// The segments keep the tracks' offsets exactly as the `.mp4` recording of the same dump
  /// does (one decode-time base for both, `MP4DecodeClock`): audio and video in sync to the
  /// millisecond, not just within an AAC frame.
  @Test func audioAndVideoKeepTheOffsetsOfTheMP4Recording() throws {
    let (work, recording) = try Self.record("screen.dump", query: "?container=fmp4")
    defer { try? FileManager.default.removeItem(at: work) }
    let segments = Self.journal(recording).segments.map(\.name)
    let whole = try Self.concatenate(
      recording, map: "init00000.mp4", segments: segments, into: "whole.mp4")
    let mp4 = work.appending(path: "rec.mp4").path
    // The same audio as the HLS recording's default: the mix.
    let reference = try CommandRunner.ingest([
      "replay", CommandRunner.fixture("screen.dump"), "--to", mp4, "--audio", "mix", "--speed",
      "max", "--quiet",
    ])
    #expect(reference.status == 0)
    let hls = try MP4RecordingTests.times(whole).streams
    let file = try MP4RecordingTests.times(mp4).streams
    try #require(hls.count == 2 && file.count == 2)
    for track in 0..<2 {
      #expect(abs(hls[track].0 - file[track].0) < 0.001, "track \(track): \(hls) \(file)")
      #expect(abs(hls[track].1 - file[track].1) < 0.001, "track \(track): \(hls) \(file)")
    }
  }

  /// An HEVC recording without a container= query is fMP4, and container=ts still gives TS.
  @Test func hevcDefaultsToFragmentedMP4AndTransportStreamCanBeAsked() throws {
    let (work, recording) = try Self.record("screen-hevc.dump", query: "?container=ts")
    defer { try? FileManager.default.removeItem(at: work) }
    let journal = Self.journal(recording)
    #expect(journal.maps == [])
    #expect(journal.segments.map(\.name).allSatisfy { $0.hasSuffix(".ts") })
    #expect(try CommandRunner.decodeErrors(recording.appending(path: "index.m3u8").path) == "")
    let help = try CommandRunner.ingest(["replay", "--help"])
    #expect(help.stdout.contains("?container=fmp4"), "\(help.stdout)")
  }

  /// A rotation at 2 s and back at 4 s: each format gets its initialization section, named by
  /// EXT-X-MAP after a discontinuity, and every segment decodes under the map it names.
  @Test func rotationStartsSegmentsUnderANewMap() throws {
    let work = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let dump = work.appending(path: "rotated.dump").path
    try DumpItems.write(try ConformanceCaseTests.rotated(), to: dump)
    let recording = work.appending(path: "rec")
    let result = try CommandRunner.ingest([
      "replay", dump, "--to", "hls:\(recording.path)?container=fmp4", "--speed", "max", "--quiet",
    ])
    #expect(result.status == 0, "\(result.stderr)")
    let journal = Self.journal(recording)
    #expect(journal.maps.count == 3, "\(journal.maps)")
    #expect(Set(journal.segments.compactMap(\.map)) == Set(journal.maps.map(\.name)))
    let text = LoopbackServers.text(of: recording.appending(path: "index.m3u8"))
    #expect(text.components(separatedBy: "#EXT-X-DISCONTINUITY\n#EXT-X-MAP:").count == 3, "\(text)")
    // Each segment decodes cleanly after the map it names. (ffmpeg's HLS demuxer keeps the
    // first map's decoder configuration across an EXT-X-MAP change, so the playlist as a whole
    // is no test of this in ffmpeg; docs/hls.md says so.)
    for segment in journal.segments {
      let alone = try Self.concatenate(
        recording, map: try #require(segment.map), segments: [segment.name], into: "alone.mp4")
      let errors = try CommandRunner.decodeErrors(alone)
      #expect(errors == "", "\(segment.name): \(errors)")
    }
    // The landscape section describes the landscape pictures.
    let landscape = try #require(journal.segments.first { $0.discontinuity }?.map)
    let probe = try CommandRunner.run(
      "ffprobe",
      [
        "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height", "-of",
        "csv=p=0", recording.appending(path: landscape).path,
      ])
    #expect(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "1280,720")
  }

  @Test func killedRecordingIsRecoveredToItsLastWholeFragment() throws {
    let work = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let recording = work.appending(path: "rec")
    // 4 s segments of 2 s GOPs: the segment being written holds a whole GOP on disk before the
    // next keyframe, which is when the run is killed.
    let run = try SignalledIngest(
      [
        "replay", CommandRunner.fixture("screen-hevc.dump"), "--to", "hls:\(recording.path)",
        "--segment", "4", "--speed", "2", "--quiet",
      ], in: work)
    let part = recording.appending(path: "seg00001.m4s.part")
    try LoopbackServers.waitUntil("a fragment in the second segment", timeout: 30) {
      LoopbackServers.size(of: part) > 0
    }
    run.send(SIGKILL)
    #expect(run.wait() != 0)

    let recover = try CommandRunner.ingest(["recover", recording.path])
    #expect(recover.status == 0, "\(recover.stderr)")
    #expect(recover.stderr.contains("partial seg00001.m4s cut from"), "\(recover.stderr)")
    let journal = Self.journal(recording)
    #expect(journal.isFinished)
    #expect(journal.segments.map(\.name) == ["seg00000.m4s", "seg00001.m4s"])
    #expect(journal.segments.map(\.map) == ["init00000.mp4", "init00000.mp4"])
    let playlist = recording.appending(path: "index.m3u8").path
    #expect(try CommandRunner.decodeErrors(playlist) == "")
    for segment in journal.segments {
      let alone = try Self.concatenate(
        recording, map: "init00000.mp4", segments: [segment.name], into: "alone.mp4")
      #expect(try CommandRunner.decodeErrors(alone) == "", "\(segment.name)")
      #expect(try Self.videoFrames(alone) == Int(segment.duration / 3000), "\(segment.name)")
    }
  }

  @Test func uploadSendsTheInitializationSectionBeforeAnySegment() throws {
    let (work, recording) = try Self.record("screen-hevc.dump", query: "")
    defer { try? FileManager.default.removeItem(at: work) }
    let server = try NginxWebDAV(directory: work.appending(path: "server"))
    let result = try UploadHarness.upload([recording.path, "--to", server.url, "--json"])
    #expect(result.status == 0, "\(result.stderr)")
    let puts = server.accessLog.split(separator: "\n").compactMap { line -> String? in
      guard let range = line.range(of: "\"PUT /rec/") else { return nil }
      return String(line[range.upperBound...].prefix { $0 != " " })
    }
    #expect(
      puts == [
        "init00000.mp4", "seg00000.m4s", "seg00001.m4s", "seg00002.m4s", "seg00003.m4s",
        "seg00004.m4s", "index.m3u8",
      ])
    let journal = Self.journal(recording)
    try UploadHarness.expectServerCopy(
      of: recording, on: server,
      files: journal.maps.map(\.name) + journal.segments.map(\.name) + ["index.m3u8"])
  }
}
