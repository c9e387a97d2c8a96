import Foundation
import IngestTestSupport
import Testing

/// `--to rec.mp4`: the fixtures recorded as fragmented MP4 and read by independent readers
/// (ffprobe, ffmpeg, GStreamer's qtdemux, mediainfo, and MP4Box where gpac is installed); a
/// recording killed with SIGKILL and recovered; a rotation refused.
@Suite struct MP4RecordingTests {
  /// Fixture, video codec, GStreamer codec name, video pictures in it.
  static let fixtures = [("screen.dump", "h264", 300), ("screen-hevc.dump", "hevc", 300)]

  /// Replays `fixture` into `name` in a fresh directory; returns the directory and the path.
  static func record(_ fixture: String, name: String = "rec.mp4", extra: [String] = []) throws
    -> (URL, String)
  {
    let directory = try CommandRunner.temporaryDirectory()
    let output = directory.appending(path: name).path
    let result = try CommandRunner.ingest(
      ["replay", CommandRunner.fixture(fixture), "--to", output, "--speed", "max", "--quiet"]
        + extra)
    #expect(result.status == 0, "\(result.stderr)")
    return (directory, output)
  }

  /// ffprobe's `start_time` and `duration` per stream, in index order, and the format's
  /// duration.
  static func times(_ path: String) throws -> (streams: [(Double, Double)], format: Double) {
    let result = try CommandRunner.run(
      "ffprobe",
      [
        "-v", "error", "-show_entries", "stream=index,start_time,duration:format=duration", "-of",
        "compact=p=0:nk=1", path,
      ])
    // A transport stream lists its streams twice (in its program and on their own).
    var byIndex: [Int: (Double, Double)] = [:]
    var format = 0.0
    for line in result.stdout.split(separator: "\n") {
      let fields = line.split(separator: "|")
      if fields.count == 3, let index = Int(fields[0]) {
        byIndex[index] = (Double(fields[1]) ?? -1, Double(fields[2]) ?? -1)
      }
      if fields.count == 1 { format = Double(fields[0]) ?? 0 }
    }
    return (byIndex.keys.sorted().compactMap { byIndex[$0] }, format)
  }

  /// GStreamer's qtdemux decoding the video and every audio track at `GST_DEBUG=2`: the WARN
  /// and ERROR lines, and the pictures that reached the video sink. A queue in front of
  /// qtdemux makes it read in push mode, as from a network: in pull mode GStreamer 1.22's
  /// filesrc warns "pad not activated yet" for any file. With `playlist`, `path` is an fMP4 HLS
  /// playlist that hlsdemux reads, handing qtdemux the initialization section and segments.
  static func qtdemux(_ path: String, codec: String, audioTracks: Int, playlist: Bool = false)
    throws -> (frames: Int, problems: [String])
  {
    let (parser, decoder) =
      codec == "hevc" ? ("h265parse", "avdec_h265") : ("h264parse", "avdec_h264")
    let queue = ["queue", "max-size-buffers=0", "max-size-bytes=0", "max-size-time=0"]
    var arguments = [
      "GST_DEBUG=2", "GST_DEBUG_NO_COLOR=1", "gst-launch-1.0", "-v", "filesrc",
      "location=\(path)", "!", "queue", "!",
    ]
    if playlist { arguments += ["hlsdemux", "!", "queue", "!"] }
    arguments += ["qtdemux", "name=d", "d.video_0", "!"]
    arguments += queue + ["!", parser, "!", decoder, "!", "fakesink", "name=v", "silent=false"]
    for track in 0..<audioTracks {
      arguments +=
        ["d.audio_\(track)", "!"] + queue
        + ["!", "aacparse", "!", "avdec_aac", "!", "fakesink", "name=a\(track)"]
    }
    let result = try CommandRunner.run("env", arguments, timeout: 60)
    let frames = result.stdout.split(separator: "\n").filter {
      $0.contains("/GstFakeSink:v:") && $0.contains("chain   ")
    }.count
    var problems = result.stderr.split(separator: "\n").map(String.init).filter {
      $0.contains(" WARN ") || $0.contains(" ERROR ")
    }
    if result.status != 0 || result.timedOut { problems.append("exit \(result.status)") }
    return (frames, problems)
  }

  @Test(arguments: fixtures) func recordingReadsCleanlyInEveryReader(
    fixture: String, codec: String, frames: Int
  ) throws {
    let (directory, output) = try Self.record(fixture)
    defer { try? FileManager.default.removeItem(at: directory) }
    // The three streams stay three tracks.
    #expect(try CommandRunner.streams(output) == [codec, "aac,48000,2", "aac,44100,1"])
    let times = try Self.times(output)
    #expect(times.streams.count == 3)
    #expect(abs(times.format - 10) < 0.2, "\(times)")
    for (start, duration) in times.streams {
      #expect(start >= 0 && start < 0.2, "\(times)")
      #expect(abs(duration - 10) < 0.2, "\(times)")
    }
    #expect(try CommandRunner.decodeErrors(output) == "")
    let gstreamer = try Self.qtdemux(output, codec: codec, audioTracks: 2)
    #expect(gstreamer.problems == [])
    #expect(gstreamer.frames == frames)

    try Self.expectBoxReadersAccept(output, codec: codec)
  }

