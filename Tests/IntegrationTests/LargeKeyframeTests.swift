import Foundation
import IngestCore
import IngestTestSupport
import Testing

/// Keyframes larger than a fragment's GOP buffer (3 MiB): a 5.56 MB IDR, as a 2048x1152 screen
/// at a high rate gives, and an 8 MB HEVC IRAP. Every output takes the samples the run's limit
/// admits (`max_sample_bytes`), `.mp4` and fMP4 HLS as `.ts`; a larger one is refused by name.
@Suite struct LargeKeyframeTests {
  /// `fixture` with its first video keyframe grown to `bytes` by a filler-data NAL unit (H.264
  /// type 12, HEVC type 38), which decoders skip: the picture still decodes, at the size of a
  /// real one. The mic track is left out, so that no output mixes (the mix's buffers would
  /// lower the limit; the limit with them is the same rule).
  static func dump(from fixture: String, keyframeBytes bytes: Int, in directory: URL) throws
    -> String
  {
    var lengthSize = 4
    var isHEVC = false
    var grown = false
    var items: [DumpItems.Item] = []
    for item in try DumpItems.read(CommandRunner.fixture(fixture)) {
      switch item {
      case .format(.audioMic, _): continue
      case .sample(let sample) where sample.kind == .audioMic: continue
      case .format(.video, let format):
        lengthSize = format.video?.nalLengthSize ?? 4
        if case .hevc = format { isHEVC = true }
        items.append(item)
      case .sample(var sample) where sample.kind == .video && sample.isKeyframe && !grown:
        grown = true
        let header: [UInt8] = isHEVC ? [38 << 1, 1] : [12]
        let filler = bytes - sample.payload.count - lengthSize - header.count - 1
        let length = header.count + filler + 1
        let prefix = (0..<lengthSize).reversed().map {
          UInt8(truncatingIfNeeded: length >> (8 * $0))
        }
        sample.payload += prefix + header + [UInt8](repeating: 0xFF, count: filler) + [0x80]
        #expect(sample.payload.count == bytes)
        items.append(.sample(sample))
      default: items.append(item)
      }
    }
    let path = directory.appending(path: "large.dump").path
    try DumpItems.write(items, to: path)
    return path
  }

  /// ffprobe's video packets of `path`: each one's flags and size, in decode order.
  static func videoPackets(_ path: String) throws -> [(keyframe: Bool, size: Int)] {
    let result = try CommandRunner.run(
      "ffprobe",
      [
        "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=flags,size", "-of",
        "csv=p=0", path,
      ])
    #expect(result.status == 0, "\(result.stderr)")
    return result.stdout.split(separator: "\n").compactMap { line in
      let fields = line.split(separator: ",")
      guard fields.count >= 2, let size = Int(fields[0]) else { return nil }
      return (fields[1].hasPrefix("K"), size)
    }
  }

  /// The replay's `max_sample_bytes`, from its `start` status event.
  static func sampleLimit(_ statusPath: String) throws -> Int? {
    let text = try String(contentsOfFile: statusPath, encoding: .utf8)
    guard let range = text.range(of: "\"max_sample_bytes\":") else { return nil }
    return Int(text[range.upperBound...].prefix { $0.isNumber })
  }

  /// The outputs the keyframe goes to; "srt" is a push to an SRT listener (`SRTPush`), whose
  /// copy is read back as `rec.ts` is.
  static let targets = ["rec.mp4", "hls?container=fmp4", "rec.ts", "srt"]

  @Test(arguments: targets) func aKeyframeLargerThanAGOPBufferIsWrittenWithItsGOP(target: String)
    throws
  {
    guard CommandRunner.has("ffprobe") else {
      TestEnvironment.unavailable("ffprobe is not installed (Scripts/lib/deps.sh installs it)")
      return
    }
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let size = 5_560_000
    let dump = try Self.dump(from: "screen.dump", keyframeBytes: size, in: directory)
    let isHLS = target.hasPrefix("hls")
    let status = directory.appending(path: "status.jsonl").path
    let arguments = ["--json", "--quiet", "--status", status]
    let result: CommandRunner.Result
    let read: String
    if target == "srt" {
      let push = try SRTPush.replay(dump, named: "large", in: directory, arguments: arguments)
      (result, read) = (push.run, push.received)
    } else {
      let output =
        isHLS
        ? "hls:" + directory.appending(path: target).path
        : directory.appending(path: target).path
      result = try CommandRunner.ingest(
        ["replay", dump, "--to", output, "--speed", "max"] + arguments)
      read = isHLS ? directory.appending(path: "hls/index.m3u8").path : output
    }
    #expect(result.status == 0, "\(result.stderr)")
    // Every video sample reached the output, the large keyframe first.
    #expect(result.stdout.contains("\"sent\":{\"video\":300,"), "\(result.stdout)")
    #expect(!result.stdout.contains("tooLarge"), "\(result.stdout)")
    let limit = try Self.sampleLimit(status)
    #expect(limit.map { $0 >= size } == true, "limit \(String(describing: limit))")
    let packets = try Self.videoPackets(read)
    #expect(packets.count == 300)
    #expect(packets.first?.keyframe == true)
    // A TS packet adds the parameter sets and start codes to the sample.
    #expect(packets.first.map { $0.size >= size } == true, "\(String(describing: packets.first))")
    #expect(try CommandRunner.decodeErrors(read) == "")
  }

  /// An 8 MB HEVC IRAP (4K60) above what the default budget holds for an `.mp4` (the reader,
  /// the ring and the fragment buffer each hold one) is refused by name, never written short
  /// or lost without a word; at a budget that holds it, the recording has every frame.
  @Test func an8MBHEVCKeyframeIsRefusedByNameOrWrittenWhole() throws {
    guard CommandRunner.has("ffprobe") else {
      TestEnvironment.unavailable("ffprobe is not installed (Scripts/lib/deps.sh installs it)")
      return
    }
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let size = 8_000_000
    let dump = try Self.dump(from: "screen-hevc.dump", keyframeBytes: size, in: directory)
    let output = directory.appending(path: "rec.mp4").path
    let status = directory.appending(path: "status.jsonl").path

    let refused = try CommandRunner.ingest([
      "replay", dump, "--to", output, "--speed", "max", "--status", status,
    ])
    let limit = try #require(try Self.sampleLimit(status))
    #expect(limit < size)
    #expect(
      refused.stderr.contains(
        "video: 1 samples refused as too large (largest \(size) bytes, limit \(limit) bytes"),
      "\(refused.stderr)")
    #expect(try Self.videoPackets(output).first?.size != size)

    try FileManager.default.removeItem(atPath: status)
    let whole = try CommandRunner.ingest([
      "replay", dump, "--to", output, "-y", "--speed", "max", "--json", "--quiet", "--budget", "80",
      "--status", status,
    ])
    #expect(whole.status == 0, "\(whole.stderr)")
    #expect(whole.stdout.contains("\"sent\":{\"video\":300,"), "\(whole.stdout)")
    #expect(try Self.sampleLimit(status).map { $0 >= size } == true)
    let packets = try Self.videoPackets(output)
    #expect(packets.count == 300)
    #expect(packets.first?.keyframe == true)
    #expect(packets.first?.size == size)
    #expect(try CommandRunner.decodeErrors(output) == "")
  }
}
