import Foundation
import IngestTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Runs the real `ingest` binary into HLS directories and reads the result back with ffmpeg.
enum HLSHarness {
  /// The package root, found from this file's path (Tests/IntegrationTests/<file>).
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().path

  static let ingest = CommandRunner.ingest

  struct Output {
    var status: Int32
    var stdout: String
    var stderr: String
  }

  /// Runs a program to completion.
  @discardableResult
  static func run(_ program: String, _ arguments: [String]) throws -> Output {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: program)
    process.arguments = arguments
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    // Read stderr on another thread so neither pipe can fill up and stall the child.
    let errData = LockedData()
    let reader = Thread { errData.set(err.fileHandleForReading.readDataToEndOfFile()) }
    reader.start()
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    while !errData.isSet { usleep(1000) }
    return Output(
      status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
      stderr: String(decoding: errData.get(), as: UTF8.self))
  }

  final class LockedData: @unchecked Sendable {
    private let lock = NSLock()
    private var data: Data?
    func set(_ value: Data) { lock.withLock { data = value } }
    var isSet: Bool { lock.withLock { data != nil } }
    func get() -> Data { lock.withLock { data ?? Data() } }
  }

  /// Every packet's decode time in a segment file, as ffprobe reads it (90 kHz).
  static func decodeTimes(_ segment: String) throws -> [Int64] {
    let result = try run(
      "/usr/bin/ffprobe",
      ["-v", "error", "-show_entries", "packet=dts", "-of", "csv=p=0", segment])
    guard result.status == 0 else { throw HarnessError("ffprobe \(segment): \(result.stderr)") }
    return result.stdout.split(separator: "\n").compactMap { Int64($0) }
  }

  static func ffmpegErrors(_ input: String) throws -> String {
    let result = try run(
      "/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-i", input, "-f", "null", "-"])
    return result.stderr + (result.status == 0 ? "" : "exit status \(result.status)")
  }

  /// Dumps captured once for the whole suite: 10 s of 720x1280 video at 30 fps with two AAC
  /// tracks (app and mic), the same with a mic clock jump, and audio only.
  struct Media {
    var directory: String
    var dump: String
    var jumpDump: String
    var audioDump: String
  }

  static let media: Result<Media, any Error> = Result {
    if !FileManager.default.isExecutableFile(atPath: ingest) {
      try run("/usr/bin/env", ["swift", "build", "--package-path", root, "--product", "ingest"])
    }
    guard FileManager.default.isExecutableFile(atPath: ingest) else {
      throw HarnessError("build the package first: \(ingest) is missing")
    }
    let directory = ProcessFixtureDirectory.make(prefix: "hls-media")
    let mp4 = directory + "/three.mp4"
    let encode = try run(
      "/usr/bin/ffmpeg",
      [
        "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=720x1280:rate=30",
        "-f",
        "lavfi", "-i", "sine=sample_rate=48000", "-f", "lavfi", "-i",
        "sine=frequency=660:sample_rate=48000", "-t", "10", "-map", "0", "-map", "1", "-map", "2",
        "-c:v", "libx264", "-preset", "veryfast", "-g", "60", "-bf", "0", "-c:a", "aac", mp4,
      ])
    guard encode.status == 0 else { throw HarnessError("ffmpeg: \(encode.stderr)") }
    let media = Media(
      directory: directory, dump: directory + "/three.dump", jumpDump: directory + "/jump.dump",
      audioDump: directory + "/audio.dump")
    for (output, extra) in [
      (media.dump, [String]()), (media.jumpDump, ["--mic-clock-jump", "-3@4"]),
      (media.audioDump, ["--video", "none"]),
    ] {
      let capture = try run(ingest, ["capture", mp4, "-o", output] + extra)
      guard capture.status == 0 else { throw HarnessError("capture: \(capture.stderr)") }
    }
    return media
  }

  struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
  }

  static func temporaryDirectory(_ label: String) -> String {
    NSTemporaryDirectory() + "hls-\(label)-" + UUID().uuidString
  }

  /// A media playlist read back: tags and segment entries.
  struct Playlist {
    var lines: [String]
    var targetDuration: Int?
    var mediaSequence: Int?
    var entries: [(name: String, duration: Double, discontinuity: Bool, date: String?)] = []
    var ended: Bool { lines.last == "#EXT-X-ENDLIST" }

    init(path: String) throws {
      let text = try String(contentsOfFile: path, encoding: .utf8)
      lines = text.split(separator: "\n").map(String.init)
      var duration: Double?
      var discontinuity = false
      var date: String?
      for line in lines {
        if line.hasPrefix("#EXT-X-TARGETDURATION:") {
          targetDuration = Int(line.dropFirst(22))
        } else if line.hasPrefix("#EXT-X-MEDIA-SEQUENCE:") {
          mediaSequence = Int(line.dropFirst(22))
        } else if line == "#EXT-X-DISCONTINUITY" {
          discontinuity = true
        } else if line.hasPrefix("#EXT-X-PROGRAM-DATE-TIME:") {
          date = String(line.dropFirst(25))
        } else if line.hasPrefix("#EXTINF:") {
          duration = Double(line.dropFirst(8).prefix(while: { $0 != "," }))
        } else if !line.hasPrefix("#"), let value = duration {
          entries.append((line, value, discontinuity, date))
          duration = nil
          discontinuity = false
          date = nil
        }
      }
    }
  }

  /// Names of the segments a journal records as complete.
  static func journaledSegments(_ directory: String) -> [String] {
    journaledSizes(directory).map(\.name)
  }

  /// Names and recorded sizes of the segments a journal records as complete.
  static func journaledSizes(_ directory: String) -> [(name: String, bytes: Int)] {
    let text = (try? String(contentsOfFile: directory + "/journal", encoding: .utf8)) ?? ""
    return text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
      .filter { $0.hasPrefix("segment ") }.map { $0.split(separator: " ") }
      .map { (String($0[1]), Int($0[3]) ?? -1) }
  }
}

