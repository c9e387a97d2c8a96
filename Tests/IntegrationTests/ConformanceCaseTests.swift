import Foundation
import IngestCore
import IngestTestSupport
import Testing

/// What real devices send, derived from the fixtures with the dump writer and replayed to a .ts
/// file: each output must decode with zero ffmpeg errors and zero GStreamer warnings and keep
/// the rules of `TransportStreamCheck.conformanceViolations`.
@Suite struct ConformanceCaseTests {
  /// A replayed case: the summary and the stream.
  struct Replay {
    var result: CommandRunner.Result
    var check: TransportStreamCheck
    var output: String

    /// PTS of each PES on a PID.
    func pts(_ pid: UInt16) -> [Int64] { check.units.filter { $0.pid == pid }.compactMap(\.pts) }
  }

  /// Writes `items` as a dump in `directory`, replays it to a .ts file (or, `overSRT`, to an
  /// SRT listener that writes what it receives to one) and checks the stream.
  /// - Parameter gstreamerWarnings: warnings GStreamer is expected to print once each (the
  ///   test says why); any other warning or error fails the case.
  static func replay(
    _ items: [DumpItems.Item], named name: String, in directory: URL,
    arguments: [String] = [], gstreamerWarnings: [String] = [], overSRT: Bool = false
  ) throws -> Replay {
    let dump = directory.appending(path: "\(name).dump").path
    try DumpItems.write(items, to: dump)
    let result: CommandRunner.Result
    let output: String
    if overSRT {
      let push = try SRTPush.replay(
        dump, named: name, in: directory, arguments: ["--json", "--quiet"] + arguments)
      (result, output) = (push.run, push.received)
    } else {
      output = directory.appending(path: "\(name).ts").path
      result = try CommandRunner.ingest(
        ["replay", dump, "--to", output, "--speed", "max", "--json", "--quiet"] + arguments)
    }
    let check = try TransportStreamCheck(path: output)
    let parameterSets = try TransportStreamCheck.parameterSets(ofDump: dump)
    #expect(try CommandRunner.decodeErrors(output) == "", "\(name)")
    #expect(
      check.conformanceViolations(parameterSets: parameterSets).map(\.description) == [],
      "\(name)")
    let problems = try Self.gstreamerProblems(output, check: check)
    #expect(
      problems.filter { line in !gstreamerWarnings.contains { line.contains($0) } } == [],
      "\(name)")
    for warning in gstreamerWarnings {
      #expect(problems.filter { $0.contains(warning) }.count == 1, "\(name): \(warning)")
    }
    #expect(check.continuityErrors == 0)
    return Replay(result: result, check: check, output: output)
  }

  /// GStreamer's warnings and errors for the stream at `path`, one per line.
  static func gstreamerProblems(_ path: String, check: TransportStreamCheck) throws -> [String] {
    try CommandRunner.gstreamerDecodeProblems(path, pids: check.elementaryPIDs)
      .split(separator: "\n").map(String.init)
  }

  static func screen() throws -> [DumpItems.Item] {
    try DumpItems.read(CommandRunner.fixture("screen.dump"))
  }

  /// Indices in `items` of the samples of one kind.
  static func indices(of kind: SampleKind, in items: [DumpItems.Item]) -> [Int] {
    items.indices.filter { items[$0].sample?.kind == kind }
  }

  @Test func audioTimestampGlitchesLeaveNoLastingShift() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let original = try Self.screen()
    var items = original
    let mic = Self.indices(of: .audioMic, in: items)
    func retime(_ position: Int, _ change: (MediaTime) -> MediaTime) {
      guard case .sample(var sample) = items[mic[position]] else { return }
      sample.pts = change(original[mic[position - 1]].sample!.pts)
      items[mic[position]] = .sample(sample)
    }
    // Two repeated timestamps and one 3 ms before the previous frame's.
    retime(100) { $0 }
    retime(200) { $0 }
    retime(150) { MediaTime(value: $0.value - 3_000_000, timescale: $0.timescale) }
    let reference = try Self.replay(original, named: "reference", in: directory)
    let glitched = try Self.replay(items, named: "glitched", in: directory)
    #expect(glitched.result.status == 0)
    #expect(glitched.result.stdout.contains("\"clock_resets\":0"))
    let (expected, actual) = (reference.pts(0x102), glitched.pts(0x102))
    #expect(expected.count == actual.count)
    // Every mic frame, the glitched ones included, at its own time (within a tick).
    #expect(zip(expected, actual).allSatisfy { abs($0 - $1) <= 1 })
  }

  /// The app stops playing for 3 s (its audio track has nothing from 3 s to 6 s) while the
  /// video goes on: a gap on a continuous clock, not a reset. App audio after it keeps its
  /// place against the video, and an HLS recording of it has no discontinuity.
  @Test func anAudioPauseIsAGapNotAClockReset() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let original = try Self.screen()
    let app = Self.indices(of: .audioApp, in: original)
    let start = original[app[0]].sample!.pts
    func seconds(_ index: Int) -> Double {
      let pts = original[index].sample!.pts
      return Double(pts.value) / Double(pts.timescale) - Double(start.value)
        / Double(start.timescale)
    }
    let silent = Set(app.filter { (3.0..<6.0).contains(seconds($0)) })
    #expect(silent.count > 100)
    let items = original.indices.filter { !silent.contains($0) }.map { original[$0] }
    let reference = try Self.replay(original, named: "reference", in: directory)
    let paused = try Self.replay(items, named: "paused", in: directory)
    #expect(paused.result.status == 0, "\(paused.result.stderr)")
    #expect(paused.result.stdout.contains("\"clock_resets\":0"), "\(paused.result.stdout)")
    // Every app frame that is left at its own time.
    let kept = Set(
      reference.pts(0x101).enumerated().filter { index, _ in
        !silent.contains(app[index])
      }.map(\.element))
    #expect(Set(paused.pts(0x101)) == kept)

    let recording = directory.appending(path: "hls").path
    let hls = try CommandRunner.ingest([
      "replay", directory.appending(path: "paused.dump").path, "--to", "hls:\(recording)",
      "--speed", "max", "--quiet",
    ])
    #expect(hls.status == 0, "\(hls.stderr)")
    let playlist = try String(contentsOfFile: recording + "/index.m3u8", encoding: .utf8)
    #expect(!playlist.contains("#EXT-X-DISCONTINUITY"), "\(playlist)")
  }

  @Test(arguments: ["one tick per second", "a second per frame"])
  func unusableMicClockMovesNoOtherTrack(clock: String) throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let original = try Self.screen()
    var items = original
    for (frame, index) in Self.indices(of: .audioMic, in: items).enumerated() {
      guard case .sample(var sample) = items[index] else { continue }
      sample.pts =
        clock == "one tick per second"
        ? MediaTime(value: sample.pts.value / 1_000_000_000, timescale: 1)
        : MediaTime(value: 352_417 + Int64(frame), timescale: 1)
      items[index] = .sample(sample)
    }
    let reference = try Self.replay(original, named: "reference", in: directory)
    let broken = try Self.replay(items, named: "broken", in: directory)
    #expect(broken.result.status == 0)
    #expect(broken.result.stdout.contains("\"clock_resets\":0"))
    // App audio keeps its place against the video, whatever the mic's clock does.
    func offsets(_ replay: Replay) -> [Int64] {
      let video = replay.pts(0x100).first ?? 0
      return replay.pts(0x101).map { $0 - video }
    }
    #expect(offsets(broken) == offsets(reference))
  }

  /// The status lines of a run that wrote them to `status`.
  static func statusLines(_ status: String) throws -> [String] {
    try String(contentsOfFile: status, encoding: .utf8).split(separator: "\n").map(String.init)
  }

  @Test func videoBeforeTheFirstKeyframeIsDroppedAndAKeyframeRequested() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    var items = try Self.screen()
    // The capture starts 25 frames into the first GOP: the first 35 frames are P-frames.
    let video = Self.indices(of: .video, in: items)
    items = items.indices.filter { !video.prefix(25).contains($0) }.map { items[$0] }
    let status = directory.appending(path: "status.jsonl").path
    let replay = try Self.replay(
      items, named: "leading-p", in: directory, arguments: ["--status", status])
    #expect(replay.result.status == 0)
    #expect(replay.result.stdout.contains("\"video\":{\"awaitingKeyframe\":35}"))
    #expect(try Self.statusLines(status).contains { $0.contains("\"request\":\"keyframe\"") })
  }

  @Test func aCorruptVideoSampleDropsTheRestOfItsGOP() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    var items = try Self.screen()
    // The 11th frame of the first GOP: its NAL length runs past the end of the sample.
    let corrupt = Self.indices(of: .video, in: items)[10]
    var sample = items[corrupt].sample!
    sample.payload = [0, 0, 0, 0xFF, 0x41, 0x9A]
    items[corrupt] = .rawSample(sample)
    let status = directory.appending(path: "status.jsonl").path
    let replay = try Self.replay(
      items, named: "corrupt-p", in: directory, arguments: ["--status", status])
    #expect(replay.result.status == 0)
    #expect(replay.result.stdout.contains("\"invalid_records\":1"))
    // Frames 12 to 60 of the GOP (2 s at 30 fps) reference the lost one.
    #expect(replay.result.stdout.contains("\"video\":{\"awaitingKeyframe\":49}"))
    #expect(replay.pts(0x100).count == 300 - 50)
    #expect(try Self.statusLines(status).contains { $0.contains("\"request\":\"keyframe\"") })
  }

  /// screen.dump with its second GOP replaced by landscape.dump's (1280x720) after a new format
  /// record, and the portrait format back at the third: a device rotating and back.
  static func rotated() throws -> [DumpItems.Item] {
    let screen = try Self.screen()
    let landscape = try DumpItems.read(CommandRunner.fixture("landscape.dump"))
    guard
      case .format(_, let portraitFormat)? = screen.first(where: {
        if case .format(.video, _) = $0 { true } else { false }
      }),
      case .format(_, let landscapeFormat)? = landscape.first(where: {
        if case .format(.video, _) = $0 { true } else { false }
      })
    else { throw CocoaError(.fileReadCorruptFile) }
    let landscapeFrames = landscape.compactMap(\.sample)
    var items: [DumpItems.Item] = []
    var frame = 0
    for item in screen {
      guard case .sample(let sample) = item, sample.kind == .video else {
        items.append(item)
        continue
      }
      if frame == 60 { items.append(.format(.video, landscapeFormat)) }
      if frame == 120 { items.append(.format(.video, portraitFormat)) }
      if (60..<120).contains(frame) {
        var replaced = landscapeFrames[frame - 60]
        (replaced.pts, replaced.dts) = (sample.pts, sample.dts)
        items.append(.sample(replaced))
      } else {
        items.append(item)
      }
      frame += 1
    }
    return items
  }

  @Test func formatChangeMidStreamCarriesTheNewParameterSets() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let status = directory.appending(path: "status.jsonl").path
    // The checker holds every IDR to the format record in force: portrait, landscape, portrait.
    let replay = try Self.replay(
      try Self.rotated(), named: "rotated", in: directory, arguments: ["--status", status])
    #expect(replay.result.status == 0)
    #expect(replay.result.stdout.contains("\"drops\":{}"))
    let changes = try Self.statusLines(status).filter { $0.contains("\"formatChanged\"") }
    #expect(changes.count == 2)
    #expect(changes.allSatisfy { $0.contains("\"kind\":\"video\"") })
  }

  @Test func formatChangeMidStreamStartsAnHLSDiscontinuity() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let dump = directory.appending(path: "rotated.dump").path
    try DumpItems.write(try Self.rotated(), to: dump)
    let hls = directory.appending(path: "hls").path
    let result = try CommandRunner.ingest([
      "replay", dump, "--to", "hls:\(hls)", "--speed", "max", "--quiet", "--hls-window", "0",
    ])
    #expect(result.status == 0, "\(result.stderr)")
    let playlist = try String(contentsOfFile: "\(hls)/index.m3u8", encoding: .utf8)
    let lines = playlist.split(separator: "\n")
    #expect(lines.filter { $0 == "#EXT-X-DISCONTINUITY" }.count == 2)
    #expect(try CommandRunner.decodeErrors("\(hls)/index.m3u8") == "")
  }

  @Test(arguments: ["header only", "format records only"])
  func emptyDumpSucceedsAndWritesNoOutput(content: String) throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let formats = try Self.screen().filter {
      if case .format = $0 { true } else { false }
    }
    let dump = directory.appending(path: "empty.dump").path
    try DumpItems.write(content == "header only" ? [] : formats, to: dump)
    for target in ["out.ts", "null:", "hls:hls"] {
      let output = target.hasSuffix(".ts") ? directory.appending(path: target).path : target
      let path = target.hasPrefix("hls:") ? "hls:" + directory.appending(path: "hls").path : output
      let result = try CommandRunner.ingest([
        "replay", dump, "--to", path, "--speed", "max", "--json", "--quiet",
      ])
      #expect(result.status == 0, "\(target): \(result.stderr)")
      #expect(result.stderr.contains("holds no samples"), "\(target)")
      #expect(result.stdout.contains("\"empty\":true"), "\(target)")
    }
    #expect(!FileManager.default.fileExists(atPath: directory.appending(path: "out.ts").path))
    #expect(!FileManager.default.fileExists(atPath: directory.appending(path: "hls").path))
  }

  static let badFormats: [(String, SampleKind, [UInt8], String)] = [
    (
      "AAC object type 5", .audioApp, [0x29, 0x90],
      "HE-AAC (SBR) (object type 5) cannot be carried"
    ),
    ("AAC-ELD", .audioMic, [0xF8, 0xE6, 0x30, 0x00], "AAC-ELD (object type 39) cannot be carried"),
    ("channel configuration 0", .audioApp, [0x11, 0x80], "AAC channel configuration 0"),
    ("sampling index 13", .audioMic, [0x16, 0x88], "AAC sampling frequency 13"),
    ("NAL length size 3", .video, [], "NAL length size 3"),
  ]

  /// screen.dump with the format record of `kind` holding `config` (for video: its own avcC
  /// with a NAL length size of 3).
  static func refusedFormat(_ kind: SampleKind, config: [UInt8]) throws -> [DumpItems.Item] {
    try Self.screen().map { item -> DumpItems.Item in
      // The writer refuses samples of a track without a format: they go as raw records.
      if let sample = item.sample, sample.kind == kind { return .rawSample(sample) }
      guard case .format(kind, let format) = item else { return item }
      var bytes = config
      if case .h264(let h264) = format {
        bytes = h264.avcC
        bytes[4] = 0xFC | 2
      }
      return .raw(type: 1, payload: [kind.rawValue, kind == .video ? 1 : 2] + bytes)
    }
  }

  @Test(arguments: badFormats)
  func aFormatTheWriterCannotCarryIsReported(
    name: String, kind: SampleKind, config: [UInt8], reason: String
  ) throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let items = try Self.refusedFormat(kind, config: config)
    let status = directory.appending(path: "status.jsonl").path
    let replay = try Self.replay(
      items, named: "bad", in: directory, arguments: ["--status", status])
    // The outputs lack a track the producer sent: the run fails, naming it.
    #expect(replay.result.status == 1)
    #expect(replay.result.stderr.contains("the \(kind) track was refused: "), "\(name)")
    #expect(replay.result.stdout.contains("\"refused_formats\":[{\"kind\":\"\(kind)\""), "\(name)")
    #expect(replay.result.stdout.contains(reason), "\(name)")
    #expect(!replay.check.elementaryPIDs.contains(0x100 + UInt16(kind.rawValue)))
    let events = try Self.statusLines(status).filter { $0.contains("\"formatRefused\"") }
    #expect(events.count == 1 && events[0].contains(reason), "\(name)")
    // The text summary and inspect (text and --json) give the same reason.
    let dump = directory.appending(path: "bad.dump").path
    let text = try CommandRunner.ingest([
      "replay", dump, "--to", "null:", "--speed", "max", "--quiet",
    ])
    #expect(text.stderr.contains("refused  \(kind) format record at byte"), "\(name)")
    #expect(text.stderr.contains(reason), "\(name)")
    #expect(try CommandRunner.ingest(["inspect", dump]).stdout.contains(reason))
    #expect(try CommandRunner.ingest(["inspect", dump, "--json"]).stdout.contains(reason))
  }

  /// screen.dump with a 6 s stall after its 150th video frame: nothing arrives for 6 s, then
  /// every track goes on with its clock 6 s later (the capture froze). `first` is the kind of
  /// the first sample after the stall.
  static func stalled(first: SampleKind) throws -> [DumpItems.Item] {
    let screen = try Self.screen()
    let last = Self.indices(of: .video, in: screen)[149]
    guard let cut = screen.indices.first(where: { $0 > last && screen[$0].sample?.kind == first })
    else { throw CocoaError(.fileReadCorruptFile) }
    return screen.indices.map { index in
      guard index >= cut, var sample = screen[index].sample else { return screen[index] }
      func later(_ time: MediaTime) -> MediaTime {
        MediaTime(value: time.value + 6 * Int64(time.timescale), timescale: time.timescale)
      }
      sample.pts = later(sample.pts)
      sample.dts = sample.dts.map(later)
      return .sample(sample)
    }
  }

  /// Whether each audio PID resumed after the stall (at its unit flagged as a discontinuity)
  /// as far from the video as the same units are in `reference` (within one AAC frame: an
  /// audio clock re-anchored at the video's time may move by up to one).
  static func audioResumesWithVideo(_ replay: Replay, reference: Replay) -> Bool {
    func resumed(_ pid: UInt16) -> (index: Int, pts: Int64)? {
      let units = replay.check.units.filter { $0.pid == pid }
      guard let index = units.firstIndex(where: \.discontinuity), let pts = units[index].pts
      else { return nil }
      return (index, pts)
    }
    guard let video = resumed(0x100) else { return false }
    let expected = reference.pts(0x100)[video.index]
    return [UInt16(0x101), 0x102].allSatisfy { pid in
      guard let audio = resumed(pid) else { return false }
      let distance = audio.pts - video.pts
      return abs(distance - (reference.pts(pid)[audio.index] - expected)) <= 1_920
    }
  }

  /// GStreamer's MPEG-TS packetizer warns "GAP detected" whenever a PCR is more than 500 ms past
  /// the last one, whether or not the packet carries the discontinuity_indicator (it tracks PCR
  /// groups by value alone). The stall is a genuine 6 s gap in the media, which any stream of
  /// this input carries: ffmpeg's own mpegts muxer, given the same streams, draws the same
  /// single warning. Bridging the gap with PCR-only packets instead would put 6 s of PCR into
  /// one burst, which a live receiver's clock recovery takes as 6 s of jitter.
  static let stallWarning = "GAP detected. diff 0:00:06"

  @Test func aStallIsATimeBaseDiscontinuityAndKeepsItsGap() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let replay = try Self.replay(
      try Self.stalled(first: .video), named: "stalled", in: directory,
      gstreamerWarnings: [Self.stallWarning])
    #expect(replay.result.status == 0)
    #expect(replay.result.stdout.contains("\"drops\":{}"))
    // The PCR jumps once, flagged; every PID's first unit after it is flagged too.
    let pcrs = replay.check.pcrs
    let jumps = zip(pcrs, pcrs.dropFirst()).filter { $1.pcr - $0.pcr > 90_000 }
    #expect(jumps.count == 1 && jumps.allSatisfy { $1.discontinuity })
    for pid in replay.check.elementaryPIDs {
      #expect(replay.check.units.filter { $0.pid == pid && $0.discontinuity }.count == 1)
    }
    // The gap stays in the timestamps (6 s plus one frame), and audio resumes with the video.
    let video = replay.pts(0x100)
    let step = zip(video, video.dropFirst()).map { $1 - $0 }.max() ?? 0
    #expect(abs(step - (6 * 90_000 + 3_000)) <= 1)
    let reference = try Self.replay(try Self.screen(), named: "reference", in: directory)
    #expect(Self.audioResumesWithVideo(replay, reference: reference))
    // ffmpeg's mpegts muxer, remuxing the same streams, gets the same warning from GStreamer.
    let remuxed = directory.appending(path: "ffmpeg.ts").path
    let remux = try CommandRunner.run(
      "ffmpeg",
      [
        "-nostdin", "-v", "error", "-i", replay.output, "-map", "0", "-c", "copy", "-f", "mpegts",
        remuxed,
      ])
    #expect(remux.status == 0, "\(remux.stderr)")
    let theirs = try Self.gstreamerProblems(remuxed, check: try TransportStreamCheck(path: remuxed))
    #expect(theirs.count == 1 && theirs.allSatisfy { $0.contains(Self.stallWarning) }, "\(theirs)")
  }

  /// The same stall with app audio first after it: the audio clock's jump looks like an
  /// interruption and is pulled back to the video's last frame; the video, 6 s on as well, is
  /// pulled back with it. The gap is gone (so GStreamer has none to warn about), the tracks
  /// stay in sync.
  @Test func aStallWithAudioFirstKeepsTheTracksInSync() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let replay = try Self.replay(
      try Self.stalled(first: .audioApp), named: "stalled", in: directory)
    #expect(replay.result.status == 0)
    #expect(replay.result.stdout.contains("\"clock_resets\":3"))
    for pid in replay.check.elementaryPIDs {
      #expect(replay.check.units.filter { $0.pid == pid && $0.discontinuity }.count == 1)
    }
    let video = replay.pts(0x100)
    #expect(zip(video, video.dropFirst()).allSatisfy { $1 - $0 < 90_000 })
    let reference = try Self.replay(try Self.screen(), named: "reference", in: directory)
    #expect(Self.audioResumesWithVideo(replay, reference: reference))
  }

  /// A format record followed by frames that are no keyframe (the producer's first keyframe
  /// lost): inspect names them, and the replay drops exactly as many, awaiting a keyframe.
  @Test func inspectReportsFramesBeforeTheFirstKeyframe() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    var items = try Self.screen()
    let video = Self.indices(of: .video, in: items)
    let keyframes = video.filter { items[$0].sample?.isKeyframe == true }
    try #require(keyframes.count >= 2 && keyframes[0] == video[0])
    let dropped = video.filter { $0 < keyframes[1] }.count - 1
    items.remove(at: keyframes[0])
    let dump = directory.appending(path: "headless.dump").path
    try DumpItems.write(items, to: dump)
    let inspect = try CommandRunner.ingest(["inspect", dump])
    #expect(inspect.status == 0)
    #expect(
      inspect.stdout.contains(
        "video: \(dropped) frames follow a format record before any keyframe (1 record(s), "
          + "the first such frame is sample 0)"), "\(inspect.stdout)")
    #expect(!inspect.stdout.contains("anomalies none"))
    let json = try CommandRunner.ingest(["inspect", dump, "--json"])
    #expect(json.stdout.contains("\"frames_before_keyframe\":\(dropped)"), "\(json.stdout)")
    let replay = try CommandRunner.ingest([
      "replay", dump, "--to", "null:", "--speed", "max", "--json", "--quiet",
    ])
    #expect(
      replay.stdout.contains("\"video\":{\"awaitingKeyframe\":\(dropped)}"), "\(replay.stdout)")
  }

  /// Every keyframe an IDR, but far apart (the fixture's first alone, of one every 2 s): the
  /// long-segment warning blames the interval, not open GOPs.
  @Test func longSegmentsFromFarApartIDRsNameTheInterval() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    var kept = 0
    let items = try Self.screen().map { item -> DumpItems.Item in
      guard var sample = item.sample, sample.kind == .video, sample.isKeyframe else { return item }
      kept += 1
      // The fixture's keyframes are IDRs; keep the first.
      if kept > 1 {
        sample.isKeyframe = false
        return .sample(sample)
      }
      return item
    }
    let dump = directory.appending(path: "sparse.dump").path
    try DumpItems.write(items, to: dump)
    for container in ["ts", "fmp4"] {
      let result = try CommandRunner.ingest([
        "replay", dump, "--to", "hls:\(directory.path)/\(container)?container=\(container)",
        "--segment", "2", "--speed", "max", "--json", "--quiet",
      ])
      #expect(result.status == 0, "\(result.stderr)")
      #expect(
        result.stdout.contains("without a keyframe to cut at: the video's keyframes are more than"),
        "\(container): \(result.stdout)")
      #expect(!result.stdout.contains("open-GOP"), "\(container): \(result.stdout)")
    }
  }
}
