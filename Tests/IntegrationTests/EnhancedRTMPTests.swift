import Foundation
import IngestTestSupport
import Testing

/// Enhanced RTMP end to end: HEVC (E-RTMP v1, FourCC `hvc1`) and `--audio both` (E-RTMP v2
/// multitrack audio) published to FFmpeg 9's RTMP listener (`EnhancedRTMPPeer`), whose
/// recording is decoded by that FFmpeg and by Debian's; and a server that drops the stream at
/// the first extended tag, which the run names. H.264 to nginx-rtmp (legacy tags) is
/// `RTMPReplayTests`'.
@Suite(.serialized) struct EnhancedRTMPTests {
  static let key = "ertmp-K3Y-secret"

  /// The peer, or nil (a visible skip locally, a failure under CI) when a tool is missing.
  static func available() -> Bool {
    guard EnhancedRTMPPeer.executable != nil else {
      TestEnvironment.unavailable("imageio-ffmpeg (FFmpeg 9, the E-RTMP peer) is not installed")
      return false
    }
    for tool in ["ffmpeg", "ffprobe"] where !CommandRunner.has(tool) {
      TestEnvironment.unavailable("\(tool) is not installed")
      return false
    }
    return true
  }

  /// What a recording holds: per stream its codec, packets and start, from Debian's ffprobe.
  struct Recording {
    struct Stream {
      var codec: String
      var type: String
      var packets: Int
      var start: Double
      var sampleRate: Int?
    }

    var streams: [Stream]

    init(_ path: String) throws {
      let probe = try CommandRunner.run(
        "ffprobe",
        [
          "-v", "error", "-count_packets", "-show_entries",
          "stream=codec_name,codec_type,nb_read_packets,start_time,sample_rate", "-of", "json",
          path,
        ])
      guard
        let json = try JSONSerialization.jsonObject(with: Data(probe.stdout.utf8))
          as? [String: Any], let streams = json["streams"] as? [[String: Any]]
      else { throw LoopbackServers.Failure("ffprobe \(path): \(probe.stderr)") }
      self.streams = streams.map {
        Stream(
          codec: $0["codec_name"] as? String ?? "?", type: $0["codec_type"] as? String ?? "?",
          packets: Int($0["nb_read_packets"] as? String ?? "") ?? 0,
          start: Double($0["start_time"] as? String ?? "") ?? .nan,
          sampleRate: Int($0["sample_rate"] as? String ?? ""))
      }
    }

    var video: Stream? { streams.first { $0.type == "video" } }
    var audio: [Stream] { streams.filter { $0.type == "audio" } }
  }

  /// FFmpeg 9's and Debian's FFmpeg's error lines decoding every stream ("" when clean).
  static func decodeErrors(_ path: String) throws -> (ffmpeg9: String, debian: String) {
    let ffmpeg9 = try CommandRunner.run(
      EnhancedRTMPPeer.executable!,
      ["-nostdin", "-v", "error", "-i", path, "-map", "0", "-f", "null", "-"])
    return (
      ffmpeg9.stderr + (ffmpeg9.status == 0 ? "" : "exit \(ffmpeg9.status)"),
      try CommandRunner.decodeErrors(path)
    )
  }

  /// One AAC frame at `rate`, in seconds.
  static func frame(_ rate: Int?) -> Double { 1024 / Double(rate ?? 48_000) }

