import Foundation
import IngestCore
import Testing

@testable import IngestHLS

/// HLS in fMP4: the playlist's maps, the journal's map lines, the segments' boundaries, a
/// format change, and recovery of a segment cut short.
@Suite struct HLSFragmentedMP4Tests {
  static let h264 = try! H264Format(
    profile: 0x42, compatibility: 0, level: 0x1E, nalLengthSize: 4,
    sps: [[0x67, 0x42, 0x00, 0x1E]], pps: [[0x68, 0xCE, 0x3C, 0x80]])
  /// The same stream after a rotation: another SPS.
  static let rotated = try! H264Format(
    profile: 0x42, compatibility: 0, level: 0x1F, nalLengthSize: 4,
    sps: [[0x67, 0x42, 0x00, 0x1F]], pps: [[0x68, 0xCE, 0x3C, 0x80]])
  static let aac = try! AACFormat(objectType: 2, sampleRate: 48_000, channels: 2)
  static let tracks = TrackFormats(video: h264, audioApp: aac)

  static func fmp4Segment(_ index: Int, map: String, discontinuity: Bool = false) -> HLSSegment {
    HLSSegment(
      name: HLSSegment.fileName(index: index, container: .fragmentedMP4), duration: 180_000,
      bytes: 1000, discontinuity: discontinuity, programDateTime: fixedDate + Int64(index) * 2000,
      map: map)
  }

  static func makeSink(_ directory: TemporaryDirectory, target: Int = 2) -> HLSSink {
    var configuration = HLSSink.Configuration(directory: directory.path)
    configuration.window = 0
    configuration.targetDuration = target
    configuration.bufferCapacity = 4096
    configuration.container = .fragmentedMP4
    let sink = HLSSink(configuration: configuration, tracks: tracks)
    sink.wallClock = { fixedDate }
    return sink
  }

  /// One video unit of 30 fps (100 bytes, its frame number in its first byte).
  static func video(_ sink: HLSSink, frame: Int, keyframe: Bool, format: FormatDescription? = nil)
    throws -> SinkWriteResult
  {
    let dts = 900_000 + Int64(frame) * 3000
    let unit = OutgoingUnit(
      kind: .video, pts: dts + 3000, dts: dts, isKeyframe: keyframe,
      isDiscontinuity: format != nil, prefixLength: 0, format: format)
    let bytes = [UInt8(truncatingIfNeeded: frame)] + [UInt8](repeating: 0xA5, count: 99)
    return try bytes.withUnsafeBytes { try sink.write(unit, bytes: $0, now: .origin) }
  }

  /// One AAC frame of app audio at the time of video frame `frame` (20 bytes).
  static func audio(_ sink: HLSSink, frame: Int, format: FormatDescription? = nil) throws
    -> SinkWriteResult
  {
    let dts = 900_000 + Int64(frame) * 3000
    let unit = OutgoingUnit(
      kind: .audioApp, pts: dts, dts: dts, isKeyframe: true, isDiscontinuity: format != nil,
      prefixLength: 0, format: format)
    return try [UInt8](repeating: 0x21, count: 20).withUnsafeBytes {
      try sink.write(unit, bytes: $0, now: .origin)
    }
  }

