import Foundation
import IngestCore
import IngestPOSIX
import Testing

@testable import IngestHLS

private let videoTracks = TrackFormats(
  video: try! H264Format(
    profile: 0x42, compatibility: 0, level: 0x1E, nalLengthSize: 4,
    sps: [[0x67, 0x42, 0x00, 0x1E]],
    pps: [[0x68, 0xCE, 0x3C, 0x80]]))

/// Feeds 30 fps video with a keyframe every second; `discontinuityAt` flags one frame.
private func feed(
  _ sink: HLSSink, seconds: Int, start: Int64 = 900_000, discontinuityAt: Int? = nil
) throws {
  for frame in 0..<(seconds * 30) {
    let dts = start + Int64(frame) * 3000
    let unit = TSFixture.video(dts: dts, keyframe: frame % 30 == 0)
    let outgoing = OutgoingUnit(
      kind: .video, pts: dts, dts: dts, isKeyframe: frame % 30 == 0,
      isDiscontinuity: frame == discontinuityAt, prefixLength: unit.prefix)
    let result = try unit.bytes.withUnsafeBytes {
      try sink.write(outgoing, bytes: $0, now: .origin)
    }
    #expect(result == .written)
  }
}

private func makeSink(_ directory: TemporaryDirectory, window: Int = 0) -> HLSSink {
  var configuration = HLSSink.Configuration(directory: directory.path)
  configuration.window = window
  configuration.bufferCapacity = 4096
  let sink = HLSSink(configuration: configuration)
  sink.wallClock = { fixedDate }
  return sink
}

@Test func sinkCutsAtKeyframesAfterTheTargetAndMarksDiscontinuities() throws {
  let directory = TemporaryDirectory()
  defer { directory.remove() }
  let sink = makeSink(directory)
  var reported: [HLSSegment] = []
  sink.onSegment = { reported.append($0) }
  try sink.open(tracks: videoTracks)
  // Keyframes each second, target 2 s: cuts at 2 s and 4 s; a clock reset at 4.5 s forces a cut
  // at the keyframe of 5 s.
  try feed(sink, seconds: 7, discontinuityAt: 135)
  try sink.finish()

  #expect(reported.map(\.duration) == [180_000, 180_000, 90_000, 180_000])
  #expect(reported.map(\.discontinuity) == [false, false, false, true])
  #expect(
    directory.read("index.m3u8") == """
      #EXTM3U
      #EXT-X-VERSION:3
      #EXT-X-INDEPENDENT-SEGMENTS
      #EXT-X-TARGETDURATION:2
      #EXT-X-MEDIA-SEQUENCE:0
      #EXT-X-PLAYLIST-TYPE:EVENT
      #EXT-X-PROGRAM-DATE-TIME:2023-11-14T22:13:20.000Z
      #EXTINF:2.000,
      seg00000.ts
      #EXT-X-PROGRAM-DATE-TIME:2023-11-14T22:13:22.000Z
      #EXTINF:2.000,
      seg00001.ts
      #EXT-X-PROGRAM-DATE-TIME:2023-11-14T22:13:24.000Z
      #EXTINF:1.000,
      seg00002.ts
      #EXT-X-DISCONTINUITY
      #EXT-X-PROGRAM-DATE-TIME:2023-11-14T22:13:25.000Z
      #EXTINF:2.000,
      seg00003.ts
      #EXT-X-ENDLIST

      """)
  #expect(
    directory.names == [
      "index.m3u8", "journal", "seg00000.ts", "seg00001.ts", "seg00002.ts", "seg00003.ts",
    ])
  // Every segment starts with PAT, then PMT, then the keyframe.
  for segment in reported {
    let bytes = try #require(FileManager.default.contents(atPath: directory.file(segment.name)))
    #expect(Int64(bytes.count) == segment.bytes)
    #expect(bytes[1] & 0x1F == 0 && bytes[2] == 0)
    #expect(bytes[189] == 0x50 && bytes[190] == 0x00)
    #expect(bytes[377] == 0x41 && bytes[378] == 0x00 && bytes[381] & 0x40 != 0)
  }
  let journal = HLSJournal.parse(try #require(directory.read(HLSJournal.fileName)))
  #expect(journal.isFinished)
  #expect(journal.segments == reported)
  #expect(journal.issues.isEmpty)
}

@Test func sinkDropsUnitsBeforeTheFirstKeyframe() throws {
  let directory = TemporaryDirectory()
  defer { directory.remove() }
  let sink = makeSink(directory)
  try sink.open(tracks: videoTracks)
  let frame = TSFixture.video(dts: 1000, keyframe: false)
  let unit = OutgoingUnit(
    kind: .video, pts: 1000, dts: 1000, isKeyframe: false, isDiscontinuity: false, prefixLength: 0)
  #expect(
    try frame.bytes.withUnsafeBytes { try sink.write(unit, bytes: $0, now: .origin) } == .written)
  #expect(!directory.names.contains { $0.hasSuffix(".part") })
  try feed(sink, seconds: 1, start: 4000)
  try sink.finish()
  #expect(directory.names.contains("seg00000.ts"))
  #expect(directory.size("seg00000.ts") == 30 * 376 + 376)
}

