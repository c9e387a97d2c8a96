import Foundation
import Glibc
import IngestCore
import IngestTestSupport
import Testing

@testable import IngestRTMP

/// Publishes a real H.264/AAC clip through `RTMPSink` to a private nginx-rtmp and checks what
/// nginx recorded.
@Suite(.serialized) struct RTMPSinkTests {
  static let key = "k3y-Sup3rSecret"

  @Test func publishedStreamIsRecordedIntact() throws {
    let clip = try RTMPClip.shared.get()
    let server = try NginxRTMP()
    defer { server.stop() }
    let target = try RTMPTarget(url: "rtmp://127.0.0.1:\(server.rtmpPort)/live/\(Self.key)")
    let sink = RTMPSink(target: target)
    try sink.open(tracks: clip.tracks)
    #expect(sink.bufferBytes > 0)
    for packet in clip.packets {
      #expect(try packet.write(to: sink) == .written)
      // A second audio track: FLV carries only the configured one, the other is not sent.
      if packet.unit.kind == .audioApp {
        #expect(try packet.write(to: sink, as: .audioMic) == .discarded(.notCarried))
      }
    }
    try sink.finish()
    try server.waitForSessionEnd()
    server.stop()

    let recording = try server.recording(named: Self.key)
    let report = try RTMPProbe(recording)
    #expect(report.decodeErrors.isEmpty, "\(report.decodeErrors)")
    #expect(report.codecs == ["h264", "aac"])
    #expect(abs(report.duration - clip.duration) <= clip.gopDuration)
    #expect(report.packetCounts["h264"] == clip.count(of: .video))
    #expect(report.packetCounts["aac"] == clip.count(of: .audioApp))
    #expect(sink.droppedUnits == 0)
  }

  @Test func reconnectStartsAgainAtAKeyframeWithFreshHeaders() throws {
    // Two-byte NAL lengths exercise the rewrite to the four bytes FLV players expect.
    let clip = try RTMPClip.shared.get().withNALLengthSize(2)
    let server = try NginxRTMP()
    defer { server.stop() }
    let target = try RTMPTarget(url: "rtmp://127.0.0.1:\(server.rtmpPort)/live/\(Self.key)")
    let sink = RTMPSink(target: target)
    let half = clip.packets.count / 2

    try sink.open(tracks: clip.tracks)
    for packet in clip.packets[..<half] {
      _ = try packet.write(to: sink)
    }
    sink.close()
    try server.waitForSessionEnd()
    let first = try server.takeRecording(named: Self.key, as: "first.flv")

    // The second connection begins mid-GOP: everything before the next keyframe is dropped.
    try sink.open(tracks: clip.tracks)
    for packet in clip.packets[half...] {
      _ = try packet.write(to: sink)
    }
    try sink.finish()
    try server.waitForSessionEnd()
    server.stop()
    let second = try server.recording(named: Self.key)

    let skipped = clip.packets[half...].prefix { !($0.unit.kind == .video && $0.unit.isKeyframe) }
    #expect(!skipped.isEmpty)
    #expect(sink.droppedUnits == skipped.count)
    for file in [first, second] {
      let report = try RTMPProbe(file)
      #expect(report.decodeErrors.isEmpty, "\(report.decodeErrors)")
      #expect(report.codecs == ["h264", "aac"])
      #expect(report.firstVideoIsKeyframe)
      #expect(report.startTime < 0.1)
    }
    let secondReport = try RTMPProbe(second)
    let secondVideo = clip.packets[half...].dropFirst(skipped.count).filter {
      $0.unit.kind == .video
    }
    #expect(secondReport.packetCounts["h264"] == secondVideo.count)
  }

  @Test func rejectedPublishIsFatalAndKeepsTheKeySecret() throws {
    let clip = try RTMPClip.shared.get()
    let server = try NginxRTMP()
    defer { server.stop() }
    let target = try RTMPTarget(url: "rtmp://127.0.0.1:\(server.rtmpPort)/locked/\(Self.key)")
    let sink = RTMPSink(target: target)
    do {
      try sink.open(tracks: clip.tracks)
      Issue.record("publish to a locked app succeeded")
    } catch {
      guard case .publishRefused(let endpoint, _, retryable: false) = error else {
        Issue.record("expected a refused publish, got \(error)")
        return
      }
      #expect(endpoint == "rtmp://127.0.0.1:\(server.rtmpPort)/locked/***")
      #expect(!error.description.contains(Self.key))
    }
  }

