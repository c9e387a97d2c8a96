import Testing

@testable import IngestUpload

private let destination = "http://127.0.0.1:8080/rec/"

private let sample = """
  upload 1 http://127.0.0.1:8080/rec/
  send seg00000.ts 1880
  done seg00000.ts 1880
  send seg00001.ts 3760

  """

@Test func journalKnowsWhatWasConfirmedAndWhatWasInFlight() {
  let journal = UploadJournal.parse(sample, destination: destination)
  #expect(journal.confirmed == ["seg00000.ts": 1880])
  #expect(journal.started == ["seg00001.ts"])
  #expect(journal.skippedLines == 0)
  #expect(!journal.endsWithTornLine)
}

/// A `sent` line marks a started PUT whose whole body went out; the session's `send` of the
/// same file again clears it, `done` settles it, and a `sent` without its `send` counts for
/// nothing.
@Test func aBodySentIsKnownUntilThePutIsSentAgainOrConfirmed() {
  let text = """
    upload 1 http://127.0.0.1:8080/rec/
    send seg00000.ts 1880
    sent seg00000.ts 1880
    send seg00001.ts 3760
    sent seg00001.ts 3760
    done seg00001.ts 3760
    sent seg00002.ts 1880

    """
  let journal = UploadJournal.parse(text, destination: destination)
  #expect(journal.started == ["seg00000.ts"])
  #expect(journal.bodySent == ["seg00000.ts"])
  #expect(journal.confirmed == ["seg00001.ts": 3760])
  var resent = journal
  resent.recordStarted("seg00000.ts")
  #expect(resent.bodySent.isEmpty)
}

@Test func journalCutAtEveryByteNeverInventsAConfirmation() {
  let full = UploadJournal.parse(sample, destination: destination)
  for cut in 0...sample.utf8.count {
    let text = String(decoding: sample.utf8.prefix(cut), as: UTF8.self)
    let journal = UploadJournal.parse(text, destination: destination)
    // Whatever a torn write left, the journal says at most what the whole one says.
    for (name, bytes) in journal.confirmed { #expect(full.confirmed[name] == bytes) }
    #expect(journal.endsWithTornLine == (cut > 0 && !text.hasSuffix("\n")))
  }
}

@Test func aTornLineEndedByTheNextSessionStaysMalformed() {
  let torn = "upload 1 \(destination)\ndone seg00000.ts 18" + UploadJournal.tornLineEnd
  let journal = UploadJournal.parse(torn, destination: destination)
  #expect(journal.confirmed.isEmpty)
  #expect(journal.skippedLines == 1)
}

@Test func anotherDestinationStartsFromNothing() {
  let text =
    sample + UploadJournal.uploadLine(destination: "http://other/rec/")
    + UploadJournal.doneLine("seg00001.ts", bytes: 3760)
  #expect(UploadJournal.parse(text, destination: destination).confirmed.isEmpty)
  #expect(
    UploadJournal.parse(text, destination: "http://other/rec/").confirmed == ["seg00001.ts": 3760])
  let back = text + UploadJournal.uploadLine(destination: destination)
  #expect(UploadJournal.parse(back, destination: destination).confirmed.isEmpty)
}

@Test func malformedLinesAreSkipped() {
  let text =
    "upload 1 \(destination)\ndone ../x 5\ndone seg00000.ts many\nhello\ndone seg00000.ts 5\n"
  let journal = UploadJournal.parse(text, destination: destination)
  #expect(journal.confirmed == ["seg00000.ts": 5])
  #expect(journal.skippedLines == 3)
}
