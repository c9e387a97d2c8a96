import Foundation
import IngestCore
import IngestTestSupport
import Testing

/// A mic on a clock of one tick per second (about 43 frames share each timestamp), as the
/// device producers of issue #23 send it: the timeline spreads the frames, and the TS writer
/// must send each PES before its decode time although units leave in append order.
extension ConformanceCaseTests {
  /// screen.dump with the mic's timestamps on a 1 s clock, rounded down or up, and each second
  /// of mic frames either in capture order or delivered as one burst when the second ends.
  static func coarseMic(roundedUp: Bool, inBursts: Bool) throws -> [DumpItems.Item] {
    var items: [DumpItems.Item] = []
    var burst: [DumpItems.Item] = []
    var burstSecond: Int64?
    for item in try Self.screen() {
      guard case .sample(var sample) = item, sample.kind == .audioMic else {
        items.append(item)
        continue
      }
      let nanoseconds = Int64(
        Int128(sample.pts.value) * 1_000_000_000 / Int128(sample.pts.timescale))
      let second = nanoseconds / 1_000_000_000
      sample.pts = MediaTime(
        value: roundedUp ? (nanoseconds + 999_999_999) / 1_000_000_000 : second, timescale: 1)
      guard inBursts else {
        items.append(.sample(sample))
        continue
      }
      if second != burstSecond {
        items += burst
        burst = []
        burstSecond = second
      }
      burst.append(.sample(sample))
    }
    return items + burst
  }

  /// Replays `items` to a .ts file, expecting zero ffmpeg errors and continuity errors, and
  /// returns the stream, its late units (PID and DTS) and GStreamer's problems.
  static func replayCoarseMic(_ items: [DumpItems.Item], named name: String, in directory: URL)
    throws -> (replay: Replay, late: [(pid: UInt16, dts: Int64)], gstreamer: [String])
  {
    let dump = directory.appending(path: "\(name).dump").path
    try DumpItems.write(items, to: dump)
    let output = directory.appending(path: "\(name).ts").path
    let result = try CommandRunner.ingest(
      ["replay", dump, "--to", output, "--speed", "max", "--json", "--quiet"])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.contains("\"clock_resets\":0"), "\(result.stdout)")
    #expect(try CommandRunner.decodeErrors(output) == "", "\(name)")
    let check = try TransportStreamCheck(path: output)
    #expect(check.continuityErrors == 0)
    var late: [(pid: UInt16, dts: Int64)] = []
    for violation in check.conformanceViolations() {
      if case .decodeTimeBeforePCR(let pid, _, let dts, _) = violation {
        late.append((pid, dts))
      } else {
        Issue.record("\(name): \(violation)")
      }
    }
    return (
      Replay(result: result, check: check, output: output), late,
      try Self.gstreamerProblems(output, check: check)
    )
  }

  /// App audio and video PTS from the first video PTS: the mic's clock may move the shared
  /// base (its first frame can be the first sample), never the other tracks against each other.
  static func offsets(_ replay: Replay, pid: UInt16) -> [Int64] {
    let video = replay.pts(0x100).first ?? 0
    return replay.pts(pid).map { $0 - video }
  }

  /// Each second's mic frames arrive in one burst when the second ends, so they leave behind
  /// video decoded up to a second later. Without lookahead the first burst finds the PCR 700 ms
  /// behind the video and its frames of the first 300 ms are late (13 PES); that burst teaches
  /// the writer how late units arrive, and every later burst is on time.
  @Test func aMicDeliveringACoarseClockInBurstsIsLateOnlyInItsFirstBurst() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let reference = try Self.replay(Self.screen(), named: "reference", in: directory)
    let (replay, late, gstreamer) = try Self.replayCoarseMic(
      Self.coarseMic(roundedUp: false, inBursts: true), named: "bursts", in: directory)
    #expect(late.count == 13)
    let firstMic = replay.check.units.first { $0.pid == 0x102 }?.decodeTime ?? 0
    #expect(late.allSatisfy { $0.pid == 0x102 && $0.dts < firstMic + 90_000 })
    #expect(gstreamer == [])
    for pid: UInt16 in [0x100, 0x101] {
      #expect(Self.offsets(replay, pid: pid) == Self.offsets(reference, pid: pid))
    }
  }

  /// Rounded up, the mic runs almost a second ahead of the other tracks, and its first frame
  /// is the first sample: the PCR starts from it, so the video and app audio of the first
  /// 200 ms are late (16 PES) and GStreamer cannot place them (timestamps before the first PCR).
  /// The first late unit teaches the writer how far behind units arrive; when the mic's lead
  /// grows once more at its first whole-second step, 4 more are late. From then on the PCR
  /// waits for them, where before the change units were late all along (770 PES).
  @Test func aMicClockRoundedUpMakesOnlyTheFirstUnitsLate() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let reference = try Self.replay(Self.screen(), named: "reference", in: directory)
    let (replay, late, gstreamer) = try Self.replayCoarseMic(
      Self.coarseMic(roundedUp: true, inBursts: false), named: "ahead", in: directory)
    #expect(late.count == 20)
    let firstPCR = replay.check.packets.compactMap(\.pcr).first ?? 0
    #expect(late.filter { $0.dts < firstPCR }.count == 16)
    #expect(late.allSatisfy { $0.pid != 0x102 && $0.dts < firstPCR + 90_000 }, "\(late)")
    #expect(
      gstreamer.allSatisfy {
        $0.contains("No groups, can't calculate timestamp") || $0.contains("decreasing timestamp")
      }, "\(gstreamer)")
    for pid: UInt16 in [0x100, 0x101] {
      #expect(Self.offsets(replay, pid: pid) == Self.offsets(reference, pid: pid))
    }
  }
}
