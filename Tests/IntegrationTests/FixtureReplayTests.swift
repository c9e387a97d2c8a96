import Foundation
import IngestTestSupport
import Testing

/// Every bundled fixture replayed to a .ts file: ffprobe lists the expected streams, ffmpeg and
/// GStreamer decode it with zero errors and warnings, and the stream has no continuity errors,
/// starts with PAT, PMT and a keyframe, and keeps the PCR, DTS and parameter-set rules of
/// `TransportStreamCheck.conformanceViolations`.
@Suite struct FixtureReplayTests {
  static let expectations: [(String, [String])] = [
    ("screen.dump", ["h264", "aac,48000,2", "aac,44100,1"]),
    ("bframes.dump", ["h264", "aac,48000,2"]),
    ("mic-clock-reset.dump", ["h264", "aac,48000,2", "aac,44100,1"]),
    ("static-screen.dump", ["h264", "aac,48000,2"]),
    ("video-only.dump", ["h264"]),
    ("audio-only.dump", ["aac,48000,2", "aac,44100,1"]),
    ("landscape.dump", ["h264"]),
    ("screen-hevc.dump", ["hevc", "aac,48000,2", "aac,44100,1"]),
    ("bframes-hevc.dump", ["hevc", "aac,48000,2"]),
  ]

  /// Whether a stream list (as `expectations` gives it) has video.
  static func hasVideo(_ streams: [String]) -> Bool {
    streams.contains("h264") || streams.contains("hevc")
  }

  @Test(arguments: expectations)
  func replaysToCleanTransportStream(fixture: String, streams: [String]) throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let output = directory.appending(path: "out.ts").path
    let result = try CommandRunner.ingest([
      "replay", CommandRunner.fixture(fixture), "--to", output, "--speed", "max", "--json",
    ])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.contains("\"dropped\":0"))
    #expect(try CommandRunner.streams(output) == streams)
    #expect(try CommandRunner.decodeErrors(output) == "")
    let check = try TransportStreamCheck(path: output)
    let (badSync, continuityErrors) = (check.badSync, check.continuityErrors)
    let startsCleanly = check.startsCleanly(video: Self.hasVideo(streams))
    #expect(badSync == 0)
    #expect(continuityErrors == 0)
    #expect(startsCleanly)
    // The checker's parameter-set rules and this GStreamer pipeline are H.264's; the HEVC
    // fixtures get theirs in HEVCReplayTests.
    guard streams.first != "hevc" else { return }
    let parameterSets = try TransportStreamCheck.parameterSets(
      ofDump: CommandRunner.fixture(fixture))
    #expect(check.conformanceViolations(parameterSets: parameterSets).map(\.description) == [])
    #expect(try CommandRunner.gstreamerDecodeProblems(output, pids: check.elementaryPIDs) == "")
  }

  @Test func clockResetIsReportedNotBackwards() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let output = directory.appending(path: "reset.ts").path
    let result = try CommandRunner.ingest([
      "replay", CommandRunner.fixture("mic-clock-reset.dump"), "--to", output, "--speed", "max",
      "--json",
    ])
    #expect(result.status == 0)
    #expect(result.stdout.contains("\"clock_resets\":1"))
    let check = try TransportStreamCheck(path: output)
    let flagged = check.packets.contains { $0.pid == 0x102 && $0.discontinuity }
    #expect(flagged)
  }
}
