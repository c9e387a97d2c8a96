import Foundation
import IngestCore
import IngestPOSIX
import IngestTestSupport
import Testing

@testable import IngestCapture

/// Media files made once per test run with ffmpeg in a temporary directory.
enum CaptureMedia {
  struct Files: Sendable {
    let directory: String
    var mp4: String { directory + "/av.mp4" }
    var ts: String { directory + "/av.ts" }
    var mkv: String { directory + "/av.mkv" }
    var flv: String { directory + "/av.flv" }
    var bframes: String { directory + "/bframes.mp4" }
    var bframesMKV: String { directory + "/bframes.mkv" }
  }

  static let files: Files = {
    let directory = ProcessFixtureDirectory.make(prefix: "capture-tests")
    let files = Files(directory: directory)
    let common = ["-v", "error", "-nostdin", "-y", "-fflags", "+bitexact"]
    ffmpeg(
      common + [
        "-f", "lavfi", "-i", "testsrc2=size=160x288:rate=30", "-f", "lavfi", "-i",
        "sine=frequency=440:sample_rate=48000", "-f", "lavfi", "-i",
        "sine=frequency=660:sample_rate=44100", "-t", "2", "-map", "0:v", "-map", "1:a", "-map",
        "2:a", "-c:v", "libx264", "-preset", "ultrafast", "-bf", "0", "-g", "30", "-threads", "1",
        "-c:a", "aac", "-b:a", "48k", files.mp4,
      ])
    for (path, extra) in [
      (files.ts, []), (files.mkv, []), (files.flv, ["-map", "0:0", "-map", "0:1"]),
    ] {
      ffmpeg(
        common + ["-i", files.mp4] + (extra.isEmpty ? ["-map", "0"] : extra) + ["-c", "copy", path])
    }
    ffmpeg(
      common + [
        "-f", "lavfi", "-i", "testsrc2=size=160x288:rate=30", "-t", "1", "-c:v", "libx264",
        "-preset", "veryfast", "-profile:v", "high", "-bf", "3", "-threads", "1", files.bframes,
      ])
    ffmpeg(common + ["-i", files.bframes, "-c", "copy", files.bframesMKV])
    return files
  }()

  private static func ffmpeg(_ arguments: [String]) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["ffmpeg"] + arguments
    try? process.run()
    process.waitUntilExit()
  }

  /// Everything a capture delivers.
  static func capture(
    _ path: String, video: StreamChoice = .automatic, app: StreamChoice = .automatic,
    mic: StreamChoice = .automatic, clock: CaptureClock = .host, jump: MicClockJump? = nil
  ) throws -> (items: [CaptureItem], capture: MediaFileCapture) {
    let capture = try MediaFileCapture(
      path: path, video: video, appAudio: app, micAudio: mic, clock: clock, micClockJump: jump)
    var items: [CaptureItem] = []
    while let item = try capture.next() { items.append(item) }
    return (items, capture)
  }

  static func samples(_ items: [CaptureItem], _ kind: SampleKind) -> [MediaSample] {
    items.compactMap { if case .sample(let s) = $0, s.kind == kind { s } else { nil } }
  }
}

