import Foundation
import IngestCore
import IngestTestSupport
import Testing

/// Open H.264 GOPs from `ingest-encode --open-gop --bframes 3` (x264's `--open-gop`: keyframes
/// after the first are recovery-point I pictures, not IDRs, some followed by leading B pictures
/// that reference the GOP before). A decoder can neither resume at one after a loss nor start a
/// segment there without errors ("mmco: unref short failure"), so neither happens: video resumes
/// at an IDR, HLS segments start at IDRs, and a run whose segments cannot be cut says so.
@Suite struct H264OpenGOPTests {
  /// The picture of one video sample: its first slice's NAL type and its presentation time.
  struct Picture {
    var nalType: UInt8
    var pts: MediaTime
    var isKeyframe: Bool
  }

  static func picture(_ sample: MediaSample) -> Picture {
    var offset = 0
    let bytes = sample.payload
    var type: UInt8 = 0
    while offset + 5 <= bytes.count {
      let nal = bytes[offset + 4] & 0x1F
      if (1...5).contains(nal) {
        type = nal
        break
      }
      offset += 4 + bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
    }
    return Picture(nalType: type, pts: sample.pts, isKeyframe: sample.isKeyframe)
  }

  /// Indices (among the video pictures, in decoding order) of the leading pictures: after a
  /// keyframe that is no IDR, shown before it.
  static func leadingPictures(_ pictures: [Picture]) -> [Int] {
    var keyframePTS: MediaTime?
    var leading: [Int] = []
    for (index, picture) in pictures.enumerated() {
      if picture.isKeyframe {
        keyframePTS = picture.nalType == 5 ? nil : picture.pts
      } else if let keyframePTS, Self.seconds(picture.pts) < Self.seconds(keyframePTS) {
        leading.append(index)
      }
    }
    return leading
  }

  static func seconds(_ time: MediaTime) -> Double { Double(time.value) / Double(time.timescale) }

  /// Ten seconds of open GOPs of two seconds each in `directory`: one IDR, then recovery points.
  static func openGOPDump(in directory: URL) throws -> String {
    let dump = directory.appending(path: "open-gop.dump").path
    let result = try CommandRunner.run(
      "sh",
      [
        "-c", #"exec "$0" "$@" > "$DUMP""#, CommandRunner.encoder, "testsrc", "--size", "640x360",
        "--bframes", "3", "--gop", "60", "--open-gop", "--duration", "10", "--no-mic",
      ].map { $0.replacingOccurrences(of: "$DUMP", with: dump) }, timeout: 180)
    #expect(result.status == 0, "\(result.stderr)")
    return dump
  }

  static func pictures(_ items: [DumpItems.Item]) -> [Picture] {
    items.compactMap(\.sample).filter { $0.kind == .video }.map(picture)
  }

  @Test func hlsCutsAtIDRsOnlyAndSaysSoWhenThereAreNone() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let dump = try Self.openGOPDump(in: directory)
    let pictures = Self.pictures(try DumpItems.read(dump))
    // Open GOPs indeed: recovery-point keyframes (type 1) after the IDR, with leading pictures.
    let keyframes = pictures.filter(\.isKeyframe)
    #expect(keyframes.first?.nalType == 5)
    #expect(keyframes.dropFirst().allSatisfy { $0.nalType == 1 } && keyframes.count >= 4)
    #expect(!Self.leadingPictures(pictures).isEmpty)

    let recording = directory.appending(path: "hls").path
    let result = try CommandRunner.ingest([
      "replay", dump, "--to", "hls:\(recording)", "--segment", "2", "--hls-window", "0",
      "--speed", "max", "--json", "--quiet",
    ])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(
      result.stdout.contains("without a keyframe to cut at: the video's keyframes are open-GOP"),
      "\(result.stdout)")
    let playlist = try String(contentsOfFile: recording + "/index.m3u8", encoding: .utf8)
    let segments = playlist.split(separator: "\n").filter { !$0.hasPrefix("#") }
    // No cut at a recovery point: the one IDR starts the one segment, which decodes alone.
    #expect(segments == ["seg00000.ts"], "\(playlist)")
    let path = recording + "/seg00000.ts"
    #expect(try CommandRunner.decodeErrors(path) == "")
    let gstreamer = try GStreamerDecode.decode(path, codec: "h264")
    #expect(gstreamer.problems == [])
    #expect(gstreamer.frames == pictures.count)
  }

  /// fMP4 segments cut where TS segments are: at IDR pictures only.
  @Test func fragmentedMP4SegmentsCutAtIDRsOnly() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let dump = try Self.openGOPDump(in: directory)
    let pictures = Self.pictures(try DumpItems.read(dump))
    let recording = directory.appending(path: "hls")
    let result = try CommandRunner.ingest([
      "replay", dump, "--to", "hls:\(recording.path)?container=fmp4", "--segment", "2",
      "--hls-window", "0", "--speed", "max", "--json", "--quiet",
    ])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(
      result.stdout.contains("without a keyframe to cut at: the video's keyframes are open-GOP"),
      "\(result.stdout)")
    let playlist = try String(
      contentsOf: recording.appending(path: "index.m3u8"), encoding: .utf8)
    let segments = playlist.split(separator: "\n").filter { !$0.hasPrefix("#") }
    #expect(segments == ["seg00000.m4s"], "\(playlist)")
    let alone = try HLSFragmentedMP4IntegrationTests.concatenate(
      recording, map: "init00000.mp4", segments: ["seg00000.m4s"], into: "alone.mp4")
    #expect(try CommandRunner.decodeErrors(alone) == "")
    let gstreamer = try MP4RecordingTests.qtdemux(alone, codec: "h264", audioTracks: 1)
    #expect(gstreamer.problems == [])
    #expect(gstreamer.frames == pictures.count)
  }

  @Test func afterACorruptSampleVideoResumesAtAnIDRNotAtARecoveryPoint() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let intact = try Self.openGOPDump(in: directory)
    var items = try DumpItems.read(intact)
    let video = items.indices.filter { items[$0].sample?.kind == .video }
    let pictures = Self.pictures(items)
    let keyframes = pictures.indices.filter { pictures[$0].isKeyframe }
    guard keyframes.count >= 4 else {
      Issue.record("keyframes at \(keyframes)")
      return
    }
    // The 11th picture of the next-to-last GOP: its NAL length runs past the end of the sample.
    let corrupt = keyframes[keyframes.count - 2] + 10
    var sample = items[video[corrupt]].sample!
    sample.payload = [0, 0, 0, 0xFF, 0x41, 0x9A]
    items[video[corrupt]] = .rawSample(sample)
    // No IDR follows: the rest of the GOP and the last GOP, recovery point included, wait.
    let awaiting = pictures.count - corrupt - 1
    let (reference, output) = try HEVCOpenGOPTests.replayIntactAndCorrupt(
      intact, items, awaiting: awaiting, in: directory)
    #expect(try CommandRunner.decodeErrors(output) == "")
    let gstreamer = try GStreamerDecode.decode(output, codec: "h264")
    #expect(gstreamer.problems == [])
    #expect(gstreamer.frames == corrupt)
    // Every picture sent decodes to what it is in the undamaged stream.
    let expected = try HEVCOpenGOPTests.pictureHashes(reference)
    let wrong = try HEVCOpenGOPTests.pictureHashes(output).filter { expected[$0.key] != $0.value }
    #expect(wrong.isEmpty, "pictures at PTS \(wrong.keys.sorted())")
  }
}
