import Foundation
import IngestCore
import IngestPOSIX
import IngestTestSupport
import Synchronization
import Testing

@testable import IngestWHIP

/// `WHIPSink` against a stand-in for `ingest-whip` (a shell script): the child's lines become
/// the link and the keyframe requests, and a child that stops reading never blocks the sender.
@Suite struct WHIPSinkTests {
  /// The first video sample of `screen.dump`, its format and the stream's tracks.
  static func fixture() throws -> (TrackFormats, MediaSample) {
    var tracks = TrackFormats()
    var first: MediaSample?
    for item in try DumpItems.read(CommandRunner.fixture("video-only.dump")) {
      switch item {
      case .format(let kind, let format): tracks.set(format, for: kind)
      case .sample(let sample) where first == nil: first = sample
      default: break
      }
    }
    return (tracks, try #require(first))
  }

  /// A stand-in for `ingest-whip` that runs `body` (sh). Written through a close-on-exec
  /// descriptor: a program another test spawns meanwhile must not inherit it open for
  /// writing, or executing the script fails with ETXTBSY.
  static func script(_ body: String) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appending(path: "fake-whip-\(UUID()).sh")
    let fd = try FileDescriptor.open(
      url.path, O_WRONLY | O_CREAT | O_EXCL, permissions: 0o755)
    defer { fd.close() }
    try fd.writeAll("#!/bin/sh\n" + body + "\n")
    return url
  }

  /// A sink running `fake` as its child, open on the fixture's tracks.
  static func openSink(running fake: URL) throws -> (WHIPSink, TrackFormats, MediaSample) {
    let (tracks, sample) = try fixture()
    let sink = WHIPSink(target: try target(), executable: fake.path, clock: SystemClock())
    try sink.open(tracks: tracks)
    return (sink, tracks, sample)
  }

  static let keyframe = OutgoingUnit(
    kind: .video, pts: 0, dts: 0, isKeyframe: true, isDiscontinuity: false, prefixLength: 0)

  /// Writes `sample` until the sink asks to be called again (a child that stopped reading
  /// fills the pipe, 64 KiB) or 1000 times; the units written, and whether it asked.
  static func fill(_ sink: WHIPSink, with sample: MediaSample) throws -> (Int, Bool) {
    for written in 0..<1000 {
      let result = try sample.payload.withUnsafeBytes { bytes in
        try sink.write(keyframe, bytes: bytes, now: SystemClock().now())
      }
      if case .wouldBlock = result { return (written, true) }
    }
    return (1000, false)
  }

  static func target() throws -> WHIPTarget {
    try WHIPTarget(parsing: "whip+http://127.0.0.1:9/whip/test", environment: [:])
  }

  @Test func theChildsLinesBecomeTheLinkAndOneKeyframeRequest() throws {
    let fake = try Self.script(
      """
      echo '{"event":"connection","state":"connected"}'
      echo '{"event":"stats","bytes_sent":1000,"packets_sent":10,"rtt_ms":12.5,"fraction_lost":0.01}'
      echo '{"event":"keyframe"}'
      echo '{"event":"deleted","status":200}'
      cat >/dev/null
      """)
    defer { try? FileManager.default.removeItem(at: fake) }
    let (tracks, sample) = try Self.fixture()
    let clock = SystemClock()
    let sink = WHIPSink(target: try Self.target(), executable: fake.path, clock: clock)
    try sink.open(tracks: tracks)
    try LoopbackServers.waitUntil("the fake child's lines") {
      sink.summaryFields?.rendered.contains("\"delete_status\":200") ?? false
    }
    let estimate = try #require(sink.linkEstimate(now: clock.now()))
    #expect(estimate.roundTripMilliseconds == 12.5)
    #expect(estimate.lossRatio == 0.01)
    // The connection coming up and the PLI ask once: a receiver repeats its request.
    #expect(sink.takeKeyframeRequest(now: clock.now()))
    #expect(!sink.takeKeyframeRequest(now: clock.now()))
    let unit = OutgoingUnit(
      kind: .video, pts: 0, dts: 0, isKeyframe: true, isDiscontinuity: false, prefixLength: 0)
    let result = try sample.payload.withUnsafeBytes { bytes in
      try sink.write(unit, bytes: bytes, now: clock.now())
    }
    #expect(result == .written)
    try sink.finish()
    #expect(sink.summaryLine?.contains("session deleted (HTTP 200)") == true)
  }