@Suite struct CaptureTests {
  @Test func mp4GivesThreeTracksWithFormatsFirst() throws {
    let (items, capture) = try CaptureMedia.capture(CaptureMedia.files.mp4)
    #expect(capture.selection == [.video: 0, .audioApp: 1, .audioMic: 2])
    var announced: Set<SampleKind> = []
    for item in items {
      switch item {
      case .format(let kind, _): announced.insert(kind)
      case .sample(let sample): #expect(announced.contains(sample.kind))
      case .event: Issue.record("no events expected")
      }
    }
    let video = CaptureMedia.samples(items, .video)
    #expect(video.count == 60)
    #expect(video.first?.isKeyframe == true)
    #expect(video.filter(\.isKeyframe).count == 2)
    #expect(
      video.first?.pts
        == MediaTime(value: CaptureClock.hostBaseNanoseconds, timescale: 1_000_000_000))
    #expect(video[1].pts.value - video[0].pts.value == 33_333_333)
    for sample in video {
      #expect(
        sample.payload.withUnsafeBytes { DumpFormat.validateNALUnits($0, lengthSize: 4) } == nil)
    }
    #expect(CaptureMedia.samples(items, .audioApp).count > 90)
    #expect(CaptureMedia.samples(items, .audioMic).count > 80)
    guard
      case .format(_, .aac(let mic)) = items.first(where: {
        if case .format(.audioMic, _) = $0 { true } else { false }
      })
    else {
      Issue.record("no mic format")
      return
    }
    #expect(mic.sampleRate == 44100 && mic.channels == 1)
  }

  @Test func samplesAreInterleavedByDecodeTime() throws {
    let (items, _) = try CaptureMedia.capture(CaptureMedia.files.mp4)
    let times = items.compactMap { item -> Int64? in
      guard case .sample(let sample) = item else { return nil }
      return sample.decodeTime.value
    }
    #expect(times == times.sorted())
  }

  @Test(arguments: ["ts", "mkv", "flv"]) func otherContainersGiveTheSameSamples(_ container: String)
    throws
  {
    let files = CaptureMedia.files
    let path = container == "ts" ? files.ts : container == "mkv" ? files.mkv : files.flv
    let (reference, _) = try CaptureMedia.capture(files.mp4)
    let (items, _) = try CaptureMedia.capture(path)
    // Annex B (ts) loses its AUDs and in-band SPS/PPS; ADTS headers go: the bytes match the mp4's.
    #expect(
      CaptureMedia.samples(items, .video).map(\.payload)
        == CaptureMedia.samples(reference, .video).map(\.payload))
    #expect(
      CaptureMedia.samples(items, .audioApp).map(\.payload)
        == CaptureMedia.samples(reference, .audioApp).map(\.payload))
    #expect(
      CaptureMedia.samples(items, .video).map(\.isKeyframe)
        == CaptureMedia.samples(reference, .video).map(\.isKeyframe))
    let formats = items.compactMap {
      if case .format(let kind, let format) = $0 { "\(kind) \(format)" } else { nil }
    }
    let referenceFormats = reference.compactMap {
      if case .format(let kind, let format) = $0 { "\(kind) \(format)" } else { nil }
    }
    #expect(Set(formats).isSubset(of: Set(referenceFormats)))
    #expect(formats.count == (container == "flv" ? 2 : 3))
  }

  @Test func bFramesCarryDecodeTimes() throws {
    let (items, _) = try CaptureMedia.capture(CaptureMedia.files.bframes)
    let video = CaptureMedia.samples(items, .video)
    #expect(video.count == 30)
    #expect(video.contains { $0.dts != nil && $0.dts != $0.pts })
    let decode = video.map(\.decodeTime.value)
    #expect(decode == decode.sorted())
    #expect(video.map(\.pts.value) != video.map(\.pts.value).sorted())
  }

  @Test func matroskaWithoutLeadingDTSGetsDerivedDecodeTimes() throws {
    // libavformat's Matroska demuxer gives the first packets of a B-frame stream no DTS.
    let (items, capture) = try CaptureMedia.capture(CaptureMedia.files.bframesMKV)
    let video = CaptureMedia.samples(items, .video)
    #expect(video.count == 30)
    #expect(capture.droppedPackets == 0)
    let decode = video.map(\.decodeTime.value)
    #expect(zip(decode, decode.dropFirst()).allSatisfy { $0 < $1 })
    #expect(video.allSatisfy { $0.decodeTime.value <= $0.pts.value })
    // The keyframe is decoded first and shown after the frames that precede it in decode order.
    #expect(video[0].isKeyframe && video[0].decodeTime.value < video[0].pts.value)
  }

  @Test func zeroClockUsesTheStreamTimeBase() throws {
    let (items, _) = try CaptureMedia.capture(
      CaptureMedia.files.ts, app: .none, mic: .none, clock: .zero)
    let video = CaptureMedia.samples(items, .video)
    #expect(video.allSatisfy { $0.pts.timescale == 90000 })
    #expect(video[1].pts.value - video[0].pts.value == 3000)
  }

  @Test func micClockJumpShiftsMicAndAddsEvents() throws {
    let jump = try #require(MicClockJump(parsing: "-3@1"))
    let (plain, _) = try CaptureMedia.capture(CaptureMedia.files.mp4)
    let (items, _) = try CaptureMedia.capture(CaptureMedia.files.mp4, jump: jump)
    let events = items.compactMap { if case .event(let event) = $0 { event } else { nil } }
    #expect(events.count == 2)
    #expect(events.first?.code == .audioInterruptionBegan)
    #expect(events.last?.code == .audioInterruptionEnded)
    #expect(events.first.map { $0.time.value - events.last!.time.value } == 3_000_000_000)
    let before = CaptureMedia.samples(plain, .audioMic).map(\.pts.value)
    let after = CaptureMedia.samples(items, .audioMic).map(\.pts.value)
    let differences = zip(before, after).map { $0 - $1 }
    #expect(differences.first == 0)
    #expect(differences.last == 3_000_000_000)
    #expect(Set(differences) == [0, 3_000_000_000])
    #expect(
      CaptureMedia.samples(items, .video).map(\.pts)
        == CaptureMedia.samples(plain, .video).map(\.pts))
  }

  @Test func captureWritesADumpThatReadsBack() throws {
    let (items, _) = try CaptureMedia.capture(CaptureMedia.files.ts)
    let path = CaptureMedia.files.directory + "/roundtrip.dump"
    let sink = try FileWriter(path: path, bufferCapacity: 1000)
    var writer = try DumpWriter(sink: sink)
    for item in items {
      switch item {
      case .format(let kind, let format): try writer.writeFormat(format, for: kind)
      case .sample(let sample): try writer.writeSample(sample)
      case .event(let event): try writer.writeEvent(event)
      }
    }
    try sink.close()
    var reader = DumpReader(source: try FileByteSource(path: path))
    var read: [MediaSample] = []
    while let record = try reader.next() {
      if case .sample = record, let sample = reader.sampleCopy() { read.append(sample) }
    }
    let written = items.compactMap { if case .sample(let s) = $0 { s } else { nil } }
    #expect(read.map(\.payload) == written.map(\.payload))
    #expect(read.map(\.pts) == written.map(\.pts))
    #expect(reader.offset == writer.offset)
  }

  @Test func truncatedTransportStreamStillCapturesWhatIsThere() throws {
    let whole = try Data(contentsOf: URL(fileURLWithPath: CaptureMedia.files.ts))
    let path = CaptureMedia.files.directory + "/half.ts"
    try whole.prefix(whole.count / 2 / 188 * 188 + 100).write(to: URL(fileURLWithPath: path))
    let (items, _) = try CaptureMedia.capture(path)
    let video = CaptureMedia.samples(items, .video)
    #expect(video.count > 10 && video.count < 60)
    #expect(
      video.allSatisfy {
        $0.payload.withUnsafeBytes { DumpFormat.validateNALUnits($0, lengthSize: 4) } == nil
      })
  }

  @Test func badInputsGiveTypedErrors() throws {
    #expect {
      _ = try MediaFileCapture(path: CaptureMedia.files.directory + "/missing.mp4")
    } throws: { error in
      guard case .libav(let operation, _, _, let message) = error as? CaptureError else {
        return false
      }
      return operation == "avformat_open_input" && message.contains("No such file")
    }
    #expect(throws: CaptureError.noSuchStream(index: 7, streamCount: 3)) {
      _ = try MediaFileCapture(path: CaptureMedia.files.mp4, video: .index(7))
    }
    #expect(throws: CaptureError.self) {
      _ = try MediaFileCapture(path: CaptureMedia.files.mp4, video: .index(1))
    }
    #expect(throws: CaptureError.nothingSelected) {
      _ = try MediaFileCapture(
        path: CaptureMedia.files.mp4, video: .none, appAudio: .none, micAudio: .none)
    }
    #expect(throws: FileError(operation: "open", path: "/nonexistent/x.dump", errno: ENOENT)) {
      _ = try FileByteSource(path: "/nonexistent/x.dump")
    }
  }
}