  /// The recording's audio start against its video start, less the same in `reference` (the
  /// dump written to a .ts file): what the publish moved the audio by. The connection starts at
  /// a video keyframe, so the audio frames before it are dropped: `droppedAudio` whole frames,
  /// and the rest is FLV's millisecond rounding.
  static func expectInStep(
    _ recording: Recording, reference: Recording, droppedAudio: [Int],
    sourceLocation: SourceLocation = #_sourceLocation
  ) {
    guard let video = recording.video, let referenceVideo = reference.video else {
      Issue.record("no video stream", sourceLocation: sourceLocation)
      return
    }
    #expect(
      recording.audio.count == reference.audio.count, sourceLocation: sourceLocation)
    for (index, (audio, original)) in zip(recording.audio, reference.audio).enumerated() {
      let moved = (audio.start - video.start) - (original.start - referenceVideo.start)
      let frame = Self.frame(audio.sampleRate)
      let expected = Double(droppedAudio[index]) * frame
      #expect(
        abs(moved - expected) <= 0.002,
        "audio \(index) moved by \(moved) s against the video, \(expected) s expected",
        sourceLocation: sourceLocation)
      #expect(abs(moved - expected) < frame, sourceLocation: sourceLocation)
    }
  }

  /// `ingest replay` of `dump` to a .ts file with `audio`: the reference the A/V check uses.
  static func reference(_ dump: String, audio: String, in directory: URL) throws -> Recording {
    let path = directory.appending(path: "reference.ts").path
    let result = try CommandRunner.ingest([
      "replay", dump, "--to", path, "--audio", audio, "--speed", "max", "--quiet",
    ])
    guard result.status == 0 else { throw LoopbackServers.Failure(result.stderr) }
    return try Recording(path)
  }

  /// An HEVC fixture arrives whole as HEVC: every picture, decoded without an error line by
  /// FFmpeg 9 and by Debian's FFmpeg 5.1 (the .mkv the listener wrote), the audio in step.
  @Test(arguments: [("screen-hevc.dump", 300), ("bframes-hevc.dump", 120)])
  func hevcReplayArrivesAsHEVC(fixture: String, pictures: Int) throws {
    guard Self.available() else { return }
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let output = directory.appending(path: "received.mkv")
    let peer = try EnhancedRTMPPeer(output: output, key: Self.key)
    defer { peer.kill() }
    let status = directory.appending(path: "status.jsonl")
    let result = try CommandRunner.ingest(
      [
        "replay", CommandRunner.fixture(fixture), "--to", peer.url(key: Self.key), "--speed", "4",
        "--json", "--status", status.path,
      ], timeout: 90)
    #expect(result.status == 0, "\(result.stderr)")
    try peer.waitForRecording()
    #expect(peer.errors == "", "FFmpeg 9 listener: \(peer.errors)")

    let summary = try JSONLines.summary(result.stdout)
    let sent = try #require(summary["sent"] as? [String: Int])
    let recording = try Recording(output.path)
    let video = try #require(recording.video)
    #expect(video.codec == "hevc")
    #expect(sent["video"] == pictures)
    #expect(Double(video.packets) >= 0.99 * Double(pictures), "\(video.packets) of \(pictures)")
    let errors = try Self.decodeErrors(output.path)
    #expect(errors.ffmpeg9 == "", "FFmpeg 9: \(errors.ffmpeg9)")
    #expect(errors.debian == "", "Debian's ffmpeg: \(errors.debian)")

    let drops = summary["drops"] as? [String: [String: Int]] ?? [:]
    let reference = try Self.reference(
      CommandRunner.fixture(fixture), audio: summary["audio"] as? String ?? "mix", in: directory)
    Self.expectInStep(
      recording, reference: reference,
      droppedAudio: [drops["audioApp"]?["awaitingKeyframe"] ?? 0])
    RTMPReplayTests.expectKeySecret(result, status: status)
  }

  /// `ingest live --codec hevc`: libx265 through the encoder child, published as E-RTMP.
  @Test func liveHEVCArrivesAsHEVC() throws {
    guard Self.available() else { return }
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let output = directory.appending(path: "live.mkv")
    let peer = try EnhancedRTMPPeer(output: output, key: Self.key)
    defer { peer.kill() }
    let result = try CommandRunner.ingest(
      [
        "live", "testsrc", "--codec", "hevc", "--size", "640x360", "--duration", "6", "--to",
        peer.url(key: Self.key), "--json", "--quiet",
      ], timeout: 120)
    #expect(result.status == 0, "\(result.stderr)")
    try peer.waitForRecording()
    #expect(peer.errors == "", "FFmpeg 9 listener: \(peer.errors)")

    let summary = try JSONLines.summary(result.stdout)
    let sent = try #require((summary["sent"] as? [String: Int])?["video"])
    let recording = try Recording(output.path)
    let video = try #require(recording.video)
    let audio = try #require(recording.audio.first)
    #expect(video.codec == "hevc")
    #expect(sent >= 150)
    #expect(Double(video.packets) >= 0.99 * Double(sent), "\(video.packets) of \(sent)")
    let errors = try Self.decodeErrors(output.path)
    #expect(errors.ffmpeg9 == "", "FFmpeg 9: \(errors.ffmpeg9)")
    #expect(errors.debian == "", "Debian's ffmpeg: \(errors.debian)")
    // The encoder stamps picture and sound from one clock: the audio begins within a frame of
    // the first picture (those before the connection's first keyframe are dropped).
    #expect(
      abs(audio.start - video.start) <= Self.frame(audio.sampleRate) + 0.001,
      "audio starts \(audio.start - video.start) s after the video")
  }

  /// The listener is killed once it records and a new one takes its port: the sender sees the
  /// broken connection, reconnects, and the second recording starts again with the sequence
  /// headers and a keyframe, and decodes clean.
  @Test func reconnectAfterTheServerDiedSendsFreshHEVCHeaders() throws {
    guard Self.available() else { return }
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let first = try EnhancedRTMPPeer(
      output: directory.appending(path: "first.mkv"), key: Self.key)
    defer { first.kill() }
    let status = directory.appending(path: "status.jsonl")
    let replay = try ChildProcess(
      CommandRunner.ingest,
      [
        "replay", CommandRunner.fixture("screen-hevc.dump"), "--to", first.url(key: Self.key),
        "--json", "--status", status.path,
      ], directory: directory, name: "replay")
    defer { replay.kill() }
    // The listener writes its output once it has read the streams' headers.
    try LoopbackServers.waitUntil("the first recording to start") {
      LoopbackServers.size(of: first.output) > 0
    }
    first.kill()
    let second = try EnhancedRTMPPeer(
      output: directory.appending(path: "second.mkv"), key: Self.key, port: first.port)
    defer { second.kill() }
    #expect(replay.wait(timeout: 60))
    #expect(replay.process.terminationStatus == 0, "\(replay.stderr)")
    try second.waitForRecording()
    #expect(second.errors == "", "FFmpeg 9 listener: \(second.errors)")

    let names = JSONLines.events(in: status).compactMap { $0["event"] as? String }
      .filter { ["connected", "disconnected", "retry", "failed"].contains($0) }
    #expect(Array(names.prefix(2)) == ["connected", "disconnected"])
    #expect(names.last == "connected")
    #expect(!names.contains("failed"))
    let recording = try Recording(second.output.path)
    let video = try #require(recording.video)
    #expect(video.codec == "hevc")
    #expect(video.packets >= 60, "\(video.packets) pictures after the reconnect")
    let errors = try Self.decodeErrors(second.output.path)
    #expect(errors.ffmpeg9 == "", "FFmpeg 9: \(errors.ffmpeg9)")
    #expect(errors.debian == "", "Debian's ffmpeg: \(errors.debian)")
    let keyframe = try CommandRunner.run(
      "ffprobe",
      [
        "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=flags", "-read_intervals",
        "%+#1", "-of", "csv=p=0", second.output.path,
      ])
    #expect(keyframe.stdout.hasPrefix("K"), "first picture: \(keyframe.stdout)")
    let result = CommandRunner.Result(
      status: replay.process.terminationStatus, stdout: replay.stdout, stderr: replay.stderr,
      timedOut: false)
    RTMPReplayTests.expectKeySecret(result, status: status)
  }

  /// `--audio both`: app and mic as two AAC tracks (E-RTMP v2 multitrack), each with its own
  /// tone (440 Hz app, 660 Hz mic) and none of the other's, in step with the video.
  @Test func bothAudioTracksArriveAsTwoTracks() throws {
    guard Self.available(), let tones = try AudioMixTests.prepared() else { return }
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let output = directory.appending(path: "both.mkv")
    let peer = try EnhancedRTMPPeer(output: output, key: Self.key, allStreams: true)
    defer { peer.kill() }
    let result = try CommandRunner.ingest(
      [
        "replay", tones.dump, "--to", peer.url(key: Self.key), "--audio", "both", "--speed", "4",
        "--json",
      ], timeout: 90)
    #expect(result.status == 0, "\(result.stderr)")
    try peer.waitForRecording()
    #expect(peer.errors == "", "FFmpeg 9 listener: \(peer.errors)")

    let summary = try JSONLines.summary(result.stdout)
    #expect(summary["audio"] as? String == "both")
    let recording = try Recording(output.path)
    #expect(recording.streams.map(\.codec) == ["h264", "aac", "aac"])
    let errors = try Self.decodeErrors(output.path)
    #expect(errors.ffmpeg9 == "", "FFmpeg 9: \(errors.ffmpeg9)")
    #expect(errors.debian == "", "Debian's ffmpeg: \(errors.debian)")
    let sent = summary["sent"] as? [String: Int] ?? [:]
    for (index, kind) in ["audioApp", "audioMic"].enumerated() {
      #expect(
        Double(recording.audio[index].packets) >= 0.99 * Double(sent[kind] ?? 0),
        "\(kind): \(recording.audio[index].packets) of \(sent[kind] ?? 0)")
    }

    let app = try DecodedAudio(output.path, stream: 0, in: directory)
    let mic = try DecodedAudio(output.path, stream: 1, in: directory)
    let appLevel = tones.app.meanLevel(440, seconds: 1..<5)
    let micLevel = tones.mic.meanLevel(660, seconds: 1..<5)
    for second in 1..<5 {
      #expect(abs(ToneMeter.decibels(app.level(440, second: second), relativeTo: appLevel)) <= 1)
      #expect(abs(ToneMeter.decibels(mic.level(660, second: second), relativeTo: micLevel)) <= 1)
      #expect(app.level(660, second: second) < micLevel / 100, "mic tone in the app track")
      #expect(mic.level(440, second: second) < appLevel / 100, "app tone in the mic track")
    }
    let drops = summary["drops"] as? [String: [String: Int]] ?? [:]
    Self.expectInStep(
      recording, reference: try Self.reference(tones.dump, audio: "both", in: directory),
      droppedAudio: ["audioApp", "audioMic"].map { drops[$0]?["awaitingKeyframe"] ?? 0 })
  }

  /// A server that takes the publish and drops the stream at its first extended tag (a relay in
  /// front of nginx-rtmp that closes the connection when the HEVC SequenceStart passes): after
  /// two such connections the run stops, and says that the server does not speak E-RTMP.
  @Test func serverDroppingTheFirstExtendedTagIsNamed() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let server = try NginxRTMP(
      port: try LoopbackServers.freePort(SOCK_STREAM), directory: directory.appending(path: "nginx")
    )
    defer { server.kill() }
    let relay = try ExtendedTagDroppingRelay(upstreamPort: server.port)
    defer { relay.stop() }
    let status = directory.appending(path: "status.jsonl")
    let result = try CommandRunner.ingest(
      [
        "replay", CommandRunner.fixture("screen-hevc.dump"), "--to",
        "rtmp://127.0.0.1:\(relay.port)/live/\(Self.key)", "--speed", "4", "--json", "--status",
        status.path,
      ], timeout: 60)
    #expect(result.status == 1)
    #expect(!result.timedOut)
    #expect(result.stderr.contains("the server refused the stream"), "\(result.stderr)")
    #expect(result.stderr.contains("Enhanced RTMP"), "\(result.stderr)")
    #expect(result.stderr.contains("HEVC video (FourCC hvc1)"), "\(result.stderr)")
    #expect(relay.dropped >= 2)
    let events = JSONLines.events(in: status)
    #expect(events.filter { $0["event"] as? String == "connected" }.count <= 2)
    #expect(events.contains { $0["event"] as? String == "failed" })
    RTMPReplayTests.expectKeySecret(result, status: status)
  }

  /// The same server with H.264 and one audio track: legacy tags only, nothing dropped.
  @Test func h264PassesTheSameServerInLegacyTags() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let server = try NginxRTMP(
      port: try LoopbackServers.freePort(SOCK_STREAM), directory: directory.appending(path: "nginx")
    )
    defer { server.kill() }
    let relay = try ExtendedTagDroppingRelay(upstreamPort: server.port)
    defer { relay.stop() }
    let result = try CommandRunner.ingest(
      [
        "replay", CommandRunner.fixture("video-only.dump"), "--to",
        "rtmp://127.0.0.1:\(relay.port)/live/\(Self.key)", "--speed", "4",
      ], timeout: 60)
    #expect(result.status == 0, "\(result.stderr)")
    try server.waitForSessionEnd()
    server.kill()
    #expect(relay.dropped == 0)
    let tags = try FLVTags(path: server.recording(key: Self.key).path)
    #expect(!tags.avcSequenceHeaders.isEmpty)
    #expect(!tags.tags.contains { $0.type == 9 && ($0.body.first ?? 0) & 0x80 != 0 })
  }
}
