import Foundation
import IngestTestSupport
import Testing

/// The HEVC fixtures to .ts, HLS and SRT, decoded by ffmpeg and by GStreamer. (`SRTReplayTests`
/// also pushes them, with ffmpeg's checks; `EnhancedRTMPTests` publishes them over RTMP.)
@Suite struct HEVCReplayTests {
  /// Fixture, video pictures in it.
  static let fixtures = [("screen-hevc.dump", 300), ("bframes-hevc.dump", 120)]

  /// ffprobe's codec and size of the first video stream, "hevc 720x1280".
  static func videoStream(_ path: String) throws -> String {
    let result = try CommandRunner.run(
      "ffprobe",
      [
        "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=codec_name,width,height",
        "-of", "csv=p=0", path,
      ])
    let fields = result.stdout.split(separator: "\n").first?.split(separator: ",") ?? []
    guard fields.count == 3 else { return result.stdout + result.stderr }
    return "\(fields[0]) \(fields[1])x\(fields[2])"
  }

  @Test(arguments: fixtures) func transportStreamDecodesInFFmpegAndGStreamer(
    fixture: String, frames: Int
  ) throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let output = directory.appending(path: "out.ts").path
    let result = try CommandRunner.ingest([
      "replay", CommandRunner.fixture(fixture), "--to", output, "--speed", "max",
    ])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(try Self.videoStream(output) == "hevc 720x1280")
    #expect(try CommandRunner.decodeErrors(output) == "")
    let gstreamer = try GStreamerDecode.decode(output, codec: "hevc")
    #expect(gstreamer.problems == [])
    #expect(gstreamer.frames == frames)
  }

  @Test(arguments: fixtures) func hlsPlaysInFFmpegAndGStreamerWithSegmentsCutAtIRAP(
    fixture: String, frames: Int
  ) throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let hls = directory.appending(path: "hls")
    // HEVC defaults to fMP4 segments (HLSFragmentedMP4IntegrationTests); TS is asked for here.
    let result = try CommandRunner.ingest([
      "replay", CommandRunner.fixture(fixture), "--to", "hls:\(hls.path)?container=ts", "--speed",
      "max",
    ])
    #expect(result.status == 0, "\(result.stderr)")
    let playlist = hls.appending(path: "index.m3u8").path
    #expect(try CommandRunner.decodeErrors(playlist) == "")
    let gstreamer = try GStreamerDecode.decode(playlist, codec: "hevc", playlist: true)
    #expect(gstreamer.problems == [])
    #expect(gstreamer.frames == frames)
    let segments = try FileManager.default.contentsOfDirectory(atPath: hls.path)
      .filter { $0.hasSuffix(".ts") }.sorted()
    // A keyframe every 2 s, segments of 2 s: one IRAP per segment, each starting it.
    #expect(segments.count == frames / 60)
    for segment in segments {
      let path = hls.appending(path: segment).path
      let check = try TransportStreamCheck(path: path)
      #expect(check.startsCleanly(video: true), "\(segment)")
      #expect(try Self.videoStream(path) == "hevc 720x1280")
    }
  }

  /// The copy a real SRT listener (srt-live-transmit) received, through GStreamer too.
  @Test func srtCopyDecodesInGStreamer() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let listener = try SRTListener(
      port: try LoopbackServers.freePort(SOCK_DGRAM), output: directory.appending(path: "in.ts"))
    defer { listener.kill() }
    let result = try CommandRunner.ingest(
      [
        "replay", CommandRunner.fixture("screen-hevc.dump"), "--to",
        "srt://127.0.0.1:\(listener.port)?latency=\(SRTListener.toleratedLatency)", "--speed", "4",
      ], timeout: 60)
    #expect(result.status == 0, "\(result.stderr)")
    // With -a:no the listener exits once the caller has gone, after writing what it received.
    #expect(listener.child.wait(timeout: 10))
    let received = listener.output.path
    #expect(try Self.videoStream(received) == "hevc 720x1280")
    let gstreamer = try GStreamerDecode.decode(received, codec: "hevc")
    #expect(gstreamer.problems == [])
    #expect(gstreamer.frames == 300)
  }

  /// A link at half the stream's rate: pictures are dropped (GOP tails, TRAIL_N, all but IRAP),
  /// and what is sent still decodes without an error.
  @Test func droppedPicturesNeverBreakTheDecode() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let output = directory.appending(path: "congested.ts").path
    let result = try CommandRunner.ingest([
      "replay", CommandRunner.fixture("bframes-hevc.dump"), "--to", "\(output)?rate=250k",
      "--speed", "max", "--min-delivered", "0", "--json",
    ])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(!result.stdout.contains("\"dropped\":0"), "\(result.stdout)")
    #expect(result.stdout.contains("\"gopTail\""), "\(result.stdout)")
    #expect(try CommandRunner.decodeErrors(output) == "")
    let check = try TransportStreamCheck(path: output)
    let (continuityErrors, startsCleanly) = (
      check.continuityErrors, check.startsCleanly(video: true)
    )
    #expect(continuityErrors == 0)
    #expect(startsCleanly)
  }

  @Test func inspectShowsProfileTierLevelAndSize() throws {
    let result = try CommandRunner.ingest(["inspect", CommandRunner.fixture("screen-hevc.dump")])
    #expect(result.status == 0)
    #expect(
      result.stdout.contains("HEVC Main, Main tier, level 3.1, 720x1280"), "\(result.stdout)")
    let json = try CommandRunner.ingest([
      "inspect", CommandRunner.fixture("bframes-hevc.dump"), "--json",
    ])
    #expect(json.stdout.contains("\"profile\":\"Main\""), "\(json.stdout)")
    #expect(json.stdout.contains("\"width\":720") && json.stdout.contains("\"height\":1280"))
  }
}
