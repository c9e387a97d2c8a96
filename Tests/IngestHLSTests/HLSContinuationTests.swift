import Foundation
import IngestCore
import Testing

@testable import IngestHLS

/// A directory whose journal records `seg00000.ts` as complete, holding `units`.
private func recording(_ units: [UInt8]) -> TemporaryDirectory {
  let directory = TemporaryDirectory()
  directory.write("seg00000.ts", units)
  directory.write(
    HLSJournal.fileName,
    text: "run index.m3u8 2 6\n"
      + HLSJournal.segmentLine(
        HLSSegment(
          name: "seg00000.ts", duration: 6000, bytes: Int64(units.count), discontinuity: false,
          programDateTime: 0)))
  return directory
}

@Test func aNewRunStartsAGapAfterTheLastWholeUnitOfAnyTrack() {
  // Whole: the keyframe at 900 000 (lasting until the next video frame at 903 000) and two
  // audio frames; the last video frame is whole only once something follows it.
  let units =
    TSFixture.video(dts: 900_000, keyframe: true).bytes + TSFixture.audio(dts: 901_000).bytes
    + TSFixture.audio(dts: 902_920).bytes + TSFixture.video(dts: 903_000, keyframe: false).bytes
  let directory = recording(units)
  defer { directory.remove() }
  // Audio ends at 902 920 + 1 920, after the video's 903 000.
  #expect(HLSContinuation.timelineStart(directory: directory.path) == Int64(904_840 + 90_000))
}

@Test func aPartialSegmentLaterThanTheJournalsLastCounts() {
  let directory = recording(TSFixture.video(dts: 900_000, keyframe: true).bytes + TSFixture.psi)
  defer { directory.remove() }
  directory.write(
    "seg00001.ts.part",
    TSFixture.video(dts: 960_000, keyframe: true).bytes
      + TSFixture.video(dts: 963_000, keyframe: false).bytes)
  #expect(HLSContinuation.timelineStart(directory: directory.path) == Int64(963_000 + 90_000))
}

@Test func nothingToContinueLeavesTheDefault() throws {
  let empty = TemporaryDirectory()
  defer { empty.remove() }
  #expect(HLSContinuation.timelineStart(directory: empty.path) == nil)
  #expect(HLSContinuation.timelineStart(directory: empty.path + "/missing") == nil)
  // A FIFO under a segment's name is not opened (that would block until a writer came).
  #expect(mkfifo(empty.file("seg00000.ts.part"), 0o600) == 0)
  #expect(HLSContinuation.timelineStart(directory: empty.path) == nil)
}
