import Foundation
import IngestCore
import Testing

@testable import IngestHLS

/// Transport packets shaped like our writer's: PAT/PMT prefix, units starting with a PES header.
enum TSFixture {
  static func packet(pid: UInt16, unitStart: Bool, keyframe: Bool = false, dts: Int64? = nil)
    -> [UInt8]
  {
    var bytes: [UInt8] = [0x47, (unitStart ? 0x40 : 0) | UInt8(pid >> 8), UInt8(pid & 0xFF), 0x10]
    if keyframe {
      bytes[3] = 0x30
      bytes += [1, 0x40]
    }
    if let dts {
      var header = [UInt8](repeating: 0, count: 19)
      header[2] = 1
      header[3] = pid == TSPacket.videoPID ? 0xE0 : 0xC0
      header[6] = 0x80
      header[7] = 0xC0
      header[8] = 10
      header.withUnsafeMutableBytes { raw in
        PESHeader.writeTimestamp(dts, prefix: 0b0011, to: raw, at: 9)
        PESHeader.writeTimestamp(dts, prefix: 0b0001, to: raw, at: 14)
      }
      bytes += header
    }
    return bytes + [UInt8](repeating: 0xFF, count: TSPacket.size - bytes.count)
  }

  static var psi: [UInt8] {
    PSI.packet(section: PSI.patSection(), pid: TSPacket.patPID)
      + packet(pid: TSPacket.pmtPID, unitStart: true)
  }

  /// A video unit of `packets` packets (PAT/PMT in front of a keyframe), and its prefix length.
  static func video(dts: Int64, keyframe: Bool, packets: Int = 2) -> (bytes: [UInt8], prefix: Int) {
    var bytes = packet(pid: TSPacket.videoPID, unitStart: true, keyframe: keyframe, dts: dts)
    for _ in 1..<packets { bytes += packet(pid: TSPacket.videoPID, unitStart: false) }
    return keyframe ? (psi + bytes, 2 * TSPacket.size) : (bytes, 0)
  }

  static func audio(dts: Int64, psi withPSI: Bool = false) -> (bytes: [UInt8], prefix: Int) {
    let bytes = packet(pid: TSPacket.audioAppPID, unitStart: true, keyframe: true, dts: dts)
    return withPSI ? (psi + bytes, 2 * TSPacket.size) : (bytes, 0)
  }
}

/// A fresh directory under the system temporary directory, removed by `remove()`.
struct TemporaryDirectory {
  let path: String

  init() {
    path =
      FileManager.default.temporaryDirectory.appendingPathComponent(
        "hls-test-" + UUID().uuidString
      ).path
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  }

  func file(_ name: String) -> String { path + "/" + name }
  func write(_ name: String, _ bytes: [UInt8]) {
    _ = FileManager.default.createFile(atPath: file(name), contents: Data(bytes))
  }
  func write(_ name: String, text: String) { write(name, Array(text.utf8)) }
  func read(_ name: String) -> String? { try? String(contentsOfFile: file(name), encoding: .utf8) }
  func size(_ name: String) -> Int? {
    (try? FileManager.default.attributesOfItem(atPath: file(name)))?[.size] as? Int
  }
  var names: [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
  }
  func remove() { try? FileManager.default.removeItem(atPath: path) }
}

private let header = "run index.m3u8 2 6\n"

private func completeLine(_ index: Int, bytes: Int, discontinuity: Bool = false) -> String {
  HLSJournal.segmentLine(
    HLSSegment(
      name: HLSSegment.fileName(index: index), duration: 180_000, bytes: Int64(bytes),
      discontinuity: discontinuity, programDateTime: fixedDate + Int64(index) * 2000))
}

/// A directory with two complete segments (journal and files) and the journal's `open` line for
/// the third.
private func interruptedRecording() -> TemporaryDirectory {
  let directory = TemporaryDirectory()
  directory.write("seg00000.ts", [UInt8](repeating: 0x47, count: 1880))
  directory.write("seg00001.ts", [UInt8](repeating: 0x47, count: 3760))
  directory.write(
    HLSJournal.fileName,
    text: header + completeLine(0, bytes: 1880) + completeLine(1, bytes: 3760)
      + HLSJournal.openLine(
        name: "seg00002.ts", discontinuity: true, programDateTime: fixedDate + 4000))
  return directory
}

