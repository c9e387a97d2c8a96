import Foundation
import IngestTestSupport
import Testing

/// A track whose codec capture cannot convert is a runtime failure (exit 1, as `capture --help`
/// says) that names the stream and its codec and says which option leaves it out; with that
/// option the rest of the file is captured.
@Suite struct CaptureUnsupportedCodecTests {
  struct Case: Sendable, CustomStringConvertible {
    var codecArguments: [String]
    var stream: String
    var codec: String
    var option: String
    var description: String { "\(codec) (\(option))" }
  }

  @Test(arguments: [
    Case(
      codecArguments: ["-c:v", "mpeg4", "-c:a", "aac"], stream: "stream 0", codec: "mpeg4",
      option: "--video"),
    Case(
      codecArguments: ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "libmp3lame"],
      stream: "stream 1", codec: "mp3", option: "--app-audio"),
  ])
  func unsupportedCodecExitsOneAndSuggestsLeavingItOut(_ item: Case) throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let input = directory.appending(path: "input.mkv").path
    let dump = directory.appending(path: "out.dump").path
    let made = try CommandRunner.run(
      "ffmpeg",
      [
        "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=30", "-f",
        "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", "1",
      ] + item.codecArguments + [input], timeout: 60)
    try #require(made.status == 0, "ffmpeg: \(made.stderr)")

    let refused = try CommandRunner.ingest(["capture", input, "-o", dump], timeout: 60)
    #expect(refused.status == 1, "stderr: \(refused.stderr)")
    #expect(refused.stderr.contains(item.stream), "\(refused.stderr)")
    #expect(refused.stderr.contains(item.codec), "\(refused.stderr)")
    #expect(refused.stderr.contains("\(item.option) none"), "\(refused.stderr)")
    #expect(!refused.stderr.contains("--help"), "not a usage error: \(refused.stderr)")

    let captured = try CommandRunner.ingest(
      ["capture", input, "-o", dump, item.option, "none"], timeout: 60)
    #expect(captured.status == 0, "stderr: \(captured.stderr)")
    #expect(LoopbackServers.size(of: URL(fileURLWithPath: dump)) > 0)
    let inspected = try CommandRunner.ingest(["inspect", dump], timeout: 60)
    #expect(inspected.status == 0, "stderr: \(inspected.stderr)")
  }
}
