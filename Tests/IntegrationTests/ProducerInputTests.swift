import Foundation
import IngestCore
import IngestTestSupport
import Testing

/// What independently written producers send, derived from Fixtures/screen.dump with the dump
/// writer: AAC frames with ADTS headers, video in Annex B form, samples above 2 MiB. Each is
/// mended or refused by name, and a run that could not carry its video fails.
@Suite struct ProducerInputTests {
  typealias Case = ConformanceCaseTests

  /// screen.dump with every app-audio frame behind an ADTS header for `format` (the track's
  /// own when nil).
  static func adtsWrapped(format: AACFormat? = nil) throws -> [DumpItems.Item] {
    var items = try Case.screen()
    var appFormat: AACFormat?
    for index in items.indices {
      if case .format(.audioApp, .aac(let aac)) = items[index] { appFormat = aac }
      guard case .sample(var sample) = items[index], sample.kind == .audioApp,
        let header = format ?? appFormat
      else { continue }
      sample.payload =
        try ADTSHeader(format: header, payloadSize: sample.payload.count).bytes
        + sample.payload
      items[index] = .sample(sample)
    }
    return items
  }

  /// screen.dump with every video sample's 4-byte lengths turned into start codes.
  static func annexB() throws -> [DumpItems.Item] {
    var items = try Case.screen()
    for index in Case.indices(of: .video, in: items) {
      var sample = items[index].sample!
      var offset = 0
      while offset + 4 <= sample.payload.count {
        let length = sample.payload[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
        sample.payload.replaceSubrange(offset..<offset + 4, with: [0, 0, 0, 1])
        offset += 4 + length
      }
      items[index] = .rawSample(sample)
    }
    return items
  }

  /// screen.dump with its first IDR grown to `bytes` by a filler-data NAL unit (type 12), as a
  /// 4K encoder's first frame.
  static func largeFirstKeyframe(bytes: Int) throws -> [DumpItems.Item] {
    var items = try Case.screen()
    let first = Case.indices(of: .video, in: items)[0]
    var sample = items[first].sample!
    let filler = bytes - sample.payload.count - 4
    sample.payload += [
      UInt8(filler >> 24 & 0xFF), UInt8(filler >> 16 & 0xFF), UInt8(filler >> 8 & 0xFF),
      UInt8(filler & 0xFF), 0x0C,
    ]
    sample.payload += [UInt8](repeating: 0xFF, count: filler - 2) + [0x80]
    items[first] = .sample(sample)
    return items
  }

  static func inspect(_ dump: String, _ arguments: [String] = []) throws -> String {
    try CommandRunner.ingest(["inspect", dump] + arguments).stdout
  }

  @Test func adtsHeadersAreRemovedOnceAndTheAudioDecodes() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let status = directory.appending(path: "status.jsonl").path
    let reference = try Case.replay(Case.screen(), named: "reference", in: directory)
    let replay = try Case.replay(
      Self.adtsWrapped(), named: "adts", in: directory, arguments: ["--status", status])
    #expect(replay.result.status == 0, "\(replay.result.stderr)")
    #expect(replay.result.stdout.contains("\"ok\":true"))
    #expect(replay.result.stdout.contains("\"adts_removed\":{\"audioApp\":"))
    #expect(replay.result.stdout.contains("samples carry ADTS headers, removed"))
    #expect(replay.pts(0x101) == reference.pts(0x101))
    #expect(try CommandRunner.streams(replay.output).contains("aac,48000,2"))
    let lines = try Case.statusLines(status).filter { $0.contains("\"adtsRemoved\"") }
    #expect(lines.count == 1, "\(lines)")
    let dump = directory.appending(path: "adts.dump").path
    #expect(try Self.inspect(dump).contains("audioApp: 470 samples carry ADTS headers"))
  }