  /// The top-level boxes of a file: type and size.
  static func topLevelBoxes(_ bytes: [UInt8]) -> [(String, Int)] {
    var result: [(String, Int)] = []
    var offset = 0
    while offset + 8 <= bytes.count {
      let size =
        Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8
        | Int(bytes[offset + 3])
      guard size >= 8 else { break }
      result.append((String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self), size))
      offset += size
    }
    return result
  }

  @Test func playlistNamesTheMapBeforeItsFirstSegmentAndWhereItChanges() {
    var playlist = HLSPlaylist(window: 0, targetDuration: 2)
    playlist.append(Self.fmp4Segment(0, map: "init00000.mp4"))
    playlist.append(Self.fmp4Segment(1, map: "init00000.mp4"))
    playlist.append(Self.fmp4Segment(2, map: "init00002.mp4", discontinuity: true))
    playlist.isEnded = true
    #expect(
      playlist.rendered == """
        #EXTM3U
        #EXT-X-VERSION:7
        #EXT-X-INDEPENDENT-SEGMENTS
        #EXT-X-TARGETDURATION:2
        #EXT-X-MEDIA-SEQUENCE:0
        #EXT-X-PLAYLIST-TYPE:EVENT
        #EXT-X-MAP:URI="init00000.mp4"
        #EXT-X-PROGRAM-DATE-TIME:2023-11-14T22:13:20.000Z
        #EXTINF:2.000,
        seg00000.m4s
        #EXT-X-PROGRAM-DATE-TIME:2023-11-14T22:13:22.000Z
        #EXTINF:2.000,
        seg00001.m4s
        #EXT-X-DISCONTINUITY
        #EXT-X-MAP:URI="init00002.mp4"
        #EXT-X-PROGRAM-DATE-TIME:2023-11-14T22:13:24.000Z
        #EXTINF:2.000,
        seg00002.m4s
        #EXT-X-ENDLIST

        """)
  }

  @Test func slidingWindowRepeatsTheMapOfItsFirstSegment() {
    var playlist = HLSPlaylist(window: 2, targetDuration: 2)
    for index in 0..<5 { playlist.append(Self.fmp4Segment(index, map: "init00000.mp4")) }
    let text = playlist.rendered
    #expect(text.hasPrefix("#EXTM3U\n#EXT-X-VERSION:7\n"))
    #expect(text.contains("#EXT-X-MEDIA-SEQUENCE:3\n#EXT-X-MAP:URI=\"init00000.mp4\"\n"))
    #expect(text.components(separatedBy: "#EXT-X-MAP").count == 2)
  }

  @Test func namesOfSegmentsAndMaps() {
    #expect(HLSSegment.fileName(index: 42, container: .fragmentedMP4) == "seg00042.m4s")
    #expect(HLSSegment.mapFileName(index: 42) == "init00042.mp4")
    #expect(HLSSegment.index(ofFileName: "seg00042.m4s") == 42)
    #expect(HLSSegment.index(ofFileName: "seg00042.m4s.part") == 42)
    #expect(HLSSegment.index(ofFileName: "seg00042.mp4") == nil)
    #expect(HLSSegment.index(ofMapName: "init00042.mp4") == 42)
    #expect(HLSSegment.index(ofMapName: "init.mp4") == nil)
    #expect(HLSSegment.index(ofMapName: "seg00042.m4s") == nil)
    #expect(HLSContainer.of(segmentName: "seg00001.ts") == .transportStream)
    #expect(HLSContainer.of(segmentName: "seg00001.m4s") == .fragmentedMP4)
    #expect(
      HLSContainer.preferred(for: TrackFormats(video: HLSFragmentedMP4Tests.h264))
        == .transportStream)
  }

  @Test func journalRecordsMapsAndTheMapOfEachSegment() {
    let segment = Self.fmp4Segment(0, map: "init00000.mp4")
    let text =
      HLSJournal.runLine(playlist: "index.m3u8", targetDuration: 2, window: 0)
      + HLSJournal.mapLine(HLSMap(name: "init00000.mp4", bytes: 812))
      + HLSJournal.openLine(
        name: segment.name, discontinuity: false, programDateTime: fixedDate, map: "init00000.mp4")
      + HLSJournal.segmentLine(segment)
      + HLSJournal.openLine(
        name: "seg00001.m4s", discontinuity: true, programDateTime: fixedDate, map: "init00000.mp4")
    let journal = HLSJournal.parse(text)
    #expect(journal.issues == [])
    #expect(journal.maps == [HLSMap(name: "init00000.mp4", bytes: 812)])
    #expect(journal.segments == [segment])
    #expect(journal.openSegment?.map == "init00000.mp4")
    #expect(HLSJournal.segmentLine(segment).hasSuffix(" init00000.mp4\n"))
  }

  @Test func journalRefusesASegmentWhoseMapWasNeverRecorded() {
    let segment = Self.fmp4Segment(0, map: "init00000.mp4")
    let journal = HLSJournal.parse(
      HLSJournal.segmentLine(segment) + "map ../x.mp4 10\nmap init00001.mp4 -3\n")
    #expect(journal.segments == [])
    #expect(journal.maps == [])
    #expect(journal.issues.map(\.line) == [1, 2, 3])
  }

  @Test func segmentsStartAtKeyframesAfterTheTargetUnderOneMap() throws {
    let directory = TemporaryDirectory()
    defer { directory.remove() }
    let sink = Self.makeSink(directory)
    var reported: [HLSSegment] = []
    sink.onSegment = { reported.append($0) }
    #expect(sink.payloadFormat == .accessUnits)
    try sink.open(tracks: Self.tracks)
    // Audio before the first keyframe has no segment to go to.
    #expect(try Self.audio(sink, frame: -1) == .discarded(.awaitingKeyframe))
    // Keyframes every second; a non-keyframe never starts a segment.
    for frame in 0..<150 {
      #expect(try Self.video(sink, frame: frame, keyframe: frame % 30 == 0) == .written)
      if frame % 2 == 0 { #expect(try Self.audio(sink, frame: frame) == .written) }
    }
    try sink.finish()

    #expect(reported.map(\.duration) == [180_000, 180_000, 90_000])
    #expect(reported.allSatisfy { $0.map == "init00000.mp4" })
    #expect(
      directory.names == [
        "index.m3u8", "init00000.mp4", "journal", "seg00000.m4s", "seg00001.m4s", "seg00002.m4s",
      ])
    let text = try #require(directory.read("index.m3u8"))
    #expect(text.hasPrefix("#EXTM3U\n#EXT-X-VERSION:7\n"))
    #expect(text.contains("#EXT-X-MAP:URI=\"init00000.mp4\"\n"))
    #expect(text.components(separatedBy: "#EXT-X-MAP").count == 2)
    #expect(text.hasSuffix("#EXT-X-ENDLIST\n"))
    let journal = try #require(directory.read("journal"))
    #expect(journal.hasPrefix("run index.m3u8 2 0\nmap init00000.mp4 "))

    let head = try Data(contentsOf: URL(fileURLWithPath: directory.file("init00000.mp4")))
    #expect(Self.topLevelBoxes([UInt8](head)).map(\.0) == ["ftyp", "moov"])
    for segment in reported {
      let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory.file(segment.name))))
      #expect(Int64(bytes.count) == segment.bytes)
      // One fragment per GOP (a keyframe each second), nothing else.
      let boxes = Self.topLevelBoxes(bytes).map(\.0)
      let gops = Int(segment.duration / 90_000)
      #expect(boxes == Array(repeating: ["moof", "mdat"], count: gops).flatMap { $0 })
      let scan = try HLSFragmentedSegmentScanner.scan(
        path: directory.file(segment.name), mapPath: directory.file("init00000.mp4"))
      #expect(scan.isPlayable)
      #expect(scan.fragments == gops)
      #expect(scan.completeBytes == segment.bytes)
      #expect(scan.duration == segment.duration)
    }
  }

  @Test func aFormatChangeStartsASegmentUnderANewMapWithADiscontinuity() throws {
    let directory = TemporaryDirectory()
    defer { directory.remove() }
    let sink = Self.makeSink(directory)
    var reported: [HLSSegment] = []
    sink.onSegment = { reported.append($0) }
    try sink.open(tracks: Self.tracks)
    for frame in 0..<45 {
      _ = try Self.video(sink, frame: frame, keyframe: frame % 30 == 0)
      _ = try Self.audio(sink, frame: frame)
    }
    // The device rotates at 1.5 s: the first unit of the new format is a keyframe.
    for frame in 45..<120 {
      let format: FormatDescription? = frame == 45 ? .h264(Self.rotated) : nil
      #expect(
        try Self.video(sink, frame: frame, keyframe: (frame - 45) % 30 == 0, format: format)
          == .written)
    }
    try sink.finish()
    #expect(reported.map(\.map) == ["init00000.mp4", "init00001.mp4", "init00001.mp4"])
    #expect(reported.map(\.discontinuity) == [false, true, false])
    #expect(reported.map(\.duration) == [135_000, 180_000, 45_000])
    let text = try #require(directory.read("index.m3u8"))
    #expect(text.contains("#EXT-X-DISCONTINUITY\n#EXT-X-MAP:URI=\"init00001.mp4\"\n"))
    // The new map describes the new SPS.
    let first = [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory.file("init00000.mp4"))))
    let second = [UInt8](
      try Data(contentsOf: URL(fileURLWithPath: directory.file("init00001.mp4"))))
    #expect(first != second)
    #expect(
      second
        == MP4InitSegment.bytes(
          tracks: MP4Track.tracks(for: TrackFormats(video: Self.rotated, audioApp: Self.aac))))
  }

  @Test func audioInANewFormatWaitsForTheNextKeyframe() throws {
    let directory = TemporaryDirectory()
    defer { directory.remove() }
    let sink = Self.makeSink(directory)
    var reported: [HLSSegment] = []
    sink.onSegment = { reported.append($0) }
    try sink.open(tracks: Self.tracks)
    let changed = try AACFormat(objectType: 2, sampleRate: 44_100, channels: 1)
    var results: [SinkWriteResult] = []
    for frame in 0..<60 {
      _ = try Self.video(sink, frame: frame, keyframe: frame % 30 == 0)
      results.append(try Self.audio(sink, frame: frame, format: frame == 10 ? .aac(changed) : nil))
    }
    try sink.finish()
    // Frames 10...29 are in a format no map describes yet; the keyframe at 30 cuts early.
    #expect(results[..<10].allSatisfy { $0 == .written })
    #expect(results[10..<30].allSatisfy { $0 == .discarded(.awaitingKeyframe) })
    #expect(results[30...].allSatisfy { $0 == .written })
    #expect(reported.map(\.map) == ["init00000.mp4", "init00001.mp4"])
    #expect(reported.map(\.discontinuity) == [false, true])
    #expect(sink.unstoredUnits == [0, 0, 0])
  }

  @Test func recoveryKeepsTheWholeFragmentsOfTheSegmentBeingWritten() throws {
    let directory = TemporaryDirectory()
    defer { directory.remove() }
    let sink = Self.makeSink(directory, target: 4)
    try sink.open(tracks: Self.tracks)
    // One whole 4 s segment, then 2.5 s of the next: two GOPs reach its file, the third is
    // being collected when the run dies.
    for frame in 0..<195 {
      _ = try Self.video(sink, frame: frame, keyframe: frame % 30 == 0)
      _ = try Self.audio(sink, frame: frame)
    }
    #expect(sink.unstoredUnits == [15, 15, 0])
    sink.close()
    let part = directory.file("seg00001.m4s.part")
    let written = try #require(FileManager.default.attributesOfItem(atPath: part)[.size] as? Int)
    // A torn fragment at the end, as a kill mid-write leaves it.
    let handle = try #require(FileHandle(forWritingAtPath: part))
    handle.seekToEndOfFile()
    handle.write(Data([0, 0, 0x10, 0, 0x6D, 0x6F, 0x6F, 0x66, 1, 2, 3]))
    handle.closeFile()

    let report = try HLSRecovery.recover(directory: directory.path, now: fixedDate)
    #expect(report.segments == 2)
    #expect(
      report.partials == [
        .kept(
          name: "seg00001.m4s", fileBytes: Int64(written + 11), keptBytes: Int64(written),
          duration: 180_000)
      ])
    let text = try #require(directory.read("index.m3u8"))
    #expect(text.contains("#EXT-X-MAP:URI=\"init00000.mp4\"\n"))
    #expect(text.hasSuffix("#EXTINF:2.000,\nseg00001.m4s\n#EXT-X-ENDLIST\n"))
    #expect(directory.read("journal")?.hasSuffix(" init00000.mp4\nend\n") == true)
  }

  @Test func aRunIntoATransportStreamRecordingIsRefused() throws {
    let directory = TemporaryDirectory()
    defer { directory.remove() }
    var configuration = HLSSink.Configuration(directory: directory.path)
    configuration.bufferCapacity = 4096
    let ts = HLSSink(configuration: configuration)
    try ts.open(tracks: Self.tracks)
    let unit = TSFixture.video(dts: 900_000, keyframe: true)
    let outgoing = OutgoingUnit(
      kind: .video, pts: 900_000, dts: 900_000, isKeyframe: true, isDiscontinuity: false,
      prefixLength: unit.prefix)
    _ = try unit.bytes.withUnsafeBytes { try ts.write(outgoing, bytes: $0, now: .origin) }
    try ts.finish()

    let fmp4 = Self.makeSink(directory)
    #expect(throws: SinkError.self) { try fmp4.open(tracks: Self.tracks) }
    #expect(directory.names.filter { $0.hasSuffix(".m4s") || $0.hasSuffix(".mp4") } == [])
  }
}