@Suite struct CaptureConversionTests {
  @Test func annexBBecomesAVCCWithParameterSetsInTheFormat() throws {
    var converter = try H264SampleConverter(extradata: [], stream: 0)
    #expect(converter.format == nil)
    let sps: [UInt8] = [0x67, 0x42, 0xC0, 0x1E, 0xAB]
    let pps: [UInt8] = [0x68, 0xCE, 0x3C, 0x80]
    let idr: [UInt8] = [0x65, 0x88, 0x00, 0x00, 0x03, 0x01]
    let packet: [UInt8] =
      [0, 0, 0, 1, 0x09, 0xF0] + [0, 0, 0, 1] + sps + [0, 0, 1] + pps + [0, 0, 1] + idr + [0, 0]
    let (payload, changed) = try converter.convert(packet, packet: 0)
    #expect(changed)
    #expect(payload == [0, 0, 0, 6] + idr)
    #expect(converter.format?.sps == [sps])
    #expect(converter.format?.pps == [pps])
    #expect(converter.format?.profile == 0x42)
    let (_, again) = try converter.convert([0, 0, 1] + sps + [0, 0, 1, 0x41, 0x9A], packet: 1)
    #expect(!again)
  }

  @Test func avccWithBadLengthsIsRejected() throws {
    let avcC = try H264Format(
      profile: 66, compatibility: 0, level: 30, nalLengthSize: 4, sps: [[0x67]], pps: [[0x68]]
    ).avcC
    var converter = try H264SampleConverter(extradata: avcC, stream: 3)
    #expect(
      throws: CaptureError.h264(stream: 3, packet: 5, .nalLengthPastEnd(offset: 0, length: 9))
    ) {
      _ = try converter.convert([0, 0, 0, 9, 0x65], packet: 5)
    }
  }

  @Test func adtsIsStrippedAndDescribesTheFormat() throws {
    var converter = try AACSampleConverter(extradata: [], stream: 1)
    let frame: [UInt8] = [0x21, 0x10, 0x05, 0x00]
    let length = 7 + frame.count
    // AAC-LC (profile 1), 44.1 kHz (index 4), mono, no CRC.
    let header: [UInt8] = [
      0xFF, 0xF1, 0x50, 0x40 | UInt8(length >> 11), UInt8(length >> 3 & 0xFF),
      UInt8(length & 7) << 5 | 0x1F, 0xFC,
    ]
    let (payload, changed) = try converter.convert(header + frame, packet: 0)
    #expect(payload == frame)
    #expect(changed)
    #expect(converter.format == (try AACFormat(objectType: 2, sampleRate: 44100, channels: 1)))
    #expect(throws: CaptureError.self) {
      _ = try converter.convert(header + frame + [0], packet: 1)
    }
  }

  @Test func clockConversionIsExactAndRounds() {
    let tb90k = DemuxedStream.TimeBase(numerator: 1, denominator: 90000)
    // A day of 90 kHz ticks: 7 776 000 000 ticks, 86 400 s.
    #expect(
      CaptureClock.host.time(7_776_000_000, timeBase: tb90k).value == CaptureClock
        .hostBaseNanoseconds + 86_400_000_000_000)
    // One tick = 11111.1 ns, rounded to nearest; negative times round consistently.
    #expect(
      CaptureClock.host.time(1, timeBase: tb90k).value == CaptureClock.hostBaseNanoseconds + 11111)
    #expect(
      CaptureClock.host.time(-1, timeBase: tb90k).value == CaptureClock.hostBaseNanoseconds - 11111)
    let ntsc = DemuxedStream.TimeBase(numerator: 1001, denominator: 30000)
    #expect(CaptureClock.zero.time(3, timeBase: ntsc) == MediaTime(value: 3003, timescale: 30000))
    #expect(
      CaptureClock.zero.time(0, timeBase: tb90k, shift: -1_000_000_000)
        == MediaTime(value: -90000, timescale: 90000))
    #expect(CaptureClock.divideRounded(-3, 2) == -1)
    #expect(CaptureClock.divideRounded(3, 2) == 2)
  }

  @Test func micClockJumpParsing() {
    #expect(MicClockJump(parsing: "-3@4") == MicClockJump(jump: -3_000_000_000, at: 4_000_000_000))
    #expect(
      MicClockJump(parsing: "12.5@0.25") == MicClockJump(jump: 12_500_000_000, at: 250_000_000))
    #expect(MicClockJump(parsing: "+.000000001@1.") == MicClockJump(jump: 1, at: 1_000_000_000))
    for bad in ["", "3", "3@", "@4", "3@-1", "1.2.3@4", "x@1", "1@1e3", "1.0000000001@1", "-@1"] {
      #expect(MicClockJump(parsing: bad) == nil, "\(bad)")
    }
  }
}