  /// mediainfo finds the video codec and the `audioTracks` AAC tracks of `path`; MP4Box reads
  /// every box where it is installed (gpac is not packaged for Debian 12).
  static func expectBoxReadersAccept(_ path: String, codec: String, audioTracks: Int = 2) throws {
    if CommandRunner.has("mediainfo") {
      let info = try CommandRunner.run("mediainfo", [path])
      #expect(info.status == 0)
      #expect(info.stdout.contains(codec == "hevc" ? "HEVC" : "AVC"), "\(info.stdout)")
      let formats = info.stdout.split(separator: "\n").filter { $0.hasPrefix("Format ") }
      #expect(formats.filter { $0.contains(": AAC") }.count == audioTracks, "\(info.stdout)")
    } else {
      TestEnvironment.unavailable("mediainfo is not installed (Scripts/lib/deps.sh installs it)")
    }
    if CommandRunner.has("MP4Box") {
      let info = try CommandRunner.run("MP4Box", ["-info", path])
      #expect(info.status == 0, "\(info.stderr)")
      #expect(!info.stderr.lowercased().contains("error"), "\(info.stderr)")
    }
  }

  /// Audio and video keep the offset they have in the transport stream written from the same
  /// dump: the tracks share one timeline, so the audio starts where it does there, or one AAC
  /// frame later.
  @Test func audioAndVideoKeepTheirOffset() throws {
    let (directory, output) = try Self.record("screen.dump")
    defer { try? FileManager.default.removeItem(at: directory) }
    let ts = directory.appending(path: "ref.ts").path
    let reference = try CommandRunner.ingest([
      "replay", CommandRunner.fixture("screen.dump"), "--to", ts, "--speed", "max", "--quiet",
    ])
    #expect(reference.status == 0)
    let mp4 = try Self.times(output).streams
    let transport = try Self.times(ts).streams
    try #require(mp4.count == 3 && transport.count == 3)
    for audio in 1...2 {
      let recorded = mp4[audio].0 - mp4[0].0
      let expected = transport[audio].0 - transport[0].0
      // The frame in front of the first keyframe is not recorded, so the track may start one
      // frame later; its frames keep their places to within a millisecond.
      let frame = 1024.0 / (audio == 1 ? 48_000 : 44_100)
      let frames = (recorded - expected) / frame
      #expect((0...1).contains(frames.rounded()), "track \(audio): \(mp4) \(transport)")
      #expect(abs(frames - frames.rounded()) * frame < 0.001, "track \(audio): \(frames)")
    }
  }

