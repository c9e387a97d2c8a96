import Foundation
import IngestCore
import Testing

@testable import IngestHLS

/// A playlist replacement that cannot write its copy (here the copy's name leads to /dev/full,
/// which fails every write with ENOSPC, as a full disk does) leaves the old playlist untouched.
@Test func fullDiskLeavesTheOldPlaylistUntouched() throws {
  let directory = TemporaryDirectory()
  defer { directory.remove() }
  let playlist = directory.file("index.m3u8")
  directory.write("index.m3u8", text: "#EXTM3U\nold\n")
  try FileManager.default.createSymbolicLink(
    atPath: playlist + ".tmp", withDestinationPath: "/dev/full")
  do {
    try HLSFileSystem.replace(playlist, with: "#EXTM3U\nnew\n")
    Issue.record("the replacement claimed success on a full disk")
  } catch {
    #expect(error.isDiskFull, "\(error)")
  }
  #expect(directory.read("index.m3u8") == "#EXTM3U\nold\n")
  #expect(directory.names == ["index.m3u8"], "the failed copy is removed")
}

/// A run holds disk space back for recovery and gives it back when it finishes; recovery after a
/// failed run removes it before writing.
@Test func spaceReserveLivesAsLongAsTheUnfinishedRecording() throws {
  let directory = TemporaryDirectory()
  defer { directory.remove() }
  let reserve = HLSSpaceReserve(directory: directory.path)
  reserve.ensure(segments: 0)
  #expect(directory.size(HLSSpaceReserve.fileName) == HLSSpaceReserve.step)
  reserve.ensure(segments: 200)
  #expect(directory.size(HLSSpaceReserve.fileName) == 2 * HLSSpaceReserve.step)
  directory.write(HLSJournal.fileName, text: "run index.m3u8 2 6\n")
  _ = try HLSRecovery.recover(directory: directory.path)
  #expect(!directory.names.contains(HLSSpaceReserve.fileName))
  #expect(directory.names.contains("index.m3u8"))

  let sink = HLSSink(configuration: HLSSink.Configuration(directory: directory.path))
  try sink.open(tracks: TrackFormats())
  #expect(directory.names.contains(HLSSpaceReserve.fileName))
  try sink.finish()
  #expect(!directory.names.contains(HLSSpaceReserve.fileName))
}
