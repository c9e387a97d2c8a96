import Foundation
import Glibc
import IngestCore
import IngestTestSupport
import Testing

/// `ingest live` with the real encoder child, into each kind of output, and its failures.
@Suite(.serialized) struct LiveTests {
  private func live(_ arguments: [String], timeout: TimeInterval = 90) throws
    -> CommandRunner.Result
  {
    try CommandRunner.ingest(
      ["live", "testsrc", "--size", "640x360", "--quiet"] + arguments, timeout: timeout)
  }

  /// Video frames in a transport stream, as ffprobe counts them.
  private func videoFrames(_ path: String) throws -> Int {
    let probe = try CommandRunner.run(
      "ffprobe",
      [
        "-v", "error", "-count_frames", "-select_streams", "v", "-show_entries",
        "stream=nb_read_frames", "-of", "csv=p=0", path,
      ])
    // A transport stream lists its streams under the program too: the last figure counts.
    let figures = probe.stdout.split(whereSeparator: \.isNewline).compactMap {
      Int($0.trimmingCharacters(in: .whitespaces))
    }
    return figures.last ?? -1
  }

  @Test func testPatternToATransportStreamDecodesCleanly() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let output = directory.appending(path: "live.ts").path
    let result = try live(["--to", output, "--duration", "10", "--json"])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.contains(#""ok":true"#))
    // The encoder's memory is reported apart from the pipeline's.
    #expect(result.stdout.contains(#""encoder":{"exit":"exited with status 0","peak_resident":"#))
    #expect(try CommandRunner.decodeErrors(output) == "")
    #expect(try videoFrames(output) >= 290)
    #expect(try CommandRunner.streams(output).count == 3)
  }