  /// The answer's choice (the child's `negotiated` line) becomes a status event and, in a live
  /// output (profiles to offer), one profile request; a replay's output asks the encoder
  /// nothing.
  @Test func theNegotiatedProfileBecomesOneProfileRequest() throws {
    let fake = try Self.script(
      """
      echo '{"event":"negotiated","codec":"H264","payload_type":98,"profile_level_id":"42e01f","profile":"baseline"}'
      echo '{"event":"deleted","status":200}'
      cat >/dev/null
      """)
    defer { try? FileManager.default.removeItem(at: fake) }
    let (tracks, _) = try Self.fixture()
    for profiles in [[H264Profile.high, .constrainedBaseline], nil] {
      let sink = WHIPSink(
        target: try Self.target(), executable: fake.path, offerProfiles: profiles)
      let events = Mutex<[String]>([])
      sink.setStatusHandler { name, fields in events.withLock { $0.append(name + fields.rendered) }
      }
      try sink.open(tracks: tracks)
      try LoopbackServers.waitUntil("the fake child's lines") {
        sink.summaryFields?.rendered.contains("\"delete_status\":200") ?? false
      }
      #expect(sink.takeProfileRequest() == (profiles == nil ? nil : .constrainedBaseline))
      #expect(sink.takeProfileRequest() == nil)
      #expect(
        events.withLock { $0 }.contains { $0.hasPrefix("negotiated") && $0.contains("42e01f") })
      #expect(sink.summaryLine?.contains("H.264 Constrained Baseline (42e01f) negotiated") == true)
      try sink.finish()
    }
  }

  /// The token reaches the child in its environment, never its arguments (which `ps` shows to
  /// every user).
  @Test func theTokenIsInTheChildsEnvironmentNotItsArguments() throws {
    let seen = FileManager.default.temporaryDirectory.appending(path: "fake-whip-\(UUID()).txt")
    defer { try? FileManager.default.removeItem(at: seen) }
    let fake = try Self.script(
      """
      printf 'token=%s\\nargs=%s\\n' "$INGEST_WHIP_TOKEN" "$*" > '\(seen.path)'
      echo '{"event":"deleted","status":200}'
      cat >/dev/null
      """)
    defer { try? FileManager.default.removeItem(at: fake) }
    let target = try WHIPTarget(
      parsing: "whip+http://127.0.0.1:9/whip/test",
      environment: [WHIPTarget.tokenVariable: "T0KEN-in-env"])
    let (tracks, _) = try Self.fixture()
    let sink = WHIPSink(target: target, executable: fake.path)
    try sink.open(tracks: tracks)
    try LoopbackServers.waitUntil("the fake child's line") {
      sink.summaryFields?.rendered.contains("\"delete_status\":200") ?? false
    }
    try sink.finish()
    let text = LoopbackServers.text(of: seen)
    #expect(text.contains("token=T0KEN-in-env\n"))
    #expect(text.contains("args=--rtx-history-bytes 1048576 http://127.0.0.1:9/whip/test\n"))
  }

  /// What the receiver's reports say arrived is what the summary counts as sent: the units
  /// written less the frames the child did not find delivered, and the session says
  /// `connected` only once the child's connection line came.
  @Test func theReceiversCountIsWhatWasDelivered() throws {
    let fake = try Self.script(
      """
      read -r line
      echo '{"event":"connection","state":"connected"}'
      echo '{"event":"stats","bytes_sent":1000,"packets_sent":10,"video_samples":3,"video_frames":3,"video_frames_delivered":2,"audio_samples":0,"rtx":true,"rtx_packets":4,"nack_requests":5,"nack_unserved":1,"final":true}'
      echo '{"event":"deleted","status":200}'
      cat >/dev/null
      """)
    defer { try? FileManager.default.removeItem(at: fake) }
    let (tracks, sample) = try Self.fixture()
    let clock = SystemClock()
    let sink = WHIPSink(target: try Self.target(), executable: fake.path, clock: clock)
    try sink.open(tracks: tracks)
    #expect(!sink.isEstablished)
    let unit = OutgoingUnit(
      kind: .video, pts: 0, dts: 0, isKeyframe: true, isDiscontinuity: false, prefixLength: 0)
    for _ in 0..<5 {
      let result = try sample.payload.withUnsafeBytes { bytes in
        try sink.write(unit, bytes: bytes, now: clock.now())
      }
      #expect(result == .written)
    }
    try LoopbackServers.waitUntil("the fake child's lines") {
      sink.summaryFields?.rendered.contains("\"delete_status\":200") ?? false
    }
    #expect(sink.isEstablished)
    try sink.finish()
    // Five written, two delivered.
    #expect(sink.unstoredUnits?[Int(SampleKind.video.rawValue)] == 3)
    let line = try #require(sink.summaryLine)
    #expect(line.contains("receiver: 2 of 3 video frames sent arrived whole"), "\(line)")
    #expect(line.contains("4 retransmitted for 5 NACKed, 1 too old"), "\(line)")
  }

  @Test func aChildThatStopsReadingMakesWritesWaitNotBlock() throws {
    let fake = try Self.script("exec sleep 60")
    defer { try? FileManager.default.removeItem(at: fake) }
    let (sink, _, sample) = try Self.openSink(running: fake)
    defer { sink.close() }
    // The pipe (64 KiB) fills within a few units; the sink then asks to be called again.
    let (written, waited) = try Self.fill(sink, with: sample)
    #expect(waited)
    #expect(written * sample.payload.count >= 32 << 10)
  }

  /// A child that stopped reading leaves part of a record pending; the next child (a reconnect)
  /// gets its stream from the header, not that part.
  @Test func aNewChildsInputStartsWithTheHeader() throws {
    let marker = FileManager.default.temporaryDirectory.appending(path: "whip-second-\(UUID())")
    defer { try? FileManager.default.removeItem(at: marker) }
    let fake = try Self.script(
      """
      if [ ! -e '\(marker.path)' ]; then : > '\(marker.path)'; exec sleep 60; fi
      if [ "$(head -c 7)" = INGDUMP ]; then echo '{"event":"deleted","status":200}'; fi
      cat >/dev/null
      """)
    defer { try? FileManager.default.removeItem(at: fake) }
    let (sink, tracks, sample) = try Self.openSink(running: fake)
    #expect(try Self.fill(sink, with: sample).1)
    sink.close()
    try sink.open(tracks: tracks)
    defer { sink.close() }
    // The header goes with the first write.
    _ = try sample.payload.withUnsafeBytes { bytes in
      try sink.write(Self.keyframe, bytes: bytes, now: SystemClock().now())
    }
    try LoopbackServers.waitUntil("the second child's header") {
      sink.summaryFields?.rendered.contains("\"delete_status\":200") ?? false
    }
  }
}