  @Test func nothingListeningIsRetryable() throws {
    let clip = try RTMPClip.shared.get()
    for url in ["rtmps://127.0.0.1:1/live/\(Self.key)", "rtmp://127.0.0.1:1/live/\(Self.key)"] {
      let sink = RTMPSink(target: try RTMPTarget(url: url))
      #expect(!sink.redactedDescription.contains(Self.key))
      do {
        try sink.open(tracks: clip.tracks)
        Issue.record("connected to a closed port")
      } catch {
        guard case .connect(let endpoint, let message, retryable: true) = error else {
          Issue.record("expected a retryable connect failure, got \(error)")
          continue
        }
        #expect(endpoint.hasSuffix("127.0.0.1:1/live/***"))
        #expect(!message.contains(Self.key))
      }
      // Not connected: writes fail as retryable, close and finish are harmless.
      let unit = OutgoingUnit(
        kind: .video, pts: 0, dts: 0, isKeyframe: true, isDiscontinuity: false, prefixLength: 0)
      #expect(throws: SinkError.self) {
        try [UInt8](repeating: 0, count: 8).withUnsafeBytes {
          try sink.write(unit, bytes: $0, now: .origin)
        }
      }
      sink.close()
      try sink.finish()
    }
  }

  @Test func silentServerTimesOutAsRetryable() throws {
    let clip = try RTMPClip.shared.get()
    let listener = try ListeningSocket()
    let target = try RTMPTarget(url: "rtmp://127.0.0.1:\(listener.port)/live/\(Self.key)")
    let sink = RTMPSink(
      target: target, options: .init(ioTimeout: .milliseconds(500), openTimeout: .seconds(1)))
    // The kernel completes the TCP handshake from the backlog; nobody ever answers the RTMP one.
    let error = #expect(throws: SinkError.self) { try sink.open(tracks: clip.tracks) }
    guard case .timeout(_, "connect", let message)? = error else {
      Issue.record("expected a connect timeout, got \(String(describing: error))")
      return
    }
    #expect(error?.isRetryable == true)
    #expect(!message.contains(Self.key))
  }

  @Test(arguments: [(320, 240, "high"), (1920, 1080, "high"), (176, 144, "baseline")])
  func videoSizeComesFromTheSPS(width: Int, height: Int, profile: String) throws {
    let directory = try temporaryDirectory("rtmp-sps")
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("one.mp4").path
    let encode = try run(
      "ffmpeg",
      [
        "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=\(width)x\(height):rate=1", "-frames:v",
        "1", "-c:v", "libx264", "-profile:v", profile, "-pix_fmt", "yuv420p", "-y", path,
      ])
    #expect(encode.status == 0, "\(encode.stderr)")
    let probe = try run(
      "ffprobe", ["-v", "error", "-show_streams", "-show_data", "-of", "json", path])
    let json = try JSONSerialization.jsonObject(with: probe.stdoutData) as? [String: Any]
    let stream = (json?["streams"] as? [[String: Any]])?.first
    let format = try H264Format(avcC: RTMPClip.hexDump(stream?["extradata"] as? String ?? ""))
    #expect(H264PictureSize(sps: format.sps[0]) == H264PictureSize(width: width, height: height))
    #expect(H264PictureSize(sps: Array(format.sps[0].prefix(6))) == nil)
  }

  @Test func opensWithoutAnyPublishableTrackIsFatal() throws {
    let sink = RTMPSink(target: try RTMPTarget(url: "rtmp://127.0.0.1:1/live/k"), audio: .audioMic)
    let clip = try RTMPClip.shared.get()
    let error = #expect(throws: SinkError.self) {
      try sink.open(tracks: TrackFormats(audioApp: clip.tracks.audioApp))
    }
    guard case .unsupported? = error else {
      Issue.record("expected an unsupported stream, got \(String(describing: error))")
      return
    }
  }
}

// MARK: - Clip

/// One packet of the test clip, on a 90 kHz timeline that does not start at zero.
private struct RTMPPacket {
  var unit: OutgoingUnit
  var data: [UInt8]

  func write(to sink: RTMPSink, as kind: SampleKind? = nil) throws -> SinkWriteResult {
    var unit = unit
    unit.kind = kind ?? unit.kind
    return try data.withUnsafeBytes { try sink.write(unit, bytes: $0, now: .origin) }
  }
}