@Suite(.serialized) struct HLSIntegrationTests {
  @Test func replayWritesDecodableSegmentsAndPlaylist() throws {
    let media = try HLSHarness.media.get()
    let directory = HLSHarness.temporaryDirectory("replay")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let status = directory + ".status"
    defer { try? FileManager.default.removeItem(atPath: status) }
    let run = try HLSHarness.run(
      HLSHarness.ingest,
      [
        "replay", media.dump, "--to", "hls:" + directory, "--speed", "max", "--quiet",
        "--hls-window", "0", "--status", status,
      ])
    #expect(run.status == 0, "\(run.stderr)")

    let playlist = try HLSPlaylistCheck.read(directory + "/index.m3u8")
    #expect(playlist.lines.first == "#EXTM3U")
    #expect(playlist.lines.contains("#EXT-X-VERSION:3"))
    #expect(playlist.lines.contains("#EXT-X-PLAYLIST-TYPE:EVENT"))
    #expect(playlist.mediaSequence == 0)
    #expect(playlist.ended)
    let target = try #require(playlist.targetDuration)
    #expect((2...3).contains(target))
    #expect(playlist.entries.count == 5)
    let total = playlist.entries.reduce(0) { $0 + $1.duration }
    #expect(abs(total - 10) < 0.1)
    for (index, entry) in playlist.entries.enumerated() {
      #expect(entry.name == String(format: "seg%05d.ts", index))
      #expect(entry.duration <= Double(target) + 0.001)
      #expect(entry.date != nil)
      #expect(try HLSHarness.ffmpegErrors(directory + "/" + entry.name) == "", "\(entry.name)")
    }
    #expect(try HLSHarness.ffmpegErrors(directory + "/index.m3u8") == "")
    let events = try String(contentsOfFile: status, encoding: .utf8)
    #expect(events.components(separatedBy: "\"event\":\"segment\"").count == 6)
    #expect(!FileManager.default.fileExists(atPath: directory + "/index.m3u8.tmp"))
  }

