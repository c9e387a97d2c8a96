import Foundation
import Testing

@testable import IngestCore

/// Real H.264 and AAC from ffmpeg, through the packetizer and the output stream, into a .ts file
/// that ffprobe and ffmpeg must read without a complaint.
@Suite struct TSEndToEndTests {
  /// ffmpeg and ffprobe on PATH, or nil.
  static let tools: (ffmpeg: URL, ffprobe: URL)? = {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
    func find(_ name: String) -> URL? {
      path.split(separator: ":").lazy.map {
        URL(fileURLWithPath: String($0)).appendingPathComponent(name)
      }
      .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }
    guard let ffmpeg = find("ffmpeg"), let ffprobe = find("ffprobe") else { return nil }
    return (ffmpeg, ffprobe)
  }()

  struct Run {
    var status: Int32
    var stdout: String
    var stderr: String
  }

  static func run(_ tool: URL, _ arguments: [String], in directory: URL) throws -> Run {
    let outURL = directory.appendingPathComponent("stdout.txt")
    let errURL = directory.appendingPathComponent("stderr.txt")
    for url in [outURL, errURL] {
      try #require(FileManager.default.createFile(atPath: url.path, contents: nil))
    }
    let process = Process()
    process.executableURL = tool
    process.arguments = arguments
    process.currentDirectoryURL = directory
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = try FileHandle(forWritingTo: outURL)
    process.standardError = try FileHandle(forWritingTo: errURL)
    try process.run()
    process.waitUntilExit()
    return Run(
      status: process.terminationStatus,
      stdout: try String(contentsOf: outURL, encoding: .utf8),
      stderr: try String(contentsOf: errURL, encoding: .utf8))
  }

  /// NAL units of an Annex B stream, without start codes.
  static func nalUnits(_ bytes: [UInt8]) -> [[UInt8]] {
    var starts: [Int] = []
    var index = 0
    while index + 3 <= bytes.count {
      if bytes[index] == 0, bytes[index + 1] == 0, bytes[index + 2] == 1 {
        starts.append(index + 3)
        index += 3
      } else {
        index += 1
      }
    }
    return starts.enumerated().map { number, start in
      var end = number + 1 < starts.count ? starts[number + 1] - 3 : bytes.count
      // The zero of a 4-byte start code (and any trailing zeros) is not part of the NAL.
      while end > start, bytes[end - 1] == 0 { end -= 1 }
      return Array(bytes[start..<end])
    }
  }

