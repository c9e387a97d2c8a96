import Foundation
import IngestCore
import IngestTestSupport
import Testing

/// An open-GOP HEVC stream from `ingest-encode --codec hevc --bframes 3` (x265's default: CRA
/// keyframes, each followed by a RASL picture that references the GOP before) with a corrupt
/// sample mid-GOP: the rest of that GOP and the next CRA's RASL pictures are dropped, what is
/// sent decodes without an error in ffmpeg and GStreamer, and every picture decodes to what it
/// is in the undamaged stream. (Sent, a RASL picture whose references are missing decodes
/// without a word from either decoder, to a wrong picture: only the comparison shows it.)
@Suite struct HEVCOpenGOPTests {
  /// The NAL type of a sample's first slice (x265 puts SEI in front of some).
  static func nalType(_ sample: MediaSample) -> UInt8 {
    var offset = 0
    let bytes = sample.payload
    while offset + 5 <= bytes.count {
      let type = bytes[offset + 4] >> 1
      if type < 32 { return type }
      offset += 4 + bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
    }
    return 63
  }

  /// ffmpeg's MD5 of each decoded picture of the video, by PTS.
  static func pictureHashes(_ path: String) throws -> [String: String] {
    let result = try CommandRunner.run(
      "ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:v", "-f", "framemd5", "-"])
    var hashes: [String: String] = [:]
    for line in result.stdout.split(separator: "\n") where !line.hasPrefix("#") {
      let fields = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
      if fields.count == 6 { hashes[fields[2]] = fields[5] }
    }
    return hashes
  }

  /// Four seconds of open GOPs (30 frames each) in `directory`, read back as records.
  static func openGOPDump(in directory: URL) throws -> [DumpItems.Item] {
    let dump = directory.appending(path: "open-gop.dump").path
    let result = try CommandRunner.run(
      "sh",
      [
        "-c", #"exec "$0" "$@" > "$DUMP""#, CommandRunner.encoder, "testsrc", "--codec", "hevc",
        "--size", "640x360", "--bframes", "3", "--gop", "30", "--duration", "4", "--no-mic",
      ].map { $0.replacingOccurrences(of: "$DUMP", with: dump) }, timeout: 180)
    #expect(result.status == 0, "\(result.stderr)")
    return try DumpItems.read(dump)
  }

  /// Replays `intact` to `intact.ts` and `items` (the same with one sample made corrupt) to
  /// `corrupt.ts` in `directory`, and checks the second run's summary: one invalid record, and
  /// `awaiting` video frames dropped while waiting for a keyframe.
  static func replayIntactAndCorrupt(
    _ intact: String, _ items: [DumpItems.Item], awaiting: Int, in directory: URL,
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws -> (reference: String, output: String) {
    let dump = directory.appending(path: "corrupt.dump").path
    try DumpItems.write(items, to: dump)
    let reference = directory.appending(path: "intact.ts").path
    let output = directory.appending(path: "corrupt.ts").path
    let replayed = try CommandRunner.ingest(["replay", intact, "--to", reference, "--speed", "max"])
    #expect(replayed.status == 0, "\(replayed.stderr)", sourceLocation: sourceLocation)
    let result = try CommandRunner.ingest([
      "replay", dump, "--to", output, "--speed", "max", "--json", "--quiet",
    ])
    #expect(result.status == 0, "\(result.stderr)", sourceLocation: sourceLocation)
    #expect(
      result.stdout.contains("\"invalid_records\":1"), "\(result.stdout)",
      sourceLocation: sourceLocation)
    #expect(
      result.stdout.contains("\"video\":{\"awaitingKeyframe\":\(awaiting)}"),
      "\(result.stdout)", sourceLocation: sourceLocation)
    return (reference, output)
  }

  @Test func aCorruptSampleMidGOPDropsTheNextCRAsRASLPicturesAndTheDecodeIsClean() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    var items = try Self.openGOPDump(in: directory)
    let video = items.indices.filter { items[$0].sample?.kind == .video }
    let types = video.map { Self.nalType(items[$0].sample!) }
    // Open GOPs indeed: CRA pictures (after the IDR), each followed by RASL pictures.
    let cras = types.indices.filter { types[$0] == 21 }
    #expect(cras.count >= 2, "\(types)")
    guard cras.count >= 2 else { return }
    let rasl = (cras[1] + 1..<types.count).prefix { types[$0] == 8 || types[$0] == 9 }.count
    #expect(rasl > 0, "\(types)")
    // The 11th picture of the second GOP: its NAL length runs past the end of the sample.
    let corrupt = cras[0] + 10
    var sample = items[video[corrupt]].sample!
    sample.payload = [0, 0, 0, 0xFF, 0x02, 0x01]
    items[video[corrupt]] = .rawSample(sample)
    // The rest of the GOP references the lost picture; the next CRA's RASL pictures reference
    // that rest.
    let awaiting = cras[1] - corrupt - 1 + rasl
    let (reference, output) = try Self.replayIntactAndCorrupt(
      directory.appending(path: "open-gop.dump").path, items, awaiting: awaiting, in: directory)
    #expect(try HEVCReplayTests.videoStream(output) == "hevc 640x360")
    let ffmpeg = try CommandRunner.decodeErrors(output)
    let gstreamer = try GStreamerDecode.decode(output, codec: "hevc")
    let expected = try Self.pictureHashes(reference)
    let wrong = try Self.pictureHashes(output).filter { expected[$0.key] != $0.value }
    print(
      "open GOP, corrupt sample: ffmpeg error lines \(ffmpeg.split(separator: "\n").count),"
        + " GStreamer problems \(gstreamer.problems.count), pictures \(gstreamer.frames),"
        + " pictures unlike the undamaged stream's \(wrong.count)")
    #expect(wrong.isEmpty, "pictures at PTS \(wrong.keys.sorted())")
    #expect(ffmpeg == "")
    #expect(gstreamer.problems == [])
    #expect(gstreamer.frames == types.count - 1 - awaiting)
  }
}