  @Test func micClockResetBecomesADiscontinuity() throws {
    let media = try HLSHarness.media.get()
    let directory = HLSHarness.temporaryDirectory("jump")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let run = try HLSHarness.run(
      HLSHarness.ingest,
      // The mic carried alone in the segments: the mix (HLS's default) re-anchors a reset input
      // alone and needs no discontinuity (`mixedMicClockResetNeedsNoDiscontinuity`), nor does a
      // rendition of `--audio both` (`HLSRenditionTests.micClockResetKeepsTheSetInStep`).
      [
        "replay", media.jumpDump, "--to", directory + "/live.m3u8", "--audio", "mic", "--speed",
        "max", "--quiet",
      ])
    #expect(run.status == 0, "\(run.stderr)")
    let playlist = try HLSPlaylistCheck.read(directory + "/live.m3u8")
    #expect(playlist.entries.filter(\.discontinuity).count == 1)
    #expect(playlist.entries.first?.discontinuity == false)
    #expect(try HLSHarness.ffmpegErrors(directory + "/live.m3u8") == "")
  }

  @Test func bundledMicClockResetFixtureBecomesADiscontinuity() throws {
    let directory = HLSHarness.temporaryDirectory("fixture-jump")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let run = try HLSHarness.run(
      HLSHarness.ingest,
      [
        "replay", CommandRunner.fixture("mic-clock-reset.dump"), "--to", "hls:" + directory,
        "--audio", "mic", "--speed", "max", "--quiet",
      ])
    #expect(run.status == 0, "\(run.stderr)")
    let playlist = try HLSPlaylistCheck.read(directory + "/index.m3u8")
    #expect(playlist.entries.filter(\.discontinuity).count == 1)
    #expect(try HLSHarness.ffmpegErrors(directory + "/index.m3u8") == "")
  }

  /// By default HLS carries the mix, whose mic input re-anchors alone at a reset: the app and
  /// the mixed track keep their timestamps, so the recording needs no discontinuity.
  @Test func mixedMicClockResetNeedsNoDiscontinuity() throws {
    let directory = HLSHarness.temporaryDirectory("fixture-jump-mix")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let run = try HLSHarness.run(
      HLSHarness.ingest,
      [
        "replay", CommandRunner.fixture("mic-clock-reset.dump"), "--to", "hls:" + directory,
        "--speed", "max", "--quiet",
      ])
    #expect(run.status == 0, "\(run.stderr)")
    let playlist = try HLSPlaylistCheck.read(directory + "/index.m3u8")
    #expect(playlist.entries.filter(\.discontinuity).isEmpty)
    #expect(try HLSHarness.ffmpegErrors(directory + "/index.m3u8") == "")
  }

  @Test func audioOnlySegmentsStayWithinTheTarget() throws {
    let media = try HLSHarness.media.get()
    let directory = HLSHarness.temporaryDirectory("audio")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let run = try HLSHarness.run(
      HLSHarness.ingest,
      [
        "replay", media.audioDump, "--to", "hls:" + directory, "--speed", "max", "--quiet",
        "--segment", "3",
      ])
    #expect(run.status == 0, "\(run.stderr)")
    let playlist = try HLSPlaylistCheck.read(directory + "/index.m3u8")
    #expect(playlist.targetDuration == 3)
    #expect(playlist.entries.count >= 3)
    for entry in playlist.entries {
      #expect(entry.duration <= 3)
      #expect(try HLSHarness.ffmpegErrors(directory + "/" + entry.name) == "")
    }
    #expect(try HLSHarness.ffmpegErrors(directory + "/index.m3u8") == "")
  }

  @Test func unwritableDirectoryFailsWithAClearMessage() throws {
    let media = try HLSHarness.media.get()
    let blocker = HLSHarness.temporaryDirectory("blocker")
    _ = FileManager.default.createFile(atPath: blocker, contents: Data([1]))
    defer { try? FileManager.default.removeItem(atPath: blocker) }
    let run = try HLSHarness.run(
      HLSHarness.ingest,
      ["replay", media.dump, "--to", "hls:" + blocker + "/out", "--speed", "max", "--quiet"])
    // Refused before the run, as a usage error that names the path.
    #expect(run.status == 2)
    #expect(run.stderr.contains(blocker))
    #expect(run.stderr.contains("is not a directory"))

    let recover = try HLSHarness.run(HLSHarness.ingest, ["recover", NSTemporaryDirectory()])
    #expect(recover.status == 1)
    #expect(recover.stderr.contains("no 'journal'"))
  }

