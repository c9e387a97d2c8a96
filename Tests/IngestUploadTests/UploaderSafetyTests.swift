import Foundation
import IngestCore
import IngestPOSIX
import Testing

@testable import IngestUpload

/// A clock whose sleeps return at once, moving its time to the deadline.
private final class InstantClock: PacingClock, @unchecked Sendable {
  private var time = MonotonicInstant.origin
  func now() -> MonotonicInstant { time }
  func sleep(until deadline: MonotonicInstant) { time = max(time, deadline) }
}

/// A recording directory under the system's temporary directory, removed by `remove`.
private struct Scratch {
  let path = FileManager.default.temporaryDirectory.appendingPathComponent(
    "upload-test-" + UUID().uuidString
  ).path

  init() {
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  }

  func file(_ name: String) -> String { path + "/" + name }
  func write(_ name: String, _ text: String) {
    _ = FileManager.default.createFile(atPath: file(name), contents: Data(text.utf8))
  }
  func read(_ name: String) -> String? { try? String(contentsOfFile: file(name), encoding: .utf8) }
  var names: [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
  }
  func link(_ name: String, to target: String) throws {
    try FileManager.default.createSymbolicLink(atPath: file(name), withDestinationPath: target)
  }
  func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// Nothing listens on port 1: a request would fail, so these tests show no request is needed.
private let nowhere = "http://127.0.0.1:1/rec/"

private let finishedJournal = """
  run index.m3u8 2 6
  segment seg00000.ts 2.000000 1880 0 2026-03-01T12:34:56.789Z
  end

  """

private func uploader(
  _ directory: String, follow: Bool = false, journal: String? = nil,
  events: ((UploadEvent) -> Void)? = nil, stop: @escaping () -> String? = { nil }
) throws -> Uploader {
  var options = UploadOptions(directory: directory, destination: try UploadDestination(nowhere))
  options.follow = follow
  options.journalPath = journal
  options.retry = RetryPolicy(initialDelay: 0.01, maximumDelay: 0.01)
  options.giveUpAfter = 0.05
  return Uploader(
    options: options, clock: InstantClock(), seed: 1, onEvent: events ?? { _ in },
    stopRequested: stop)
}

@Test func aSecondUploaderOfADirectoryIsRefusedAndWritesNothing() throws {
  let recording = Scratch()
  defer { recording.remove() }
  recording.write("journal", finishedJournal)
  let first = try UploadJournalFile(
    path: recording.file(UploadJournal.fileName), directory: recording.path,
    destination: nowhere)
  let before = recording.read(UploadJournal.fileName)

  let summary = try uploader(recording.path).run()

  #expect(
    summary.failure
      == .locked(directory: recording.path, journal: recording.file(UploadJournal.fileName)))
  #expect(summary.failure?.description.contains(recording.path) == true)
  #expect(recording.read(UploadJournal.fileName) == before)
  withExtendedLifetime(first) {}
}

@Test func aSymlinkedSegmentIsRefusedBeforeItsSendLine() throws {
  let recording = Scratch()
  let elsewhere = Scratch()
  defer {
    recording.remove()
    elsewhere.remove()
  }
  recording.write("journal", finishedJournal)
  elsewhere.write("secret.ts", String(repeating: "s", count: 1880))
  try recording.link("seg00000.ts", to: elsewhere.file("secret.ts"))

  let summary = try uploader(recording.path).run()

  #expect(summary.failure == .symbolicLink(path: recording.file("seg00000.ts")))
  #expect(summary.segmentsUploaded == 0)
  #expect(recording.read(UploadJournal.fileName)?.contains("send") == false)
}

@Test func aSymlinkedJournalIsRefusedAndWhatItPointsToIsUntouched() throws {
  let recording = Scratch()
  let elsewhere = Scratch()
  defer {
    recording.remove()
    elsewhere.remove()
  }
  recording.write("journal", finishedJournal)
  elsewhere.write("notes", "keep me\n")
  try recording.link(UploadJournal.fileName, to: elsewhere.file("notes"))

  let summary = try uploader(recording.path).run()

  #expect(summary.failure == .symbolicLink(path: recording.file(UploadJournal.fileName)))
  #expect(elsewhere.read("notes") == "keep me\n")
}