  /// Counts the video samples of the whole fragments: the trun sample counts of track 1.
  static func videoSamples(_ path: String) throws -> Int {
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    func u32(_ at: Int) -> Int {
      Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
    }
    func children(_ range: Range<Int>) -> [(String, Range<Int>)] {
      var result: [(String, Range<Int>)] = []
      var offset = range.lowerBound
      while offset + 8 <= range.upperBound {
        let size = u32(offset)
        guard size >= 8, offset + size <= range.upperBound else { break }
        result.append(
          (
            String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self),
            offset + 8..<offset + size
          ))
        offset += size
      }
      return result
    }
    var samples = 0
    for (type, moof) in children(0..<bytes.count) where type == "moof" {
      for (type, traf) in children(moof) where type == "traf" {
        let boxes = children(traf)
        guard let tfhd = boxes.first(where: { $0.0 == "tfhd" }), u32(tfhd.1.lowerBound + 4) == 1,
          let trun = boxes.first(where: { $0.0 == "trun" })
        else { continue }
        samples += u32(trun.1.lowerBound + 4)
      }
    }
    return samples
  }

  @Test func killedRecordingRecoversToItsLastWholeFragment() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let output = directory.appending(path: "rec.mp4").path
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CommandRunner.ingest)
    process.arguments = [
      "replay", CommandRunner.fixture("screen.dump"), "--to", output, "--speed", "2", "--quiet",
    ]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    // Two GOPs written (2 s each at twice real time), then a kill in the middle of the third.
    usleep(2_500_000)
    #expect(process.isRunning)
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    let killedSize = try FileManager.default.attributesOfItem(atPath: output)[.size] as? Int ?? 0

    let recover = try CommandRunner.ingest(["recover", output, "--json"])
    #expect(recover.status == 0, "\(recover.stderr)")
    let report = try #require(
      try JSONSerialization.jsonObject(with: Data(recover.stdout.utf8)) as? [String: Any])
    let kept = try #require(report["kept_bytes"] as? Int)
    let fragments = try #require(report["fragments"] as? Int)
    #expect(report["file_bytes"] as? Int == killedSize)
    #expect(fragments >= 1)
    let recoveredSize = try FileManager.default.attributesOfItem(atPath: output)[.size] as? Int
    #expect(recoveredSize == kept)

    // It plays to its last whole fragment: every video sample those fragments hold decodes.
    #expect(try CommandRunner.decodeErrors(output) == "")
    let samples = try Self.videoSamples(output)
    #expect(samples == fragments * 60, "a fragment per 2 s GOP at 30 fps")
    let counted = try CommandRunner.run(
      "ffprobe",
      [
        "-v", "error", "-select_streams", "v:0", "-count_frames", "-show_entries",
        "stream=nb_read_frames", "-of", "csv=p=0", output,
      ])
    #expect(Int(counted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) == samples)
    let gstreamer = try Self.qtdemux(output, codec: "h264", audioTracks: 2)
    #expect(gstreamer.problems == [])
    #expect(gstreamer.frames == samples)

    // A second recovery finds the file whole.
    let again = try CommandRunner.ingest(["recover", output, "--json"])
    #expect(again.stdout.contains("\"was_finished\":true"), "\(again.stdout)")
  }

  /// Ten kills, each once the file reached another size between its first whole fragment and
  /// its fourth (the fifth is written only when the run ends), so some land between fragments
  /// and some in the middle of a fragment's writes: each recovered file decodes cleanly and
  /// holds only whole fragments.
  @Test func killedAtTenPointsEachRecoveryDecodesCleanly() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    // The whole recording's fragment ends, from a run that is not killed.
    let (reference, whole) = try Self.record("screen.dump")
    defer { try? FileManager.default.removeItem(at: reference) }
    let ends = try Self.fragmentEnds(whole)
    try #require(ends.count == 5, "\(ends)")
    let first = ends[0]
    let last = ends[3]
    for point in 0..<10 {
      let output = directory.appending(path: "rec\(point).mp4")
      let threshold = first + (last - first) * point / 9
      let run = try SignalledIngest(
        [
          "replay", CommandRunner.fixture("screen.dump"), "--to", output.path, "--speed", "4",
          "--quiet",
        ], in: directory)
      try LoopbackServers.waitUntil("\(threshold) bytes in \(output.lastPathComponent)") {
        LoopbackServers.size(of: output) >= threshold
      }
      run.send(SIGKILL)
      #expect(run.wait() != 0, "point \(point): the run ended before the kill")
      let recover = try CommandRunner.ingest(["recover", output.path, "--json"])
      #expect(recover.status == 0, "point \(point): \(recover.stderr)")
      let kept = LoopbackServers.size(of: output)
      #expect(ends.contains(kept), "point \(point): \(kept) bytes is no fragment's end")
      #expect(try CommandRunner.decodeErrors(output.path) == "", "point \(point)")
    }
  }

  /// Where each top-level `mdat` ends: the file's size after each whole fragment.
  static func fragmentEnds(_ path: String) throws -> [Int] {
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    var ends: [Int] = []
    var offset = 0
    while offset + 8 <= bytes.count {
      let size =
        Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8
        | Int(bytes[offset + 3])
      guard size >= 8 else { break }
      offset += size
      if bytes[offset - size + 4..<offset - size + 8].elementsEqual("mdat".utf8) {
        ends.append(offset)
      }
    }
    return ends
  }

  @Test func quickTimeMovieReadsCleanly() throws {
    let (directory, output) = try Self.record("screen.dump", name: "rec.mov")
    defer { try? FileManager.default.removeItem(at: directory) }
    #expect(try CommandRunner.streams(output) == ["h264", "aac,48000,2", "aac,44100,1"])
    #expect(try CommandRunner.decodeErrors(output) == "")
  }

  /// A rotation mid-run ends a single .mp4 with a message saying why; the file holds the
  /// recording up to the change, whole.
  @Test func rotationIsRefusedAndTheFileEndsWhole() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let dump = directory.appending(path: "rotated.dump").path
    try DumpItems.write(try ConformanceCaseTests.rotated(), to: dump)
    let output = directory.appending(path: "rec.mp4").path
    let result = try CommandRunner.ingest([
      "replay", dump, "--to", output, "--speed", "max", "--quiet",
    ])
    #expect(result.status == 1)
    #expect(result.stderr.contains("video format changed mid-run"), "\(result.stderr)")
    #expect(try CommandRunner.decodeErrors(output) == "")
    let recovered = try CommandRunner.ingest(["recover", output, "--json"])
    #expect(recovered.stdout.contains("\"was_finished\":true"), "\(recovered.stdout)")
    let duration = try Self.times(output).format
    #expect(abs(duration - 2) < 0.2, "the first 2 s, before the rotation: \(duration)")
  }

  @Test func anOutputThatIsTheInputIsRefused() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let dump = directory.appending(path: "in.dump").path
    try FileManager.default.copyItem(atPath: CommandRunner.fixture("screen.dump"), toPath: dump)
    let link = directory.appending(path: "rec.mp4").path
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: dump)
    let result = try CommandRunner.ingest(["replay", dump, "--to", link, "--speed", "max"])
    #expect(result.status == 2)
    #expect(result.stderr.contains("would be overwritten"), "\(result.stderr)")
    #expect(
      FileManager.default.contentsEqual(
        atPath: dump, andPath: CommandRunner.fixture("screen.dump")))
  }
}