/// A 4 s testsrc2 + sine clip (libx264 with two B-frames, GOP 30 at 30 fps; AAC at 48 kHz), read
/// packet by packet through ffprobe and ordered by dts as the send ring would order it.
private struct RTMPClip {
  static let shared = Result { try RTMPClip.make() }

  var tracks: TrackFormats
  var packets: [RTMPPacket]
  let duration = 4.0
  let gopDuration = 1.0

  func count(of kind: SampleKind) -> Int { packets.filter { $0.unit.kind == kind }.count }

  /// The same clip with NAL length prefixes rewritten to `size` bytes.
  func withNALLengthSize(_ size: Int) throws -> RTMPClip {
    var copy = self
    var video = copy.tracks.video!.h264!
    video.nalLengthSize = size
    copy.tracks.video = .h264(video)
    for index in copy.packets.indices where copy.packets[index].unit.kind == .video {
      var out: [UInt8] = []
      var offset = 0
      let data = copy.packets[index].data
      while offset + 4 <= data.count {
        let length = data[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
        offset += 4
        precondition(length < 1 << (8 * size), "NAL unit too long for the test rewrite")
        for shift in stride(from: 8 * (size - 1), through: 0, by: -8) {
          out.append(UInt8(truncatingIfNeeded: length >> shift))
        }
        out += data[offset..<offset + length]
        offset += length
      }
      copy.packets[index].data = out
    }
    return copy
  }

  static func make() throws -> RTMPClip {
    let directory = try temporaryDirectory("rtmp-clip")
    // The clip is read into memory here: its file is not needed after.
    defer { try? FileManager.default.removeItem(at: directory) }
    let mp4 = directory.appendingPathComponent("clip.mp4").path
    let encode = try run(
      "ffmpeg",
      [
        "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-f", "lavfi", "-i",
        "sine=frequency=440:sample_rate=48000", "-t", "4", "-c:v", "libx264", "-preset", "veryfast",
        "-bf", "2", "-g", "30", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "64k", "-y", mp4,
      ])
    guard encode.status == 0 else { throw TestFailure("ffmpeg: \(encode.stderr)") }
    let probe = try run(
      "ffprobe",
      ["-v", "error", "-show_streams", "-show_packets", "-show_data", "-of", "json", mp4])
    guard probe.status == 0,
      let json = try JSONSerialization.jsonObject(with: probe.stdoutData) as? [String: Any],
      let streams = json["streams"] as? [[String: Any]],
      let packets = json["packets"] as? [[String: Any]]
    else { throw TestFailure("ffprobe: \(probe.stderr)") }

    var tracks = TrackFormats()
    var kinds: [Int: (SampleKind, Int64, Int64)] = [:]
    for stream in streams {
      guard let index = stream["index"] as? Int, let type = stream["codec_type"] as? String,
        let timeBase = (stream["time_base"] as? String)?.split(separator: "/"),
        let num = Int64(timeBase[0]), let den = Int64(timeBase[1]),
        let extradata = stream["extradata"] as? String
      else { throw TestFailure("stream without time base or extradata") }
      if type == "video" {
        tracks.video = .h264(try H264Format(avcC: hexDump(extradata)))
        kinds[index] = (.video, num, den)
      } else {
        tracks.audioApp = try AACFormat(audioSpecificConfig: hexDump(extradata))
        kinds[index] = (.audioApp, num, den)
      }
    }
    // The shared timeline rarely starts at zero; ten seconds in shows the sink rebases it.
    let origin: Int64 = 900_000
    var result: [RTMPPacket] = []
    for packet in packets {
      guard let index = packet["stream_index"] as? Int, let (kind, num, den) = kinds[index],
        let pts = packet["pts"] as? Int, let dts = packet["dts"] as? Int,
        let flags = packet["flags"] as? String, let data = packet["data"] as? String
      else { throw TestFailure("packet without timestamps or data") }
      func ticks(_ value: Int) -> Int64 {
        let scaled = Int64(value) * 90_000 * num
        return origin + (scaled >= 0 ? scaled / den : -((-scaled + den - 1) / den))
      }
      let unit = OutgoingUnit(
        kind: kind, pts: ticks(pts), dts: ticks(dts),
        isKeyframe: kind == .video ? flags.hasPrefix("K") : true,
        isDiscontinuity: false, prefixLength: 0)
      result.append(RTMPPacket(unit: unit, data: hexDump(data)))
    }
    // A stable sort keeps file order among equal dts, as the ring does.
    let ordered = result.enumerated().sorted {
      ($0.element.unit.dts, $0.offset) < ($1.element.unit.dts, $1.offset)
    }.map(\.element)
    return RTMPClip(tracks: tracks, packets: ordered)
  }

  /// Decodes ffprobe's hexdump ("00000000: 0000 02ab ...  ascii") back to bytes.
  static func hexDump(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    for line in text.split(separator: "\n") where line.count > 10 {
      let hex = line.dropFirst(10).prefix(41).filter { $0 != " " }
      var index = hex.startIndex
      while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex)
      {
        bytes.append(UInt8(hex[index..<next], radix: 16)!)
        index = next
      }
    }
    return bytes
  }
}

