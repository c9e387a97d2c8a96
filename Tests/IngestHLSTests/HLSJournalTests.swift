import Testing

@testable import IngestHLS

private let sample = """
  run index.m3u8 2 6
  open seg00000.ts 0 2023-11-14T22:13:20.000Z
  segment seg00000.ts 2.000000 1880 0 2023-11-14T22:13:20.000Z
  open seg00001.ts 1 2023-11-14T22:13:22.000Z
  segment seg00001.ts 2.002000 3760 1 2023-11-14T22:13:22.000Z
  open seg00002.ts 0 2023-11-14T22:13:24.002Z

  """

@Test func journalParsesSegmentsAndTheOpenSegment() {
  let journal = HLSJournal.parse(sample)
  #expect(journal.issues.isEmpty)
  #expect(journal.playlistName == "index.m3u8")
  #expect(journal.targetDuration == 2)
  #expect(journal.window == 6)
  #expect(journal.segments.map(\.name) == ["seg00000.ts", "seg00001.ts"])
  #expect(journal.segments[1].duration == 180_180)
  #expect(journal.segments[1].bytes == 3760)
  #expect(journal.segments[1].discontinuity)
  #expect(journal.segments[1].programDateTime == 1_700_000_002_000)
  #expect(journal.openSegment?.name == "seg00002.ts")
  #expect(journal.openSegment?.programDateTime == 1_700_000_004_002)
  #expect(!journal.isFinished)
}

@Test func journalEndFinishesAndANewRunReopens() {
  var journal = HLSJournal.parse(sample + "end\n")
  #expect(journal.isFinished)
  #expect(journal.openSegment == nil)
  journal = HLSJournal.parse(sample + "end\nrun index.m3u8 2 0\n")
  #expect(!journal.isFinished)
  #expect(journal.window == 0)
}

@Test func journalSkipsATornLastLine() {
  let torn = sample + "segment seg00002.ts 2.00"
  let journal = HLSJournal.parse(torn)
  #expect(journal.segments.count == 2)
  #expect(journal.openSegment?.name == "seg00002.ts")
  #expect(journal.issues == [HLSJournal.Issue(line: 7, reason: "torn line (no newline)")])
}

@Test func journalReportsMalformedLinesAndKeepsGoing() {
  let text = """
    segment seg00000.ts 2.000000 1880 0 2023-11-14T22:13:20.000Z
    segment ../etc/passwd 2.0 10 0 2023-11-14T22:13:20.000Z
    segment seg00001.ts two 10 0 2023-11-14T22:13:20.000Z
    segment seg00000.ts 2.000000 1880 0 2023-11-14T22:13:20.000Z
    run ../x.m3u8 2 6
    bogus
    segment seg00002.ts 2.000000 1880 1 2023-11-14T22:13:24.000Z

    """
  let journal = HLSJournal.parse(text)
  #expect(journal.segments.map(\.name) == ["seg00000.ts", "seg00002.ts"])
  #expect(journal.issues.map(\.line) == [2, 3, 5, 6])
  #expect(journal.playlistName == nil)
}

@Test func aSegmentRecordedAgainTakesItsNewerRecordInItsFirstPlace() {
  let text = """
    segment seg00000.ts 2.000000 1880 0 2023-11-14T22:13:20.000Z
    segment seg00001.ts 2.000000 120320 0 2023-11-14T22:13:22.000Z
    segment seg00002.ts 2.000000 1880 0 2023-11-14T22:13:24.000Z
    segment seg00001.ts 0.033333 752 0 2023-11-14T22:13:22.000Z

    """
  let journal = HLSJournal.parse(text)
  #expect(journal.issues.isEmpty)
  #expect(journal.segments.map(\.name) == ["seg00000.ts", "seg00001.ts", "seg00002.ts"])
  #expect(journal.segments.map(\.bytes) == [1880, 752, 1880])
}

@Test func journalLinesRoundTripThroughTheParser() {
  let original = HLSSegment(
    name: "seg00007.ts", duration: 180_001, bytes: 99_452, discontinuity: true,
    programDateTime: 1_700_000_000_123)
  let text =
    HLSJournal.runLine(playlist: "live.m3u8", targetDuration: 3, window: 0)
    + HLSJournal.openLine(name: "seg00007.ts", discontinuity: true, programDateTime: 5)
    + HLSJournal.segmentLine(original) + HLSJournal.endLine
  let journal = HLSJournal.parse(text)
  #expect(journal.issues.isEmpty)
  #expect(journal.segments == [original])
  #expect(journal.playlistName == "live.m3u8")
  #expect(journal.isFinished)
}