@Test func partialSegmentIsCutToItsWholeUnitsAndKept() throws {
  let directory = interruptedRecording()
  defer { directory.remove() }
  // keyframe (PSI + 3 packets), a frame, a frame cut after one packet and 100 stray bytes.
  let whole =
    TSFixture.video(dts: 900_000, keyframe: true, packets: 3).bytes
    + TSFixture.audio(dts: 900_100).bytes + TSFixture.video(dts: 903_000, keyframe: false).bytes
  let torn =
    TSFixture.video(dts: 906_000, keyframe: false, packets: 4).bytes.prefix(188)
    + [UInt8](repeating: 0, count: 100)
  directory.write("seg00002.ts.part", whole + torn)

  let report = try HLSRecovery.recover(directory: directory.path, now: 0)

  #expect(
    report.partials == [
      .kept(
        name: "seg00002.ts", fileBytes: Int64(whole.count + 288), keptBytes: Int64(whole.count),
        duration: 6000)
    ])
  #expect(report.segments == 3)
  #expect(
    directory.names == ["index.m3u8", "journal", "seg00000.ts", "seg00001.ts", "seg00002.ts"])
  #expect(directory.size("seg00002.ts") == whole.count)
  let playlist = try #require(directory.read("index.m3u8"))
  #expect(playlist.contains("#EXT-X-PLAYLIST-TYPE:VOD\n"))
  #expect(
    playlist.contains(
      "#EXT-X-DISCONTINUITY\n#EXT-X-PROGRAM-DATE-TIME:2023-11-14T22:13:24.000Z\n#EXTINF:0.067,\nseg00002.ts\n#EXT-X-ENDLIST\n"
    ))
  let journal = HLSJournal.parse(try #require(directory.read(HLSJournal.fileName)))
  #expect(journal.isFinished)
  #expect(journal.segments.map(\.name) == ["seg00000.ts", "seg00001.ts", "seg00002.ts"])
}

@Test func partialWithoutAWholeKeyframeIsRemoved() throws {
  let directory = interruptedRecording()
  defer { directory.remove() }
  directory.write(
    "seg00002.ts.part",
    Array(TSFixture.video(dts: 900_000, keyframe: true, packets: 5).bytes.prefix(4 * 188)))

  let report = try HLSRecovery.recover(directory: directory.path, now: 0)

  #expect(report.partials == [.removed(name: "seg00002.ts", fileBytes: 752)])
  #expect(directory.names == ["index.m3u8", "journal", "seg00000.ts", "seg00001.ts"])
  let playlist = try #require(directory.read("index.m3u8"))
  #expect(playlist.hasSuffix("seg00001.ts\n#EXT-X-ENDLIST\n"))
  #expect(!playlist.contains("seg00002"))
}

@Test func trailingPSIPacketsMarkThePreviousUnitWhole() throws {
  let directory = TemporaryDirectory()
  defer { directory.remove() }
  let keyframe = TSFixture.video(dts: 900_000, keyframe: true).bytes
  directory.write("a.ts", keyframe + TSFixture.psi)
  let scan = try HLSSegmentScanner.scan(path: directory.file("a.ts"))
  #expect(scan.completeBytes == Int64(keyframe.count))
  #expect(scan.completeVideoUnits == 1)
  #expect(scan.isPlayable)
  #expect(scan.duration == HLSSegmentScanner.loneVideoDuration)

  directory.write(
    "b.ts", [0x47] + keyframe.dropFirst().prefix(375) + [0x00] + keyframe.dropFirst(377))
  let broken = try HLSSegmentScanner.scan(path: directory.file("b.ts"))
  #expect(broken.malformedOffset == 376)
  #expect(!broken.isPlayable)
}

@Test func audioOnlyPartialKeepsWholeFrames() throws {
  let directory = TemporaryDirectory()
  defer { directory.remove() }
  let bytes =
    TSFixture.audio(dts: 1000, psi: true).bytes + TSFixture.audio(dts: 2920).bytes
    + TSFixture.audio(dts: 4840).bytes
  directory.write("a.ts", bytes)
  let scan = try HLSSegmentScanner.scan(path: directory.file("a.ts"))
  #expect(!scan.hasVideo)
  #expect(scan.completeAudioUnits == 2)
  #expect(scan.duration == 3840)
  #expect(scan.isPlayable)
}