@Test func slidingWindowPlaylistWhileLive() throws {
  let directory = TemporaryDirectory()
  defer { directory.remove() }
  let sink = makeSink(directory, window: 2)
  try sink.open(tracks: videoTracks)
  try feed(sink, seconds: 9)
  let live = try #require(directory.read("index.m3u8"))
  #expect(live.contains("#EXT-X-MEDIA-SEQUENCE:2\n"))
  #expect(!live.contains("ENDLIST"))
  #expect(!live.contains("PLAYLIST-TYPE"))
  #expect(live.contains("seg00002.ts\n") && live.contains("seg00003.ts\n"))
  #expect(!live.contains("seg00001.ts"))
  #expect(directory.names.contains("seg00004.ts.part"))
  try sink.finish()
  let ended = try #require(directory.read("index.m3u8"))
  #expect(ended.contains("#EXT-X-MEDIA-SEQUENCE:3\n"))
  #expect(ended.hasSuffix("seg00004.ts\n#EXT-X-ENDLIST\n"))
}

@Test func newRunAfterAnInterruptedOneRecoversAndContinuesNumbering() throws {
  let directory = TemporaryDirectory()
  defer { directory.remove() }
  let first = makeSink(directory)
  try first.open(tracks: videoTracks)
  try feed(first, seconds: 5)
  first.close()  // as if killed: seg00002.ts.part stays, the journal has no end
  #expect(directory.names.contains("seg00002.ts.part"))
  let before = try #require(FileManager.default.contents(atPath: directory.file("seg00000.ts")))

  let second = makeSink(directory)
  var recovery: HLSRecoveryReport?
  second.onRecovery = { recovery = $0 }
  try second.open(tracks: videoTracks)
  try feed(second, seconds: 2, start: 50_000_000)
  try second.finish()

  #expect(recovery?.segments == 3)
  #expect(recovery?.partials.count == 1)
  #expect(FileManager.default.contents(atPath: directory.file("seg00000.ts")) == before)
  let playlist = try #require(directory.read("index.m3u8"))
  #expect(
    playlist.contains(
      "seg00002.ts\n#EXT-X-DISCONTINUITY\n#EXT-X-PROGRAM-DATE-TIME:2023-11-14T22:13:24.966Z\n#EXTINF:2.000,\nseg00003.ts\n#EXT-X-ENDLIST\n"
    ))
  #expect(playlist.contains("seg00000.ts\n") && playlist.contains("seg00001.ts\n"))
  // The partial lost only its last (possibly torn) frame: 29 of 30 frames kept.
  #expect(playlist.contains("#EXTINF:0.967,\nseg00002.ts\n"))
  let journal = HLSJournal.parse(try #require(directory.read(HLSJournal.fileName)))
  #expect(
    journal.segments.map(\.name) == ["seg00000.ts", "seg00001.ts", "seg00002.ts", "seg00003.ts"])
  #expect(journal.isFinished)
}

@Test func secondWriterIsRefusedUntilTheFirstEnds() throws {
  let directory = TemporaryDirectory()
  defer { directory.remove() }
  let first = makeSink(directory)
  try first.open(tracks: videoTracks)
  let second = makeSink(directory)
  #expect(throws: SinkError.self) { try second.open(tracks: videoTracks) }
  #expect(throws: HLSError.locked(directory: directory.path)) {
    try HLSRecovery.recover(directory: directory.path)
  }
  try feed(first, seconds: 3)
  try first.finish()
  try second.open(tracks: videoTracks)
  try second.finish()
  #expect(try HLSRecovery.recover(directory: directory.path).wasFinished)
}

@Test func unusableDirectoryIsAFatalErrorNamingThePath() throws {
  let directory = TemporaryDirectory()
  defer { directory.remove() }
  directory.write("plain-file", [1, 2, 3])
  var configuration = HLSSink.Configuration(directory: directory.file("plain-file/hls"))
  configuration.bufferCapacity = 4096
  let sink = HLSSink(configuration: configuration)
  do {
    try sink.open(tracks: videoTracks)
    Issue.record("open succeeded under a plain file")
  } catch {
    guard case .write(_, let message, retryable: false) = error else {
      Issue.record("expected a write error that a retry cannot fix, got \(error)")
      return
    }
    #expect(message.contains("plain-file"))
  }
}

@Test func diskFullIsNamedInTheMessage() {
  let error = HLSError.file(
    FileError(operation: "write", path: "out/seg00003.ts.part", errno: ENOSPC))
  #expect(error.description.contains("out/seg00003.ts.part"))
  #expect(error.description.hasSuffix("(disk full)"))
}