  @Test func anADTSHeaderThatContradictsTheConfigIsRefusedNamingBoth() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let status = directory.appending(path: "status.jsonl").path
    let other = try AACFormat(objectType: 2, sampleRate: 44100, channels: 2)
    let replay = try Case.replay(
      Self.adtsWrapped(format: other), named: "adts-other", in: directory,
      arguments: ["--status", status])
    let message =
      "ADTS header says sampling frequency index 4, the track's AudioSpecificConfig says 3"
    // The app track is left out of the program; video and mic go on and decode.
    #expect(replay.check.elementaryPIDs.sorted() == [0x100, 0x102])
    #expect(try CommandRunner.streams(replay.output) == ["h264", "aac,44100,1"])
    #expect(replay.result.stdout.contains("\"audioApp\":{\"invalid\":470}"))
    #expect(
      replay.result.stdout.contains("audioApp track refused, none of its samples sent: " + message))
    let lines = try Case.statusLines(status).filter { $0.contains("\"trackRefused\"") }
    #expect(lines.count == 1 && lines[0].contains(message), "\(lines)")
    let dump = directory.appending(path: "adts-other.dump").path
    #expect(try Self.inspect(dump).contains(message))
  }

  /// The same contradiction from the middle of the stream on: the track is in the program, so
  /// those samples are refused one by one, the cause named once.
  @Test func aContradictingADTSHeaderMidStreamIsRefusedNamingBoth() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let status = directory.appending(path: "status.jsonl").path
    let other = try AACFormat(objectType: 2, sampleRate: 44100, channels: 2)
    var items = try Case.screen()
    let app = Case.indices(of: .audioApp, in: items)
    for index in app.suffix(from: 235) {
      var sample = items[index].sample!
      sample.payload =
        try ADTSHeader(format: other, payloadSize: sample.payload.count).bytes
        + sample.payload
      items[index] = .sample(sample)
    }
    let replay = try Case.replay(
      items, named: "adts-mid", in: directory, arguments: ["--status", status])
    #expect(replay.result.status == 0, "\(replay.result.stderr)")
    #expect(replay.result.stdout.contains("\"audioApp\":{\"invalid\":235}"))
    #expect(replay.pts(0x101).count == 235)
    let message =
      "ADTS header says sampling frequency index 4, the track's AudioSpecificConfig says 3"
    let lines = try Case.statusLines(status).filter { $0.contains("\"sampleRefused\"") }
    #expect(lines.count == 1 && lines[0].contains(message), "\(lines)")
  }

  @Test func annexBVideoIsRefusedByNameAndTheRunFails() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let dump = directory.appending(path: "annexb.dump").path
    try DumpItems.write(Self.annexB(), to: dump)
    let cause = "Annex B start codes instead of the 4-byte NAL length prefixes"
    let output = directory.appending(path: "annexb.ts").path
    let ts = try CommandRunner.ingest(
      ["replay", dump, "--to", output, "--speed", "max", "--json", "--quiet"])
    #expect(ts.status == 1)
    #expect(ts.stdout.contains("\"ok\":false"), "\(ts.stdout)")
    #expect(ts.stderr.contains(cause), "\(ts.stderr)")
    // The program declares no video stream it never carries.
    let streams = try CommandRunner.streams(output)
    #expect(!streams.contains { $0.hasPrefix("h264") }, "\(streams)")
    #expect(try CommandRunner.decodeErrors(output) == "")

    let recording = directory.appending(path: "hls").path
    let hls = try CommandRunner.ingest(
      ["replay", dump, "--to", "hls:\(recording)", "--speed", "max", "--json", "--quiet"])
    #expect(hls.status == 1)
    #expect(hls.stdout.contains("\"ok\":false"), "\(hls.stdout)")
    #expect(hls.stderr.contains(cause), "\(hls.stderr)")

    #expect(try Self.inspect(dump).contains("video: 300 samples carry Annex B start codes"))
  }

  /// Fixtures/bframes.dump (H.264 with B-frames) with every video sample's DTS flag cleared:
  /// reordered frames whose decode order is unknown are refused by name and the run fails,
  /// rather than being forced into increasing times and shown out of order. With its decode
  /// times the same dump plays without an error.
  @Test(arguments: forms)
  func reorderedVideoWithoutDecodeTimesIsRefusedByName(form: String) throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    var items = try DumpItems.read(CommandRunner.fixture("bframes.dump"))
    for index in items.indices {
      guard case .sample(var sample) = items[index], sample.kind == .video else { continue }
      sample.dts = nil
      items[index] = DumpItems.Item.rawSample(sample)
    }
    let dump = directory.appending(path: "no-dts.dump").path
    try DumpItems.write(items, to: dump)
    let (run, output) = try Self.replay(dump, to: form, named: "no-dts", in: directory)
    #expect(run.status == 1, "\(run.stderr)")
    #expect(run.stdout.contains("\"ok\":false"), "\(run.stdout)")
    #expect(
      run.stderr.contains("frames are reordered") && run.stderr.contains("DTS flag is clear"),
      "\(run.stderr)")
    let streams = try CommandRunner.streams(output)
    #expect(!streams.isEmpty && !streams.contains { $0.hasPrefix("h264") }, "\(streams)")
    try Self.expectDecodes(output, form: form)

    let (kept, whole) = try Self.replay(
      CommandRunner.fixture("bframes.dump"), to: form, named: "bframes", in: directory)
    #expect(kept.status == 0, "\(kept.stderr)")
    try Self.expectDecodes(whole, form: form)
  }

  /// Each file form a producer case is checked on: the `--to` value and what is read back.
  static let recordings = ["ts", "mp4", "hls-ts", "hls-fmp4"]

  static func recording(_ form: String, named name: String, in directory: URL)
    -> (to: String, read: String)
  {
    let path = directory.appending(path: name).path
    switch form {
    case "mp4": return (path + ".mp4", path + ".mp4")
    case "hls-ts": return ("hls:\(path)?container=ts", path + "/index.m3u8")
    case "hls-fmp4": return ("hls:\(path)?container=fmp4", path + "/index.m3u8")
    default: return (path + ".ts", path + ".ts")
    }
  }

  /// Every form a producer case is checked on: the recordings and a push to an SRT listener,
  /// whose copy is read back as a `.ts` recording is.
  static let forms = recordings + ["srt"]

  /// Replays `dump` to `form` (`forms`): a recording at full speed, or an SRT push at the pace
  /// of `SRTPush`. Returns the run and the path to read back.
  static func replay(
    _ dump: String, to form: String, named name: String, in directory: URL,
    arguments: [String] = ["--json", "--quiet"]
  ) throws -> (run: CommandRunner.Result, read: String) {
    if form == "srt" {
      let push = try SRTPush.replay(dump, named: name, in: directory, arguments: arguments)
      return (push.run, push.received)
    }
    let output = Self.recording(form, named: name, in: directory)
    let run = try CommandRunner.ingest(
      ["replay", dump, "--to", output.to, "--speed", "max"] + arguments)
    return (run, output.read)
  }

  /// ffmpeg decodes `path` without an error line; a transport stream (`.ts`, what SRT
  /// carried) also through GStreamer without a warning.
  static func expectDecodes(_ path: String, form: String) throws {
    #expect(try CommandRunner.decodeErrors(path) == "", "\(form)")
    guard form == "ts" || form == "srt" else { return }
    let check = try TransportStreamCheck(path: path)
    #expect(try Case.gstreamerProblems(path, check: check) == [], "\(form)")
    #expect(check.continuityErrors == 0, "\(form)")
  }

  /// Two P frames of screen.dump delivered swapped (each keeps its own decode time): the late
  /// one and the rest of its GOP are dropped and counted (`outOfOrder`, then awaiting the
  /// keyframe), never written to decode against the wrong references.
  @Test(arguments: forms)
  func framesOutOfDecodeOrderAreDroppedToTheNextKeyframe(form: String) throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    var items = try Case.screen()
    let video = Case.indices(of: .video, in: items)
    // Mid-GOP: the fixture has a keyframe every 60 frames.
    let (first, second) = (video[70], video[71])
    #expect(items[first].sample?.isKeyframe == false && items[second].sample?.isKeyframe == false)
    items.swapAt(first, second)
    let dump = directory.appending(path: "swapped.dump").path
    try DumpItems.write(items, to: dump)
    let (run, output) = try Self.replay(dump, to: form, named: "swapped", in: directory)
    #expect(run.status == 0, "\(run.stderr)")
    #expect(run.stdout.contains("\"outOfOrder\":1"), "\(run.stdout)")
    #expect(!run.stdout.contains("\"sent\":{\"video\":300,"), "\(run.stdout)")
    try Self.expectDecodes(output, form: form)
  }

  /// screen.dump as a producer that stamps on delivery sends it after a 2 s stall of its
  /// audio: every app and mic frame from 3 s to 5 s carries the time of 5 s. The burst is laid
  /// out from there, what comes behind it is dropped until the clock catches up (`catchingUp`),
  /// and the audio ends where the video does instead of 2 s after it.
  @Test(arguments: forms)
  func aBurstWithOneTimeLeavesNoLastingAudioShift(form: String) throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let screen = try Case.screen()
    // The fixture's times are host times: seconds are counted from its first sample.
    let start = try #require(screen.lazy.compactMap(\.sample).first).pts
    func seconds(_ time: MediaTime) -> Double {
      Double(time.value) / Double(time.timescale) - Double(start.value) / Double(start.timescale)
    }
    var items: [DumpItems.Item] = []
    var held: [DumpItems.Item] = []
    for item in screen {
      if var sample = item.sample, sample.kind.isAudio, (3..<5).contains(seconds(sample.pts)) {
        // Held back by the stall, then delivered at once with the time of delivery.
        let scale = Int64(sample.pts.timescale)
        sample.pts = MediaTime(
          value: Int64(Int128(start.value) * Int128(scale) / Int128(start.timescale)) + 5 * scale,
          timescale: sample.pts.timescale)
        sample.dts = nil
        held.append(.sample(sample))
        continue
      }
      if let sample = item.sample, sample.kind == .video, seconds(sample.pts) >= 5,
        !held.isEmpty
      {
        items += held
        held = []
      }
      items.append(item)
    }
    let dump = directory.appending(path: "burst.dump").path
    try DumpItems.write(items, to: dump)
    let (run, output) = try Self.replay(dump, to: form, named: "burst", in: directory)
    #expect(run.status == 0, "\(run.stderr)")
    if form.hasPrefix("hls") {
      // HLS carries the mix, which drops what comes behind the burst before it mixes: about
      // as many mixed frames as the app sent, not 2 s more.
      #expect(!run.stdout.contains("\"audioApp\":5"), "\(run.stdout)")
    } else {
      #expect(run.stdout.contains("\"catchingUp\""), "\(run.stdout)")
    }
    // The last audio packet ends within a frame or two of the last video frame, not 2 s on.
    let probe = try CommandRunner.run(
      "ffprobe",
      [
        "-v", "error", "-show_entries", "packet=codec_type,pts_time", "-of", "csv=p=0",
        output,
      ])
    var last: [String: Double] = [:]
    for line in probe.stdout.split(separator: "\n") {
      let fields = line.split(separator: ",")
      guard fields.count >= 2, let time = Double(fields[1]) else { continue }
      last[String(fields[0])] = max(last[String(fields[0])] ?? 0, time)
    }
    let video = try #require(last["video"])
    let audio = try #require(last["audio"])
    #expect(abs(audio - video) < 0.2, "audio ends at \(audio) s, video at \(video) s")
    try Self.expectDecodes(output, form: form)
  }

  /// To a `.ts` file and over SRT: the copy the listener received has every video frame at
  /// the time the file has it.
  @Test(arguments: ["ts", "srt"])
  func aFirstKeyframeAboveTwoMiBIsDelivered(form: String) throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let reference = try Case.replay(Case.screen(), named: "reference", in: directory)
    let replay = try Case.replay(
      Self.largeFirstKeyframe(bytes: 5_600_000), named: "large", in: directory,
      overSRT: form == "srt")
    #expect(replay.result.status == 0, "\(replay.result.stderr)")
    #expect(!replay.result.stdout.contains("\"invalid\""), "\(replay.result.stdout)")
    #expect(!replay.result.stdout.contains("\"tooLarge\""), "\(replay.result.stdout)")
    #expect(replay.result.stdout.contains("\"sent\":{\"video\":300,"), "\(replay.result.stdout)")
    #expect(replay.pts(0x100) == reference.pts(0x100))
  }

  /// An AAC-ELD mic (`f8 e6 30 00`: ELD, 48 kHz, mono) is refused by name on every output:
  /// the mic is left out, video and app audio go on at their own times, and the run fails.
  @Test(arguments: forms)
  func anAACELDMicIsRefusedByNameOnEveryOutput(form: String) throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let dump = directory.appending(path: "eld.dump").path
    try DumpItems.write(Case.refusedFormat(.audioMic, config: [0xF8, 0xE6, 0x30, 0x00]), to: dump)
    let reason = "AAC-ELD (object type 39) cannot be carried"
    let (run, output) = try Self.replay(dump, to: form, named: "eld", in: directory)
    #expect(run.status == 1, "\(run.stderr)")
    #expect(run.stderr.contains("the audioMic track was refused: "), "\(run.stderr)")
    #expect(run.stdout.contains("\"refused_formats\":[{\"kind\":\"audioMic\""), "\(run.stdout)")
    #expect(run.stdout.contains(reason), "\(run.stdout)")
    #expect(run.stdout.contains("\"sent\":{\"video\":300,"), "\(run.stdout)")
    #expect(try CommandRunner.streams(output) == ["h264", "aac,48000,2"])
    try Self.expectDecodes(output, form: form)
    // The tracks that are left keep their times, those they have with the mic: one shift for
    // both (the stream starts at the first sample it carries, and the mic's came first).
    if form == "ts" || form == "srt" {
      let reference = try Case.replay(Case.screen(), named: "reference", in: directory)
      let check = try TransportStreamCheck(path: output)
      func times(_ pid: UInt16) -> [Int64] {
        check.units.filter { $0.pid == pid }.compactMap(\.pts)
      }
      let shift = (times(0x100).first ?? 0) - (reference.pts(0x100).first ?? 0)
      for pid: UInt16 in [0x100, 0x101] {
        #expect(times(pid) == reference.pts(pid).map { $0 + shift }, "\(form): PID \(pid)")
      }
    }
  }

  @Test func aSampleAboveWhatTheBudgetHoldsIsRefusedAsTooLarge() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let status = directory.appending(path: "status.jsonl").path
    let replay = try Case.replay(
      Self.largeFirstKeyframe(bytes: 5_600_000), named: "too-large", in: directory,
      arguments: ["--budget", "33", "--status", status])
    #expect(replay.result.stdout.contains("\"video\":{\"awaitingKeyframe\":59,\"tooLarge\":1}"))
    let lines = try Case.statusLines(status).filter { $0.contains("\"sampleRefused\"") }
    #expect(lines.count == 1, "\(lines)")
    #expect(lines.first?.contains("\"reason\":\"tooLarge\",\"bytes\":5600000,\"limit\":") == true)
    #expect(replay.result.stdout.contains("samples refused as too large (largest 5600000 bytes"))
    let dump = directory.appending(path: "too-large.dump").path
    #expect(try Self.inspect(dump).contains("anomalies none"))
    #expect(try Self.inspect(dump, ["--budget", "33"]).contains("video: 1 samples above"))
  }
}