// MARK: - Recording check

/// What ffmpeg and ffprobe say about a recorded FLV.
private struct RTMPProbe {
  var decodeErrors: String
  var codecs: [String]
  var duration: Double
  var startTime: Double
  var packetCounts: [String: Int]
  var firstVideoIsKeyframe: Bool

  init(_ path: String) throws {
    decodeErrors = try run("ffmpeg", ["-v", "error", "-i", path, "-f", "null", "-"]).stderr
    let probe = try run(
      "ffprobe",
      [
        "-v", "error", "-show_entries", "stream=index,codec_name:format=duration,start_time",
        "-show_entries", "packet=stream_index,flags", "-of", "json", path,
      ])
    guard let json = try JSONSerialization.jsonObject(with: probe.stdoutData) as? [String: Any],
      let streams = json["streams"] as? [[String: Any]],
      let format = json["format"] as? [String: Any],
      let packets = json["packets"] as? [[String: Any]]
    else { throw TestFailure("ffprobe \(path): \(probe.stderr)") }
    var names: [Int: String] = [:]
    for stream in streams {
      names[stream["index"] as? Int ?? -1] = stream["codec_name"] as? String ?? "?"
    }
    codecs = streams.compactMap { $0["codec_name"] as? String }
    duration = Double(format["duration"] as? String ?? "") ?? -1
    startTime = Double(format["start_time"] as? String ?? "") ?? -1
    packetCounts = [:]
    firstVideoIsKeyframe = false
    var sawVideo = false
    for packet in packets {
      let name = names[packet["stream_index"] as? Int ?? -1] ?? "?"
      packetCounts[name, default: 0] += 1
      if name == "h264" && !sawVideo {
        sawVideo = true
        firstVideoIsKeyframe = (packet["flags"] as? String ?? "").hasPrefix("K")
      }
    }
  }
}

// MARK: - nginx-rtmp

/// A private nginx with the rtmp module: app `live` records every publish to FLV, app `locked`
/// refuses every publish through an `on_publish` callback answered 403 by the same nginx.
///
/// Its error log (notice level) and rtmp access log share one pipe: startup is over when the
/// `getrlimit` notice arrives (logged after the listening sockets are open), and each access log
/// line marks a session nginx has fully processed.
private final class NginxRTMP {
  let directory: URL
  let rtmpPort: Int
  private var pid: pid_t = 0
  private let log: Int32
  private var pending = Data()
  private var lines: [String] = []

