import Foundation
import IngestCore
import IngestTestSupport
import Testing

/// A mic on a clock of one tick per second (about 43 frames share each timestamp), as the
/// device producers of issue #23 send it: the timeline places the frames by their count and
/// rate, never ahead of the host time, and the TS writer sends each PES before its decode time
/// although units leave in append order.
extension ConformanceCaseTests {
  /// How a producer made the mic's host time whole seconds, and how it delivered the frames.
  enum CoarseMic: String, CaseIterable, CustomTestStringConvertible {
    case roundedDown, roundedToNearest, roundedUp
    /// Rounded down, and each second of frames delivered in one burst when the second ends.
    case inBursts

    var testDescription: String { rawValue }
  }

  /// screen.dump with the mic's timestamps on a 1 s clock, rounded as `variant` says, and each
  /// second of mic frames either in capture order or delivered as one burst when the second ends.
  static func coarseMic(_ variant: CoarseMic) throws -> [DumpItems.Item] {
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
      let rounded =
        switch variant {
        case .roundedDown, .inBursts: second
        case .roundedToNearest: (nanoseconds + 500_000_000) / 1_000_000_000
        case .roundedUp: (nanoseconds + 999_999_999) / 1_000_000_000
        }
      sample.pts = MediaTime(value: rounded, timescale: 1)
      guard variant == .inBursts else {
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

  /// PTS of each PES on `pid` from the first video PTS: the mic's clock moves neither the
  /// other tracks against each other nor, from its first second on, itself away from them.
  static func offsets(_ check: TransportStreamCheck, pid: UInt16) -> [Int64] {
    let video = check.units.first { $0.pid == 0x100 }?.pts ?? 0
    return check.units.filter { $0.pid == pid }.compactMap(\.pts).map { $0 - video }
  }

  /// Every rule of `conformanceViolations` (no PES after its decode time among them), zero
  /// GStreamer warnings and errors, zero ffmpeg errors and continuity errors in `path`.
  static func expectClean(_ path: String, _ name: String) throws {
    let check = try TransportStreamCheck(path: path)
    #expect(check.conformanceViolations().map(\.description) == [], "\(name)")
    let problems = try Self.gstreamerProblems(path, check: check)
    #expect(problems == [], "\(name) \(problems)")
    #expect(try CommandRunner.decodeErrors(path) == "", "\(name)")
    #expect(check.continuityErrors == 0, "\(name)")
  }

  /// Whatever the rounding or the delivery, every PES of every output (.ts, each HLS segment,
  /// the copy an SRT listener received) leaves before its decode time, and ffmpeg and
  /// GStreamer decode it without an error or a warning. Video and app audio keep their places;
  /// from 1 s on every mic frame is within a frame of where the fine-clocked original is
  /// (rounded up, it no longer runs a second late). Only a frame that comes before any other
  /// sample is refused (`awaitingClock`): where it lies within its second is not known yet.
  @Test(arguments: CoarseMic.allCases)
  func aCoarseMicLeavesEveryPESBeforeItsDecodeTime(variant: CoarseMic) throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let reference = try Self.replay(Self.screen(), named: "reference", in: directory)
    let name = variant.rawValue
    let replay = try Self.replay(Self.coarseMic(variant), named: name, in: directory)
    #expect(replay.result.status == 0, "\(replay.result.stderr)")
    #expect(replay.result.stdout.contains("\"clock_resets\":0"), "\(replay.result.stdout)")
    let refused = variant == .inBursts ? 0 : 1
    #expect(
      replay.result.stdout.contains("\"audioMic\":{\"awaitingClock\":1}") == (refused == 1),
      "\(replay.result.stdout)")
    #expect(replay.pts(0x102).count == reference.pts(0x102).count - refused)
    for pid: UInt16 in [0x100, 0x101] {
      #expect(Self.offsets(replay.check, pid: pid) == Self.offsets(reference.check, pid: pid))
    }
    let original = Self.offsets(reference.check, pid: 0x102)
    let frame: Int64 = 1024 * 90_000 / 44_100 + 1
    for offset in Self.offsets(replay.check, pid: 0x102) where offset >= 90_000 {
      let nearest = original.map { abs($0 - offset) }.min() ?? .max
      #expect(nearest <= frame, "\(name): mic at \(offset)")
    }

    let dump = directory.appending(path: "\(name).dump").path
    let micFrames = try Self.screen().filter { $0.sample?.kind == .audioMic }.count
    #expect(
      try ProducerInputTests.inspect(dump).contains(
        "audioMic: \(micFrames) samples on a clock coarser than one frame (timescale 1)"))
    let recording = directory.appending(path: "\(name)-hls").path
    let hls = try CommandRunner.ingest([
      "replay", dump, "--to", "hls:\(recording)", "--speed", "max", "--quiet",
    ])
    #expect(hls.status == 0, "\(hls.stderr)")
    let segments = try FileManager.default.contentsOfDirectory(atPath: recording)
      .filter { $0.hasSuffix(".ts") }.sorted()
    #expect(segments.count == 5)
    for segment in segments {
      try Self.expectClean(recording + "/" + segment, "\(name) \(segment)")
    }
    #expect(try CommandRunner.decodeErrors(recording + "/index.m3u8") == "")

    let srt = try SRTPush.replay(dump, named: name, in: directory, arguments: ["--quiet"])
    #expect(srt.run.status == 0, "\(srt.run.stderr)")
    try Self.expectClean(srt.received, "\(name) over SRT")
  }
}