@Test func missingPlaylistIsRebuiltFromTheJournal() throws {
  let directory = interruptedRecording()
  defer { directory.remove() }
  let report = try HLSRecovery.recover(directory: directory.path, now: 0)
  #expect(report.partials.isEmpty)
  #expect(report.segments == 2)
  let playlist = try #require(directory.read("index.m3u8"))
  #expect(playlist.components(separatedBy: "#EXTINF:2.000,\n").count == 3)
  #expect(playlist.hasSuffix("#EXT-X-ENDLIST\n"))

  // A second recovery finds a finished recording and leaves it alone.
  let again = try HLSRecovery.recover(directory: directory.path, now: 0)
  #expect(again.wasFinished)
  #expect(directory.read("index.m3u8") == playlist)
  #expect(try !HLSRecovery.needsRecovery(directory: directory.path))
}

@Test func tornJournalLineIsReportedAndCompleteSegmentsKept() throws {
  let directory = interruptedRecording()
  defer { directory.remove() }
  let journal = try #require(directory.read(HLSJournal.fileName))
  directory.write(HLSJournal.fileName, text: journal + "segment seg00002.ts 2.0")
  let report = try HLSRecovery.recover(directory: directory.path, now: 0)
  #expect(report.journalIssues.count == 1)
  #expect(report.segments == 2)
  #expect(try #require(directory.read("index.m3u8")).contains("seg00001.ts\n#EXT-X-ENDLIST\n"))
}

@Test func segmentJournaledBeforeItsRenameIsCompleted() throws {
  let directory = interruptedRecording()
  defer { directory.remove() }
  let journal = try #require(directory.read(HLSJournal.fileName))
  directory.write(HLSJournal.fileName, text: journal + completeLine(2, bytes: 376))
  directory.write("seg00002.ts.part", [UInt8](repeating: 0x47, count: 376))
  let report = try HLSRecovery.recover(directory: directory.path, now: 0)
  #expect(report.renamed == ["seg00002.ts"])
  #expect(report.partials.isEmpty)
  #expect(directory.size("seg00002.ts") == 376)
  #expect(report.segments == 3)
}

@Test func missingSegmentFileIsReportedLost() throws {
  let directory = interruptedRecording()
  defer { directory.remove() }
  try FileManager.default.removeItem(atPath: directory.file("seg00001.ts"))
  let report = try HLSRecovery.recover(directory: directory.path, now: 0)
  #expect(report.lost == ["seg00001.ts"])
  #expect(report.segments == 1)
  #expect(!(try #require(directory.read("index.m3u8"))).contains("seg00001.ts"))
}

/// The journal records seg00002 as complete, but only a shorter `.part` of it is on disk (the
/// fuzz input `lost-segment-kept-from-its-part`): what is playable of the part is kept, and a
/// second recovery finds the recording finished, its playlist unchanged.
@Test func segmentKeptFromAShortPartIsFoundWholeByASecondRecovery() throws {
  let directory = interruptedRecording()
  defer { directory.remove() }
  let journal = try #require(directory.read(HLSJournal.fileName))
  directory.write(HLSJournal.fileName, text: journal + completeLine(2, bytes: 120_320))
  let whole =
    TSFixture.video(dts: 900_000, keyframe: true, packets: 3).bytes
    + TSFixture.video(dts: 903_000, keyframe: false).bytes
  directory.write("seg00002.ts.part", whole + [UInt8](repeating: 0, count: 50))

  let first = try HLSRecovery.recover(directory: directory.path, now: 0)
  #expect(first.lost.isEmpty)
  #expect(first.segments == 3)
  let playlist = try #require(directory.read("index.m3u8"))
  #expect(playlist.contains("seg00002.ts\n"))

  let second = try HLSRecovery.recover(directory: directory.path, now: 0)
  #expect(second.wasFinished)
  #expect(second.lost.isEmpty)
  #expect(directory.read("index.m3u8") == playlist)
  guard case .kept(_, _, let kept, _)? = first.partials.first else {
    Issue.record("the part was not kept: \(first)")
    return
  }
  #expect(directory.size("seg00002.ts") == Int(kept))
}

@Test func journalWithoutARunIsNotARecording() {
  let directory = TemporaryDirectory()
  defer { directory.remove() }
  directory.write(HLSJournal.fileName, text: "shopping list\n")
  #expect(throws: HLSError.notARecording(directory: directory.path)) {
    try HLSRecovery.recover(directory: directory.path)
  }
  #expect(directory.names == [HLSJournal.fileName])
}

@Test func directoryWithoutJournalIsNotARecording() {
  let directory = TemporaryDirectory()
  defer { directory.remove() }
  #expect(throws: HLSError.noJournal(directory: directory.path)) {
    try HLSRecovery.recover(directory: directory.path)
  }
  #expect(throws: HLSError.self) { try HLSRecovery.recover(directory: directory.file("none")) }
}