  /// Raw AAC frames and the configuration of an ADTS stream.
  static func adtsFrames(_ bytes: [UInt8]) throws -> (AACFormat, [[UInt8]]) {
    var frames: [[UInt8]] = []
    var format: AACFormat?
    var offset = 0
    while offset + 7 <= bytes.count {
      #expect(bytes[offset] == 0xFF && bytes[offset + 1] & 0xF0 == 0xF0)
      let headerSize = bytes[offset + 1] & 1 == 1 ? 7 : 9
      let length =
        Int(bytes[offset + 3] & 3) << 11 | Int(bytes[offset + 4]) << 3 | Int(bytes[offset + 5] >> 5)
      guard length >= headerSize, offset + length <= bytes.count else { break }
      if format == nil {
        let objectType = Int(bytes[offset + 2] >> 6) + 1
        let rate = AACFormat.sampleRates[Int(bytes[offset + 2] >> 2 & 0x0F)]
        let channels = Int(bytes[offset + 2] & 1) << 2 | Int(bytes[offset + 3] >> 6)
        format = try AACFormat(objectType: objectType, sampleRate: rate, channels: channels)
      }
      frames.append(Array(bytes[offset + headerSize..<offset + length]))
      offset += length
    }
    return (try #require(format), frames)
  }

  struct Sample {
    var kind: SampleKind
    var index: Int
    var dts: Int64
    var isKeyframe: Bool
    var payload: [UInt8]
  }

  /// Start times: ffmpeg's usual 1.4 s, and one second before the 33-bit wrap so PTS, DTS and
  /// PCR all wrap in the middle of the clip.
  @Test(
    .enabled(if: tools != nil, "ffmpeg and ffprobe are not on PATH"),
    arguments: [126_000, 1 << 33 - 90_000] as [Int64])
  func ffmpegDecodesWhatWeWrite(base: Int64) throws {
    let (ffmpeg, ffprobe) = try #require(Self.tools)
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("ts-e2e-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }

    let sources: [(String, [String])] = [
      (
        "video.h264",
        [
          "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-t", "2", "-c:v", "libx264",
          "-bf", "0", "-g", "30", "-pix_fmt", "yuv420p", "-x264-params", "aud=1", "-f", "h264",
        ]
      ),
      (
        "app.aac",
        [
          "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-ac", "2", "-t", "2",
          "-c:a", "aac", "-f", "adts",
        ]
      ),
      (
        "mic.aac",
        [
          "-f", "lavfi", "-i", "sine=frequency=880:sample_rate=44100", "-ac", "1", "-t", "2",
          "-c:a", "aac", "-f", "adts",
        ]
      ),
    ]
    for (name, arguments) in sources {
      let result = try Self.run(ffmpeg, ["-v", "error", "-y"] + arguments + [name], in: directory)
      try #require(result.status == 0, "ffmpeg could not make \(name): \(result.stderr)")
    }
    func read(_ name: String) throws -> [UInt8] {
      Array(try Data(contentsOf: directory.appendingPathComponent(name)))
    }

    // Video: access units start at AUD NAL units; the encoder's SPS/PPS go to the avcC and are
    // taken out of the samples, so the packetizer must put them back in front of each IDR.
    var units: [[[UInt8]]] = []
    for nal in Self.nalUnits(try read("video.h264")) where !nal.isEmpty {
      if nal[0] & 0x1F == 9 || units.isEmpty { units.append([]) }
      units[units.count - 1].append(nal)
    }
    let sps = try #require(units.joined().first { $0[0] & 0x1F == 7 })
    let pps = try #require(units.joined().first { $0[0] & 0x1F == 8 })
    let h264 = try H264Format(
      profile: sps[1], compatibility: sps[2], level: sps[3], nalLengthSize: 4, sps: [sps],
      pps: [pps])
    var samples: [Sample] = units.enumerated().map { index, nals in
      let kept = nals.filter { ![7, 8].contains($0[0] & 0x1F) }
      return Sample(
        kind: .video, index: index, dts: base + Int64(index) * 3_000,
        isKeyframe: nals.contains { $0[0] & 0x1F == 5 },
        payload: AnnexBTests.avcc(kept, lengthSize: 4))
    }
    #expect(samples.count == 60)
    #expect(samples.filter(\.isKeyframe).map(\.index) == [0, 30])

    let (appFormat, appFrames) = try Self.adtsFrames(try read("app.aac"))
    let (micFormat, micFrames) = try Self.adtsFrames(try read("mic.aac"))
    #expect(appFormat.sampleRate == 48_000 && appFormat.channels == 2)
    #expect(micFormat.sampleRate == 44_100 && micFormat.channels == 1)
    for (kind, format, frames) in [
      (SampleKind.audioApp, appFormat, appFrames), (.audioMic, micFormat, micFrames),
    ] {
      samples += frames.enumerated().map { index, frame in
        Sample(
          kind: kind, index: index,
          dts: base + Int64(index) * 1_024 * 90_000 / Int64(format.sampleRate), isKeyframe: true,
          payload: frame)
      }
    }
    samples.sort { ($0.dts, $0.kind.rawValue) < ($1.dts, $1.kind.rawValue) }

    let program = TSProgram(video: h264, audioApp: appFormat, audioMic: micFormat)
    let packetizer = TSPacketizer(program: program)
    var stream = TSOutputStream(program: program)
    var unit = [UInt8](repeating: 0, count: 1 << 20)
    var prefix = [UInt8](repeating: 0, count: TSOutputStream.maximumPrefixSize)
    var output: [UInt8] = []
    var sentVideo = 0
    for sample in samples {
      let bound = packetizer.maximumPacketizedSize(
        payloadSize: sample.payload.count, kind: sample.kind)
      try #require(bound <= unit.count)
      let packetized = try sample.payload.withUnsafeBytes { payload in
        try unit.withUnsafeMutableBytes {
          try packetizer.packetize(
            kind: sample.kind, pts: sample.dts, dts: sample.dts, isKeyframe: sample.isKeyframe,
            payload: payload, into: $0)
        }
      }
      // What the ring drops after packetizing: the tail of the first GOP and a run of mic
      // frames. The stream restarts at the next keyframe with PAT/PMT in front.
      if sample.kind == .video, (15..<30).contains(sample.index) { continue }
      if sample.kind == .audioMic, (20..<25).contains(sample.index) { continue }
      if sample.kind == .video, sample.index == 30 { stream.forcePSI() }
      if sample.kind == .video { sentVideo += 1 }
      let written = unit.withUnsafeMutableBytes { unitBuffer in
        prefix.withUnsafeMutableBytes {
          stream.prepare(
            unit: UnsafeMutableRawBufferPointer(rebasing: unitBuffer[0..<packetized.byteCount]),
            kind: sample.kind, dts: sample.dts, isKeyframe: sample.isKeyframe,
            discontinuity: false, prefix: $0)
        }
      }
      output += prefix[0..<written]
      output += unit[0..<packetized.byteCount]
    }
    let file = directory.appendingPathComponent("out.ts")
    try Data(output).write(to: file)

    // Our own look at the stream: sync, counters, section CRCs, PCR order.
    #expect(output.count % 188 == 0)
    let packets = TSReader.packets(output)
    #expect(packets.allSatisfy { $0.sync == 0x47 })
    #expect(TSReader.continuityErrors(packets).isEmpty)
    let sections = packets.filter { $0.pid == 0 || $0.pid == 0x1000 }
    #expect(sections.count > 40)
    for packet in sections {
      let length = Int(packet.payload[2] & 0x0F) << 8 | Int(packet.payload[3])
      #expect(MPEGCRC32.checksum(packet.payload[1..<4 + length]) == 0)
    }
    // PCR never steps back (modulo 2^33).
    let pcrs = packets.compactMap(\.pcr)
    #expect(zip(pcrs.dropFirst(), pcrs).allSatisfy { ($0 - $1) & (1 << 33 - 1) < 1 << 32 })
    #expect(Set(packets.map(\.pid)) == [0, 0x1000, 0x100, 0x101, 0x102])

    let probe = try Self.run(
      ffprobe,
      [
        "-v", "error", "-show_entries", "stream=index,codec_name,sample_rate,channels", "-of",
        "csv=p=0", "out.ts",
      ],
      in: directory)
    #expect(probe.status == 0)
    #expect(probe.stderr.isEmpty)
    // ffprobe lists each stream once under its program and once on its own.
    var streams: [String] = []
    for line in probe.stdout.split(separator: "\n").map(String.init) where !streams.contains(line) {
      streams.append(line)
    }
    #expect(streams == ["0,h264", "1,aac,48000,2", "2,aac,44100,1"])

    let frames = try Self.run(
      ffprobe,
      [
        "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
        "stream=nb_read_frames", "-of", "csv=p=0", "out.ts",
      ], in: directory)
    #expect(frames.stdout.split(separator: "\n").first == "\(sentVideo)")

    let decode = try Self.run(
      ffmpeg, ["-v", "error", "-i", "out.ts", "-map", "0", "-f", "null", "-"], in: directory)
    #expect(decode.status == 0)
    #expect(decode.stderr == "")
  }
}