  /// Every video sample of the encoder carries its decode time, also without B-frames (where it
  /// is the presentation time): a stream without one is read 32 frames in before a run starts
  /// (to see that it is in display order), which held every live run's first second back.
  @Test func theEncoderGivesEveryVideoSampleItsDecodeTime() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let dump = directory.appending(path: "live.dump").path
    let result = try CommandRunner.run(
      "sh",
      [
        "-c", #"exec "$0" "$@" > "$DUMP""#, CommandRunner.encoder, "testsrc", "--size",
        "320x180", "--duration", "2", "--no-mic",
      ].map { $0.replacingOccurrences(of: "$DUMP", with: dump) }, timeout: 120)
    #expect(result.status == 0, "\(result.stderr)")
    let video = try DumpItems.read(dump).compactMap(\.sample).filter { $0.kind == .video }
    #expect(video.count >= 50)
    #expect(video.allSatisfy { $0.dts == $0.pts }, "\(video.prefix(3).map(\.dts))")
  }

  @Test func testPatternToHLSEndsThePlaylist() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let result = try live(["--to", "hls:\(directory.path)/hls", "--duration", "10"])
    #expect(result.status == 0, "\(result.stderr)")
    let playlist = directory.appending(path: "hls/index.m3u8").path
    let text = try String(contentsOfFile: playlist, encoding: .utf8)
    #expect(text.contains("#EXT-X-ENDLIST"))
    #expect(try CommandRunner.decodeErrors(playlist) == "")
  }

  @Test func testPatternToARealSRTListener() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let received = directory.appending(path: "in.ts")
    let listener = try SRTListener(
      port: try LoopbackServers.freePort(SOCK_DGRAM), output: received)
    defer { listener.kill() }
    let result = try live([
      "--to", "srt://127.0.0.1:\(listener.port)?latency=\(SRTListener.toleratedLatency)",
      "--duration", "10", "--json",
    ])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(
      try LoopbackServers.waitUntil("the listener's file to hold the stream") {
        LoopbackServers.size(of: received) > 500_000
      } == ())
    listener.kill()
    #expect(try CommandRunner.decodeErrors(received.path) == "")
    #expect(try videoFrames(received.path) >= 250)
  }

  @Test func aLadderRequestReachesTheEncoderAndIsApplied() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let status = directory.appending(path: "status.jsonl").path
    // A simulated 400 kb/s link under a 1.5 Mb/s encoder fills the ring: the ladder asks the
    // encoder for less, and the encoder's report says on which frame it applied it.
    let result = try live([
      "--to", directory.appending(path: "slow.ts").path + "?rate=400k", "--duration", "12",
      "--bitrate", "1500000", "--rate-control", "off", "--min-delivered", "0", "--status", status,
    ])
    #expect(result.status == 0, "\(result.stderr)")
    let lines = try String(contentsOfFile: status, encoding: .utf8).split(separator: "\n")
    let request = lines.firstIndex { $0.contains(#""event":"encoder","#) }
    #expect(request != nil, "no encoder request in \(lines.count) status lines")
    let applied = lines.firstIndex {
      $0.contains(#""event":"encoderReport""#) && $0.contains(#""event":"applied""#)
    }
    #expect(applied != nil)
    if let request, let applied { #expect(applied > request) }
  }

  /// At --fps 60 without the rate controller, the ladder asks for half of 60 under pressure (a
  /// 6 s outage of the output) and restores 60 after it, not the default 30.
  @Test func theLadderRestoresTheFrameRateAskedFor() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let status = directory.appending(path: "status.jsonl").path
    let result = try live([
      "--size", "320x180", "--fps", "60", "--to", "null:?stall=6s@2s", "--duration", "14",
      "--rate-control", "off", "--min-delivered", "0", "--status", status,
    ])
    #expect(result.status == 0, "\(result.stderr)")
    let asked = FaultSupport.statusEvents(status).filter {
      $0["event"] as? String == "encoder" && $0["request"] as? String == "frameRate"
    }.compactMap { $0["target_fps"] as? Int }
    #expect(asked.first == 30, "\(asked)")
    #expect(asked.last == 60, "\(asked)")
  }

  @Test func aKilledEncoderFailsTheRunAndLeavesAPlayableOutput() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let output = directory.appending(path: "cut.ts").path
    let status = directory.appending(path: "status.jsonl")
    let run = try ChildProcess(
      CommandRunner.ingest,
      [
        "live", "testsrc", "--size", "640x360", "--quiet", "--to", output, "--duration", "60",
        "--status", status.path,
      ],
      directory: directory, name: "live")
    defer { run.kill() }
    // Once the encoder reported three seconds of frames, the encoder child is killed, not the
    // pipeline. (Counted in frames, not in the run's own stats ticks: on a loaded machine the
    // encoder's first frames can come a second or more after the run started.)
    try LoopbackServers.waitUntil("three seconds of frames from the encoder", timeout: 60) {
      LoopbackServers.text(of: status).matches(of: /"frame":(\d+)/).contains {
        Int($0.1) ?? 0 >= 90
      }
    }
    let children = try String(
      contentsOfFile: "/proc/\(run.pid)/task/\(run.pid)/children", encoding: .utf8)
    let child = try #require(children.split(separator: " ").first.flatMap { Int32($0) })
    #expect(Glibc.kill(child, SIGKILL) == 0)
    #expect(run.wait(timeout: 30))
    #expect(run.process.terminationStatus == 1)
    #expect(run.stderr.contains("the encoder was killed by signal 9"), "\(run.stderr)")
    #expect(try CommandRunner.decodeErrors(output) == "")
    #expect(try videoFrames(output) >= 60)
  }

  @Test(arguments: ["/nonexistent/clip.mp4", "x11:nonexistent-display:99"])
  func aSourceThatCannotBeReadExitsOne(source: String) throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let result = try CommandRunner.ingest(
      ["live", source, "--to", directory.appending(path: "x.ts").path, "--quiet"], timeout: 60)
    #expect(result.status == 1)
    #expect(result.stderr.contains("ingest live: encoder:"), "\(result.stderr)")
  }

  @Test func aFileWithoutVideoIsRefused() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let audio = directory.appending(path: "tone.m4a").path
    let made = try CommandRunner.run(
      "ffmpeg",
      ["-v", "error", "-f", "lavfi", "-i", "sine=duration=2", "-c:a", "aac", "-y", audio])
    #expect(made.status == 0)
    let result = try CommandRunner.ingest(
      ["live", audio, "--to", directory.appending(path: "x.ts").path, "--quiet"], timeout: 60)
    #expect(result.status == 1)
    #expect(result.stderr.contains("encoder"), "\(result.stderr)")
  }
}
