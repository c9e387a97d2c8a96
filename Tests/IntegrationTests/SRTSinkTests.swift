import Foundation
import Glibc
import IngestCore
import IngestRTMP
import IngestTestSupport
import Testing

@testable import IngestSRT

/// Real pushes to `srt-live-transmit` listeners on loopback ports, each started by its test and
/// killed by pid.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct SRTSinkTests {
  static let correctPassphrase = "correct-horse-battery"
  static let wrongPassphrase = "wrong-donkey-stapler"

  /// A couple of seconds of H.264 in MPEG-TS, made by ffmpeg in `directory`.
  static func makeTransportStream(in directory: URL) throws -> [UInt8] {
    let file = directory.appending(path: "source.ts")
    let status = try TestServers.run(
      "ffmpeg",
      [
        "-v", "error", "-nostdin", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-t", "2",
        "-c:v", "libx264", "-preset", "ultrafast", "-f", "mpegts", file.path,
      ])
    try #require(status == 0)
    let bytes = try [UInt8](Data(contentsOf: file))
    try #require(bytes.count % 188 == 0 && bytes.count > 188 * 100)
    return bytes
  }

  /// Cuts the stream into units of a varying number of packets so messages straddle units.
  static func units(of stream: [UInt8]) -> [(OutgoingUnit, Range<Int>)] {
    let pattern = [1, 5, 9, 2, 14, 7, 3, 6, 8]
    var result: [(OutgoingUnit, Range<Int>)] = []
    var offset = 0
    var index = 0
    while offset < stream.count {
      let end = min(stream.count, offset + pattern[index % pattern.count] * 188)
      let unit = OutgoingUnit(
        kind: .video, pts: Int64(index) * 3600, dts: Int64(index) * 3600, isKeyframe: index == 0,
        isDiscontinuity: false, prefixLength: 0)
      result.append((unit, offset..<end))
      offset = end
      index += 1
    }
    return result
  }

  /// Writes every unit, offering a unit again while the sink answers `.wouldBlock`, after the
  /// pause it asks for (`retryAt` against the `now` of 0 given to it), as the sender does.
  /// - Returns: how many writes answered `.wouldBlock`.
  @discardableResult
  static func writeAll(
    _ stream: [UInt8], to sink: SRTSink, afterEachUnit: (Int) -> Void = { _ in }
  ) throws -> Int {
    var blocked = 0
    for (index, (unit, range)) in units(of: stream).enumerated() {
      var attempts = 0
      while true {
        attempts += 1
        try #require(attempts < 1000, "unit \(index) never went out")
        let result = try stream.withUnsafeBytes { raw in
          try sink.write(unit, bytes: UnsafeRawBufferPointer(rebasing: raw[range]), now: .origin)
        }
        if result == .written { break }
        blocked += 1
        if case .wouldBlock(let retryAt) = result {
          // Written at the clock's origin: the retry time is the wait.
          usleep(useconds_t(clamping: max(1_000, retryAt.sinceOrigin.nanoseconds / 1_000)))
        }
      }
      afterEachUnit(index)
    }
    return blocked
  }

  /// Both libsrt builds in one process: ours (OpenSSL), and the GnuTLS one libavformat depends
  /// on, loaded here by an RTMP sink. Used by `srtAndLibavformatInOneProcessExitCleanly`, which
  /// runs it alone in a child test process; run in the full suite it is an ordinary push.
  @Test func pushOverSRTAfterLoadingLibavformat() throws {
    let directory = try TestServers.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let stream = try Self.makeTransportStream(in: directory)
    let port = try TestServers.freeUDPPort()
    let received = directory.appending(path: "received.ts")
    let listener = try SRTListenerProcess(port: port, output: received, passphrase: nil)
    defer { listener.kill() }
    // Nothing listens on port 1: opening loads libavformat (and its libsrt) and fails to connect.
    let rtmp = RTMPSink(target: try RTMPTarget(url: "rtmp://127.0.0.1:1/live/key"))
    let aac = try AACFormat(audioSpecificConfig: [0x11, 0x90])
    #expect(throws: SinkError.self) { try rtmp.open(tracks: TrackFormats(audioApp: aac)) }
    let sink = SRTSink(options: try SRTOptions(host: "127.0.0.1", port: port))
    try sink.open(tracks: TrackFormats())
    try Self.writeAll(stream, to: sink)
    try sink.finish()
    try #require(listener.waitForExit(seconds: 20))
    #expect(LoopbackServers.size(of: received) == stream.count)
  }

  /// A process that used libsrt and loaded libavformat exits cleanly: with libsrt linked into
  /// the executable, libsrt-gnutls's references bound to our libsrt's symbols and the process
  /// crashed in libsrt at exit, after every test had passed.
  @Test func srtAndLibavformatInOneProcessExitCleanly() throws {
    let bundle = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
    for run in 1...3 {
      let result = try CommandRunner.run(
        bundle,
        [
          "--testing-library", "swift-testing", "--filter",
          "SRTSinkTests/pushOverSRTAfterLoadingLibavformat",
        ], timeout: 90)
      #expect(!result.timedOut)
      #expect(result.status == 0, "run \(run): \(result.stdout.suffix(2000)) \(result.stderr)")
      #expect(!(result.stdout + result.stderr).contains("crashed"), "run \(run)")
      // swift-testing reports on standard error; the filter must have matched the one test.
      #expect(result.stderr.contains("Test run with 1 test"), "run \(run): \(result.stderr)")
    }
  }

  @Test(arguments: [nil, correctPassphrase])
  func pushArrivesByteForByte(passphrase: String?) throws {
    let directory = try TestServers.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let stream = try Self.makeTransportStream(in: directory)
    let port = try TestServers.freeUDPPort()
    let received = directory.appending(path: "received.ts")
    let listener = try SRTListenerProcess(port: port, output: received, passphrase: passphrase)
    defer { listener.kill() }

    let options = try SRTOptions(
      host: "127.0.0.1", port: port, latencyMilliseconds: 200, passphrase: passphrase,
      keyLength: passphrase == nil ? nil : 32, streamID: "#!::r=live/test,m=publish")
    let sink = SRTSink(options: options, sendBufferBytes: 1 << 20)
    #expect(sink.payloadFormat == .transportStream)
    #expect(sink.bufferBytes >= 1 << 20)
    try sink.open(tracks: TrackFormats())
    #expect(sink.isConnected)
    try Self.writeAll(stream, to: sink)

    #expect(sink.statistics() != nil)
    #expect((0.0...1.0).contains(sink.congestion))

    try sink.finish()
    #expect(!sink.isConnected)
    #expect(sink.statistics() == nil)
    let final = try #require(sink.finalStatistics)
    #expect(final.bytesSent >= UInt64(stream.count))
    #expect(final.tooLateDroppedPackets == 0)
    // The listener leaves once its caller has gone, having flushed everything it received.
    try #require(listener.waitForExit(seconds: 20))
    let copy = try [UInt8](Data(contentsOf: received))
    #expect(copy.count == stream.count)
    let identical = copy == stream
    #expect(identical)
  }

  @Test func wrongPassphraseIsFatalAndKeepsTheSecret() throws {
    let port = try TestServers.freeUDPPort()
    let directory = try TestServers.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let listener = try SRTListenerProcess(
      port: port, output: directory.appending(path: "received.ts"),
      passphrase: Self.correctPassphrase)
    defer { listener.kill() }

    let sink = SRTSink(
      options: try SRTOptions(host: "127.0.0.1", port: port, passphrase: Self.wrongPassphrase))
    let error = try #require(throws: SinkError.self) { try sink.open(tracks: TrackFormats()) }
    #expect(
      error == .authentication(endpoint: "srt://127.0.0.1:\(port)", reason: "wrong passphrase"))
    #expect(!error.isRetryable)
    let message = error.description
    #expect(!message.contains(Self.wrongPassphrase) && !message.contains(Self.correctPassphrase))
    #expect(!sink.redactedDescription.contains(Self.wrongPassphrase))
    #expect(!sink.isConnected)
  }

  @Test func missingPassphraseIsFatal() throws {
    let port = try TestServers.freeUDPPort()
    let directory = try TestServers.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let listener = try SRTListenerProcess(
      port: port, output: directory.appending(path: "received.ts"),
      passphrase: Self.correctPassphrase)
    defer { listener.kill() }

    let sink = SRTSink(options: try SRTOptions(host: "127.0.0.1", port: port))
    let error = try #require(throws: SinkError.self) { try sink.open(tracks: TrackFormats()) }
    guard case .authentication(let endpoint, let reason) = error else {
      Issue.record("expected an authentication failure, got \(error)")
      return
    }
    #expect(endpoint == "srt://127.0.0.1:\(port)")
    #expect(reason.contains("requires a passphrase"))
  }

  @Test func absentListenerIsRetryable() throws {
    // A bound socket that never answers, so no listener another test starts can take the port.
    let silent = try LoopbackServers.silentUDPPort()
    defer { Glibc.close(silent.descriptor) }
    let port = UInt16(silent.port)
    let sink = SRTSink(
      options: try SRTOptions(host: "127.0.0.1", port: port), connectTimeoutMilliseconds: 1000)
    let error = try #require(throws: SinkError.self) { try sink.open(tracks: TrackFormats()) }
    guard case .timeout(let endpoint, "connect", _) = error else {
      Issue.record("expected a connect timeout, got \(error)")
      return
    }
    #expect(error.isRetryable)
    #expect(endpoint == "srt://127.0.0.1:\(port)")
    #expect(sink.statistics() == nil)
    #expect(sink.congestion == 0)
  }

  @Test func writeWithoutConnectionIsRetryable() throws {
    let sink = SRTSink(options: try SRTOptions(host: "127.0.0.1", port: 9))
    let unit = OutgoingUnit(
      kind: .audioApp, pts: 0, dts: 0, isKeyframe: true, isDiscontinuity: false, prefixLength: 0)
    let bytes = [UInt8](repeating: 0x47, count: 188)
    #expect(
      throws: SinkError.write(
        endpoint: "srt://127.0.0.1:9", reason: "not connected", retryable: true)
    ) {
      try bytes.withUnsafeBytes { try sink.write(unit, bytes: $0, now: .origin) }
    }
  }

  /// A stalled receiver fills the send buffer: writes answer `.wouldBlock` instead of hanging,
  /// and the same unit offered again completes once the receiver is back.
  @Test func stalledListenerMakesWritesWaitNotHang() throws {
    let directory = try TestServers.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let stream = try Self.makeTransportStream(in: directory)
    let port = try TestServers.freeUDPPort()
    let listener = try SRTListenerProcess(
      port: port, output: directory.appending(path: "received.ts"))
    defer { listener.kill() }

    let sink = SRTSink(
      options: try SRTOptions(host: "127.0.0.1", port: port, latencyMilliseconds: 2000),
      sendBufferBytes: SRTSink.minimumSendBufferBytes, sendTimeoutMilliseconds: 100)
    try sink.open(tracks: TrackFormats())
    listener.stop()
    var stopped = true
    var blockedWhileStopped = 0
    var congestionWhileStopped = 0.0
    let blocked = try Self.writeAll(stream, to: sink) { _ in
      guard stopped, let statistics = sink.statistics(), statistics.sendBufferBytes > 0 else {
        return
      }
      congestionWhileStopped = max(congestionWhileStopped, sink.congestion)
      blockedWhileStopped += 1
      // About a second of blocked writes (100 ms each), well inside SRT's 5 s peer idle
      // timeout even on a loaded machine: past it the connection breaks instead.
      if blockedWhileStopped > 10 {
        listener.resume()
        stopped = false
      }
    }
    if stopped { listener.resume() }
    #expect(blocked > 0)
    #expect(congestionWhileStopped > 0)
    try sink.finish()
  }
}
