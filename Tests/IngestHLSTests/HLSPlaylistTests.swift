import IngestCore
import Testing

@testable import IngestHLS

/// 2023-11-14T22:13:20.000Z
let fixedDate: Int64 = 1_700_000_000_000

func segment(_ index: Int, seconds: Double = 2, discontinuity: Bool = false) -> HLSSegment {
  HLSSegment(
    name: HLSSegment.fileName(index: index), duration: Int64(seconds * 90_000), bytes: 1880,
    discontinuity: discontinuity, programDateTime: fixedDate + Int64(index) * 2000)
}

@Test func playlistListsTagsInOrderWithEndList() {
  var playlist = HLSPlaylist(window: 0, targetDuration: 2)
  playlist.append(segment(0))
  playlist.append(segment(1, seconds: 2.002, discontinuity: true))
  playlist.isEnded = true
  #expect(
    playlist.rendered == """
      #EXTM3U
      #EXT-X-VERSION:3
      #EXT-X-INDEPENDENT-SEGMENTS
      #EXT-X-TARGETDURATION:3
      #EXT-X-MEDIA-SEQUENCE:0
      #EXT-X-PLAYLIST-TYPE:EVENT
      #EXT-X-PROGRAM-DATE-TIME:2023-11-14T22:13:20.000Z
      #EXTINF:2.000,
      seg00000.ts
      #EXT-X-DISCONTINUITY
      #EXT-X-PROGRAM-DATE-TIME:2023-11-14T22:13:22.000Z
      #EXTINF:2.002,
      seg00001.ts
      #EXT-X-ENDLIST

      """)
}

@Test func windowSlidesAndCountsRemovedSegmentsAndDiscontinuities() {
  var playlist = HLSPlaylist(window: 3, targetDuration: 2)
  for index in 0..<7 { playlist.append(segment(index, discontinuity: index == 1 || index == 5)) }
  #expect(playlist.segments.map(\.name) == ["seg00004.ts", "seg00005.ts", "seg00006.ts"])
  #expect(playlist.mediaSequence == 4)
  #expect(playlist.discontinuitySequence == 1)
  let text = playlist.rendered
  #expect(text.contains("#EXT-X-MEDIA-SEQUENCE:4\n#EXT-X-DISCONTINUITY-SEQUENCE:1\n"))
  #expect(!text.contains("PLAYLIST-TYPE"))
  #expect(!text.contains("ENDLIST"))
  #expect(text.components(separatedBy: "#EXT-X-DISCONTINUITY\n").count == 2)
}

@Test func targetDurationIsTheRoundedUpLongestSegmentAndNeverShrinks() {
  var playlist = HLSPlaylist(window: 1, targetDuration: 2)
  playlist.append(segment(0, seconds: 1.5))
  #expect(playlist.targetDuration == 2)
  playlist.append(segment(1, seconds: 3.2))
  #expect(playlist.targetDuration == 4)
  playlist.append(segment(2, seconds: 2))
  #expect(playlist.targetDuration == 4)
  #expect(playlist.rendered.contains("#EXT-X-TARGETDURATION:4\n"))
}

@Test func vodPlaylistIsEnded() {
  var playlist = HLSPlaylist(kind: .vod, targetDuration: 1)
  playlist.append(segment(0))
  #expect(playlist.rendered.contains("#EXT-X-PLAYLIST-TYPE:VOD\n"))
  #expect(playlist.rendered.hasSuffix("seg00000.ts\n#EXT-X-ENDLIST\n"))
}

@Test func secondsAreFormattedAndParsedExactly() {
  #expect(HLSSegment.seconds(180_180, decimals: 3) == "2.002")
  #expect(HLSSegment.seconds(180_001, decimals: 6) == "2.000011")
  #expect(HLSSegment.ticks(seconds: "2.000011") == 180_001)
  #expect(HLSSegment.ticks(seconds: "2") == 180_000)
  #expect(HLSSegment.ticks(seconds: "-1") == nil)
  #expect(HLSSegment.ticks(seconds: "1.") == nil)
  #expect(HLSSegment.ticks(seconds: "x") == nil)
  for ticks: Int64 in [0, 1, 3003, 180_001, 179_999, 270_000, 12_345_678] {
    #expect(HLSSegment.ticks(seconds: Substring(HLSSegment.seconds(ticks, decimals: 6))) == ticks)
  }
  #expect(HLSSegment.wholeSecondsRoundedUp(180_000) == 2)
  #expect(HLSSegment.wholeSecondsRoundedUp(180_001) == 3)
}

@Test func segmentFileNamesRoundTrip() {
  #expect(HLSSegment.fileName(index: 42) == "seg00042.ts")
  #expect(HLSSegment.fileName(index: 123_456) == "seg123456.ts")
  #expect(HLSSegment.index(ofFileName: "seg00042.ts") == 42)
  #expect(HLSSegment.index(ofFileName: "seg00042.ts.part") == 42)
  #expect(HLSSegment.index(ofFileName: "seg.ts") == nil)
  #expect(HLSSegment.index(ofFileName: "index.m3u8") == nil)
  #expect(HLSSegment.index(ofFileName: "seg0004x.ts") == nil)
}

@Test func programDateTimeFormatsAndParses() {
  #expect(HLSDateTime.format(0) == "1970-01-01T00:00:00.000Z")
  #expect(HLSDateTime.format(fixedDate + 123) == "2023-11-14T22:13:20.123Z")
  #expect(HLSDateTime.format(951_782_400_000) == "2000-02-29T00:00:00.000Z")
  #expect(HLSDateTime.format(-1) == "1969-12-31T23:59:59.999Z")
  for value: Int64 in [0, 951_782_400_000, fixedDate + 999, 4_102_444_800_000, 86_399_999] {
    #expect(HLSDateTime.parse(Substring(HLSDateTime.format(value))) == value)
  }
  #expect(HLSDateTime.parse("2023-13-14T22:13:20.000Z") == nil)
  #expect(HLSDateTime.parse("2023-11-14 22:13:20.000Z") == nil)
  #expect(HLSDateTime.parse("2023-11-14T22:13:20Z") == nil)
  #expect(HLSDateTime.now() > fixedDate)
}