  init() throws {
    directory = try temporaryDirectory("rtmp-nginx")
    // Ports the kernel just handed out and took back, and no other test got; nginx binds them
    // again at once.
    rtmpPort = try LoopbackServers.freePort(SOCK_STREAM)
    let httpPort = try LoopbackServers.freePort(SOCK_STREAM)
    let prefix = directory.path
    let config = """
      daemon off;
      master_process off;
      pid \(prefix)/nginx.pid;
      error_log stderr notice;
      load_module /usr/lib/nginx/modules/ngx_rtmp_module.so;
      events { worker_connections 64; }
      http {
        access_log off;
        server {
          listen 127.0.0.1:\(httpPort);
          location /deny { return 403; }
        }
      }
      rtmp {
        access_log /dev/stdout;
        server {
          listen 127.0.0.1:\(rtmpPort);
          application live { live on; record all; record_path \(prefix); }
          application locked { live on; on_publish http://127.0.0.1:\(httpPort)/deny; }
        }
      }
      """
    try config.write(
      to: directory.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)

    var pipeEnds: [Int32] = [0, 0]
    guard pipe(&pipeEnds) == 0 else { throw TestFailure("pipe: \(errno)") }
    // Close-on-exec, so that nginx instances of other tests do not hold this pipe open.
    for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
    log = pipeEnds[0]
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
    posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 2)
    let arguments: [String] = [
      "nginx", "-p", prefix + "/", "-c", prefix + "/nginx.conf", "-e", "stderr",
    ]
    var argv = arguments.map { strdup($0) } + [nil]
    let environment: [String] = ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"]
    var envp = environment.map { strdup($0) } + [nil]
    defer {
      for argument in argv { free(argument) }
      for variable in envp { free(variable) }
    }
    let status = posix_spawnp(&pid, "nginx", &actions, nil, &argv, &envp)
    Glibc.close(pipeEnds[1])
    guard status == 0 else { throw TestFailure("nginx did not start: \(status)") }
    try waitForLine { $0.contains("getrlimit") }
  }

  /// Waits (at most 20 s) for nginx to log the end of one session.
  func waitForSessionEnd() throws {
    try waitForLine { $0.hasPrefix("127.0.0.1 [") }
  }

  private func waitForLine(where matches: (String) -> Bool) throws {
    let deadline = Date().addingTimeInterval(20)
    while true {
      while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
        let line = String(decoding: pending[..<newline], as: UTF8.self)
        pending.removeSubrange(...newline)
        lines.append(line)
        if matches(line) { return }
      }
      let left = Int32(max(0, deadline.timeIntervalSinceNow * 1000))
      var descriptor = pollfd(fd: log, events: Int16(POLLIN), revents: 0)
      guard left > 0, poll(&descriptor, 1, left) == 1 else {
        throw TestFailure("nginx did not log the expected line: \(lines)")
      }
      var chunk = [UInt8](repeating: 0, count: 4096)
      let count = read(log, &chunk, chunk.count)
      guard count > 0 else { throw TestFailure("nginx exited: \(lines)") }
      pending.append(contentsOf: chunk[..<count])
    }
  }

  func recording(named name: String) throws -> String {
    let path = directory.appendingPathComponent("\(name).flv").path
    guard FileManager.default.fileExists(atPath: path) else {
      throw TestFailure("no recording: \(lines)")
    }
    return path
  }

  /// Moves the recording aside so the next publish of the same name starts a new file.
  func takeRecording(named name: String, as newName: String) throws -> String {
    let destination = directory.appendingPathComponent(newName).path
    try FileManager.default.moveItem(atPath: try recording(named: name), toPath: destination)
    return destination
  }

  /// Kills nginx (by pid) and reaps it; idempotent.
  func stop() {
    guard pid > 0 else { return }
    kill(pid, SIGKILL)
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    pid = 0
  }

  deinit {
    stop()
    Glibc.close(log)
    try? FileManager.default.removeItem(at: directory)
  }
}

/// A TCP socket listening on 127.0.0.1 at a port the kernel picked.
private final class ListeningSocket {
  let descriptor: Int32
  let port: Int

  init() throws {
    let descriptor = socket(
      AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard descriptor >= 0 else { throw TestFailure("socket: \(errno)") }
    self.descriptor = descriptor
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(descriptor, $0, length) == 0 && listen(descriptor, 16) == 0
          && getsockname(descriptor, $0, &length) == 0
      }
    }
    guard bound else {
      Glibc.close(descriptor)
      throw TestFailure("bind: \(errno)")
    }
    port = Int(UInt16(bigEndian: address.sin_port))
  }

  deinit { Glibc.close(descriptor) }
}

// MARK: - Processes and files

private struct TestFailure: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}

private struct ProcessOutput {
  var status: Int32
  var stdoutData: Data
  var stderr: String
}

/// Runs a tool found on PATH to completion; stdout and stderr are drained concurrently.
private func run(_ tool: String, _ arguments: [String]) throws -> ProcessOutput {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
  process.arguments = [tool] + arguments
  let out = Pipe()
  let err = Pipe()
  process.standardOutput = out
  process.standardError = err
  process.standardInput = FileHandle.nullDevice
  try process.run()
  let group = DispatchGroup()
  nonisolated(unsafe) var errData = Data()
  DispatchQueue.global().async(group: group) {
    errData = err.fileHandleForReading.readDataToEndOfFile()
  }
  let outData = out.fileHandleForReading.readDataToEndOfFile()
  group.wait()
  process.waitUntilExit()
  return ProcessOutput(
    status: process.terminationStatus, stdoutData: outData,
    stderr: String(decoding: errData, as: UTF8.self))
}

private func temporaryDirectory(_ name: String) throws -> URL {
  let url = FileManager.default.temporaryDirectory.appendingPathComponent(
    "\(name)-\(UUID().uuidString)")
  try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  return url
}
