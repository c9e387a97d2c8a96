import Foundation
import IngestPOSIX
import Testing

@testable import IngestHLS

/// A file outside the recording that a planted symbolic link points to.
private func outsideFile(_ bytes: [UInt8]) -> TemporaryDirectory {
  let directory = TemporaryDirectory()
  directory.write("victim", bytes)
  return directory
}

private func unfinishedRecording() -> TemporaryDirectory {
  let directory = TemporaryDirectory()
  directory.write("seg00000.ts", [UInt8](repeating: 0x47, count: 1880))
  directory.write(
    HLSJournal.fileName,
    text: "run index.m3u8 2 6\n"
      + HLSJournal.segmentLine(
        HLSSegment(
          name: "seg00000.ts", duration: 180_000, bytes: 1880, discontinuity: false,
          programDateTime: 1_700_000_000_000)))
  return directory
}

@Test func aSymlinkedPartIsRefusedAndItsTargetKeptWhole() throws {
  let directory = unfinishedRecording()
  let outside = outsideFile(
    TSFixture.video(dts: 900_000, keyframe: true, packets: 3).bytes + [1, 2, 3])
  defer {
    directory.remove()
    outside.remove()
  }
  let victim = try Data(contentsOf: URL(fileURLWithPath: outside.file("victim")))
  let journal = directory.read(HLSJournal.fileName)
  try FileManager.default.createSymbolicLink(
    atPath: directory.file("seg00001.ts.part"), withDestinationPath: outside.file("victim"))

  #expect(
    throws: HLSError.file(
      FileError(
        operation: "follow the symbolic link", path: directory.file("seg00001.ts.part"),
        errno: ELOOP))
  ) { try HLSRecovery.recover(directory: directory.path, now: 0) }

  #expect(try Data(contentsOf: URL(fileURLWithPath: outside.file("victim"))) == victim)
  #expect(directory.read(HLSJournal.fileName) == journal)
  #expect(directory.names == ["journal", "seg00000.ts", "seg00001.ts.part"])
}

@Test func aSymlinkedJournalIsRefusedAndNothingIsAppendedToItsTarget() throws {
  let directory = unfinishedRecording()
  let journalText = try #require(directory.read(HLSJournal.fileName))
  let outside = outsideFile(Array(journalText.utf8))
  defer {
    directory.remove()
    outside.remove()
  }
  try FileManager.default.removeItem(atPath: directory.file(HLSJournal.fileName))
  try FileManager.default.createSymbolicLink(
    atPath: directory.file(HLSJournal.fileName), withDestinationPath: outside.file("victim"))

  #expect(
    throws: HLSError.file(
      FileError(
        operation: "follow the symbolic link", path: directory.file(HLSJournal.fileName),
        errno: ELOOP))
  ) { try HLSRecovery.recover(directory: directory.path, now: 0) }

  #expect(outside.read("victim") == journalText)
  #expect(directory.names == ["journal", "seg00000.ts"])
}