  /// Kills a replay at 20 moments and recovers each directory.
  @Test func recoveryAfterSIGKILLKeepsEveryCompleteSegment() throws {
    let media = try HLSHarness.media.get()
    var notes: [String] = []
    for point in 1...20 {
      let directory = HLSHarness.temporaryDirectory("kill\(point)")
      defer { try? FileManager.default.removeItem(atPath: directory) }
      let process = Process()
      process.executableURL = URL(fileURLWithPath: HLSHarness.ingest)
      process.arguments = [
        "replay", media.dump, "--to", "hls:" + directory, "--speed", "8", "--quiet",
      ]
      process.standardOutput = FileHandle.nullDevice
      process.standardError = FileHandle.nullDevice
      try process.run()
      // The sink is open once the journal names the first segment being written.
      var waited = 0
      while !((try? String(contentsOfFile: directory + "/journal", encoding: .utf8))?.contains(
        "open ") ?? false),
        process.isRunning, waited < 20_000
      {
        usleep(1000)
        waited += 1
      }
      usleep(useconds_t(point * 60_000))
      let wasRunning = process.isRunning
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
      let complete = HLSHarness.journaledSegments(directory)
      let partBefore = (try? FileManager.default.contentsOfDirectory(atPath: directory))?
        .first { $0.hasSuffix(".part") }

      let recover = try HLSHarness.run(HLSHarness.ingest, ["recover", directory, "--json"])
      #expect(recover.status == 0, "kill point \(point): \(recover.stderr)")
      let report = try #require(
        try JSONSerialization.jsonObject(with: Data(recover.stdout.utf8)) as? [String: Any])
      let playlist = try HLSPlaylistCheck.read(directory + "/index.m3u8")
      let listed = playlist.entries.map(\.name)
      #expect(playlist.ended, "kill point \(point)")
      #expect(Array(listed.prefix(complete.count)) == complete, "kill point \(point)")
      for name in listed {
        #expect(
          FileManager.default.fileExists(atPath: directory + "/" + name), "kill point \(point)")
      }
      #expect(
        !((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).contains {
          $0.hasSuffix(".part")
        })
      var partial = "no partial"
      if let item = (report["partials"] as? [[String: Any]])?.first,
        let name = item["name"] as? String, let action = item["action"] as? String
      {
        let fileBytes = item["file_bytes"] as? Int ?? -1
        if action == "kept" {
          let kept = item["kept_bytes"] as? Int ?? -1
          let seconds = item["duration_s"] as? Double ?? -1
          partial =
            "\(name) cut \(fileBytes) -> \(kept) bytes, kept (\(String(format: "%.3f", seconds)) s)"
          #expect(try HLSHarness.ffmpegErrors(directory + "/" + name) == "", "kill point \(point)")
        } else {
          partial = "\(name) (\(fileBytes) bytes) removed"
        }
      } else if let partBefore {
        partial = "\(partBefore) completed by rename"
      }
      if listed.isEmpty {
        #expect(playlist.lines.contains("#EXT-X-ENDLIST"))
      } else {
        #expect(try HLSHarness.ffmpegErrors(directory + "/index.m3u8") == "", "kill point \(point)")
      }
      notes.append(
        "kill \(String(format: "%2d", point)) at +\(String(format: "%4d", point * 60)) ms\(wasRunning ? "" : " (run had ended)"): journal had \(complete.count) complete; recovered playlist lists \(listed.count); \(partial)"
      )
    }
    print("HLS SIGKILL recovery:\n" + notes.joined(separator: "\n"))
    #expect(notes.count == 20)
  }

  /// A second writer is refused while a run holds the directory; the lock of a killed run is gone.
  @Test func oneWriterPerDirectory() throws {
    let media = try HLSHarness.media.get()
    let work = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let directory = work.appending(path: "rec").path
    let first = try SignalledIngest(
      ["replay", media.dump, "--to", "hls:" + directory, "--quiet"], in: work)
    #expect(
      FaultSupport.waitUntil(seconds: 30) {
        ((try? String(contentsOfFile: directory + "/journal", encoding: .utf8)) ?? "")
          .contains("open ")
      })
    let journalBefore = try String(contentsOfFile: directory + "/journal", encoding: .utf8)

    let second = try CommandRunner.ingest(
      ["replay", media.dump, "--to", "hls:" + directory, "--speed", "max", "--quiet"])
    #expect(second.status == 1, "\(second.stderr)")
    #expect(second.stderr.contains("another ingest process is writing"), "\(second.stderr)")
    let recover = try CommandRunner.ingest(["recover", directory])
    #expect(recover.status == 1, "\(recover.stderr)")
    #expect(recover.stderr.contains("another ingest process is writing"), "\(recover.stderr)")
    let journalAfter = try String(contentsOfFile: directory + "/journal", encoding: .utf8)
    #expect(journalAfter.hasPrefix(journalBefore), "only the first run writes the journal")
    #expect(journalAfter.components(separatedBy: "\nrun ").count == 1, "\(journalAfter)")

    first.send(SIGKILL)
    _ = first.wait()
    let recovered = try CommandRunner.ingest(["recover", directory])
    #expect(recovered.status == 0, "a dead run's lock is no obstacle: \(recovered.stderr)")
    #expect(try HLSPlaylistCheck.read(directory + "/index.m3u8").ended)
  }

  @Test func newRunContinuesAfterAnInterruptedRecording() throws {
    let media = try HLSHarness.media.get()
    let directory = HLSHarness.temporaryDirectory("resume")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: HLSHarness.ingest)
    process.arguments = [
      "replay", media.dump, "--to", "hls:" + directory, "--speed", "4", "--quiet",
    ]
    process.standardError = FileHandle.nullDevice
    try process.run()
    // Kill once two segments are recorded as complete.
    var waited = 0
    while HLSHarness.journaledSegments(directory).count < 2, process.isRunning, waited < 20_000 {
      usleep(1000)
      waited += 1
    }
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    let earlier = HLSHarness.journaledSegments(directory)
    #expect(earlier.count >= 2)
    let sizes = HLSHarness.journaledSizes(directory).map { Optional($0.bytes) }

    let run = try HLSHarness.run(
      HLSHarness.ingest,
      [
        "replay", media.dump, "--to", "hls:" + directory, "--speed", "max", "--quiet",
        "--hls-window", "0",
      ])
    #expect(run.status == 0, "\(run.stderr)")
    let playlist = try HLSPlaylistCheck.read(directory + "/index.m3u8")
    let names = playlist.entries.map(\.name)
    #expect(Array(names.prefix(earlier.count)) == earlier)
    #expect(Set(names).count == names.count)
    #expect(names.count >= earlier.count + 5)
    // The join is marked; the new run's segments are numbered after the old ones.
    let firstNew = try #require(playlist.entries.firstIndex { $0.discontinuity })
    #expect(firstNew >= earlier.count)
    #expect(playlist.entries[firstNew...].count == 5)
    let resized = earlier.map {
      (try? FileManager.default.attributesOfItem(atPath: directory + "/" + $0))?[.size] as? Int
    }
    #expect(resized == sizes)
    let errors = try HLSHarness.ffmpegErrors(directory + "/index.m3u8")
    #expect(errors == "", "\(errors)")
    // The new run's timestamps go on after the recording's, whether the segment cut short by
    // the kill was kept or removed: nothing steps back at the join.
    let before = try HLSHarness.decodeTimes(directory + "/" + playlist.entries[firstNew - 1].name)
    let after = try HLSHarness.decodeTimes(directory + "/" + playlist.entries[firstNew].name)
    #expect(try #require(after.min()) > #require(before.max()))
  }
}

/// Reads a playlist for the checks above.
enum HLSPlaylistCheck {
  static func read(_ path: String) throws -> HLSHarness.Playlist {
    try HLSHarness.Playlist(path: path)
  }
}
