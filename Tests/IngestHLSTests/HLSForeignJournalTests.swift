import Foundation
import Testing

@testable import IngestHLS

/// A file named `journal` that is not one of ours: recovery refuses the directory and writes
/// nothing; what the file holds reaches a message only as printable ASCII.
@Suite struct HLSForeignJournalTests {
  /// Bytes of no journal, with newlines among them (the first byte is not a journal word).
  private static let binary: [UInt8] = (0..<2000).map { UInt8(truncatingIfNeeded: $0 &* 151 &+ 7) }

  @Test(arguments: [true, false])
  func aBinaryJournalIsNotARecording(withNewlines: Bool) throws {
    let directory = TemporaryDirectory()
    defer { directory.remove() }
    let bytes = withNewlines ? Self.binary : Self.binary.filter { $0 != 0x0A }
    directory.write(HLSJournal.fileName, bytes)
    #expect(throws: HLSError.notARecording(directory: directory.path)) {
      try HLSRecovery.recover(directory: directory.path, now: 0)
    }
    #expect(directory.names == ["journal"])
    #expect(try Data(contentsOf: URL(fileURLWithPath: directory.file("journal"))) == Data(bytes))
  }

  /// A run killed in its first line leaves a torn line of journal text: still a recording.
  @Test func aTornFirstLineIsStillARecording() {
    let journal = HLSJournal.parse("run index.m3u8 2")
    #expect(journal.endsWithTornLine && !journal.isForeign)
    #expect(HLSJournal.parse("\u{1}\u{2}\u{3}").isForeign)
  }

  @Test func unknownLinesAreQuotedAsPrintableASCII() {
    let journal = HLSJournal.parse("bad\u{1B}[2Jword\u{FF} x\n")
    #expect(
      journal.issues.map(\.description) == [#"line 1: unknown line 'bad\x1B[2Jword\xC3\xBF'"#])
    #expect(journal.isForeign)
  }
}
