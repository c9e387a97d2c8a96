import Foundation
import Glibc
import IngestTestSupport
import Testing

/// `ingest live --codec hevc`: the libx265 encoder child into a .ts file and a real SRT listener.
@Suite(.serialized) struct LiveHEVCTests {
  private func live(_ arguments: [String]) throws -> CommandRunner.Result {
    try CommandRunner.ingest(
      ["live", "testsrc", "--codec", "hevc", "--size", "640x360", "--quiet"] + arguments,
      timeout: 90)
  }

  @Test func toATransportStreamDecodesCleanlyInFFmpegAndGStreamer() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let output = directory.appending(path: "live.ts").path
    let result = try live(["--to", output, "--duration", "6", "--json"])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.contains(#""ok":true"#))
    #expect(try HEVCReplayTests.videoStream(output) == "hevc 640x360")
    #expect(try CommandRunner.decodeErrors(output) == "")
    let gstreamer = try GStreamerDecode.decode(output, codec: "hevc")
    #expect(gstreamer.problems == [])
    #expect(gstreamer.frames >= 170)
  }

  @Test func toARealSRTListenerDecodesCleanly() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let received = directory.appending(path: "in.ts")
    let listener = try SRTListener(
      port: try LoopbackServers.freePort(SOCK_DGRAM), output: received)
    defer { listener.kill() }
    let result = try live([
      "--to", "srt://127.0.0.1:\(listener.port)?latency=\(SRTListener.toleratedLatency)",
      "--duration", "6",
    ])
    #expect(result.status == 0, "\(result.stderr)")
    // With -a:no the listener exits once the caller has gone, after writing what it received.
    #expect(listener.child.wait(timeout: 10))
    #expect(try HEVCReplayTests.videoStream(received.path) == "hevc 640x360")
    #expect(try CommandRunner.decodeErrors(received.path) == "")
    let gstreamer = try GStreamerDecode.decode(received.path, codec: "hevc")
    #expect(gstreamer.problems == [])
    #expect(gstreamer.frames >= 150)
  }
}