@Test func aSymlinkedRecordingJournalIsRefused() throws {
  let recording = Scratch()
  let elsewhere = Scratch()
  defer {
    recording.remove()
    elsewhere.remove()
  }
  elsewhere.write("journal", finishedJournal)
  try recording.link("journal", to: elsewhere.file("journal"))

  let summary = try uploader(recording.path).run()

  #expect(summary.failure == .symbolicLink(path: recording.file("journal")))
}

@Test func aDirectoryWithoutARecordingGetsNoUploadJournal() throws {
  let directory = Scratch()
  defer { directory.remove() }

  let summary = try uploader(directory.path).run()

  guard case .recording = summary.failure else {
    Issue.record("\(String(describing: summary.failure))")
    return
  }
  #expect(directory.names.isEmpty)
}

@Test func theJournalCanLiveOutsideTheRecording() throws {
  let recording = Scratch()
  let elsewhere = Scratch()
  defer {
    recording.remove()
    elsewhere.remove()
  }
  // Nothing to send yet: a run line and no segment, so no request is made.
  recording.write("journal", "run index.m3u8 2 6\n")
  let names = recording.names

  let summary = try uploader(recording.path, journal: elsewhere.file("rec.journal")).run()

  #expect(summary.failure == nil)
  #expect(recording.names == names)
  #expect(elsewhere.read("rec.journal") == "upload 1 \(nowhere)\n")
}

@Test func followWaitsForARecordingToStartUntilStopped() throws {
  let directory = Scratch()
  defer { directory.remove() }
  var events: [UploadEvent] = []

  let summary = try uploader(
    directory.path, follow: true, events: { events.append($0) },
    stop: { events.isEmpty ? nil : "SIGTERM" }
  ).run()

  #expect(summary.failure == nil)
  #expect(summary.stopSignal == "SIGTERM")
  #expect(events == [.waiting(directory: directory.path)])
}

@Test func aStopDuringRetriesEndsTheRunWithoutAFailure() throws {
  let recording = Scratch()
  defer { recording.remove() }
  recording.write("journal", finishedJournal)
  recording.write("seg00000.ts", String(repeating: "v", count: 1880))
  var retries = 0

  let summary = try uploader(
    recording.path,
    events: { if case .retry = $0 { retries += 1 } },
    stop: { retries > 0 ? "SIGINT" : nil }
  ).run()

  #expect(summary.stopSignal == "SIGINT")
  #expect(summary.failure == nil)
  #expect(retries == 1)
  #expect(recording.read(UploadJournal.fileName)?.contains("send seg00000.ts 1880\n") == true)
  #expect(recording.read(UploadJournal.fileName)?.contains("done") == false)
}

/// --give-up-after 8 gives up when the file has failed for 8 s, not after the backoff wait that
/// crosses it (8 s once gave up after 12.6).
@Test func givingUpHappensAtTheLimitNotAfterTheNextWait() throws {
  let recording = Scratch()
  defer { recording.remove() }
  recording.write("journal", finishedJournal)
  recording.write("seg00000.ts", String(repeating: "G", count: 1880))
  var options = UploadOptions(
    directory: recording.path, destination: try UploadDestination(nowhere))
  options.retry = RetryPolicy(initialDelay: 1, maximumDelay: 5)
  options.giveUpAfter = 8
  let clock = InstantClock()
  let summary = Uploader(
    options: options, clock: clock, seed: 1, onEvent: { _ in }, stopRequested: { nil }
  ).run()
  guard case .gaveUp(_, let seconds, _)? = summary.failure else {
    Issue.record("did not give up: \(String(describing: summary.failure))")
    return
  }
  #expect(seconds == 8, "gave up after \(seconds) s")
  #expect(clock.now() <= .at(.seconds(8)))
}
