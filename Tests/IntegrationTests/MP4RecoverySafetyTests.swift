import Foundation
import IngestTestSupport
import Testing

/// `ingest recover` cuts only recordings of ingest, never one a run is still writing, and two
/// runs never write one `.mp4` at once: files made by ffmpeg are refused byte for byte
/// unchanged; a second run and a recovery are refused while a run holds the file.
@Suite struct MP4RecoverySafetyTests {
  /// A 3 s H.264 + AAC MP4 made by ffmpeg in `directory`, remuxed with `movflags`; nil (and a
  /// visible skip, a failure under CI) without ffmpeg.
  static func ffmpegFile(_ directory: URL, name: String, movflags: String) throws -> String? {
    guard CommandRunner.has("ffmpeg") else {
      TestEnvironment.unavailable("ffmpeg is not installed (Scripts/lib/deps.sh installs it)")
      return nil
    }
    let source = directory.appending(path: "source.mp4").path
    if !FileManager.default.fileExists(atPath: source) {
      let made = try CommandRunner.run(
        "ffmpeg",
        [
          "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=30:duration=3",
          "-f", "lavfi", "-i", "sine=frequency=440:duration=3", "-c:v", "libx264", "-g", "30",
          "-c:a", "aac", "-shortest", source,
        ])
      try #require(made.status == 0, "\(made.stderr)")
    }
    let output = directory.appending(path: name).path
    let remuxed = try CommandRunner.run(
      "ffmpeg", ["-v", "error", "-y", "-i", source, "-c", "copy", "-movflags", movflags, output])
    try #require(remuxed.status == 0, "\(remuxed.stderr)")
    return output
  }

  /// Top-level box types of the file at `path`, in order.
  static func topLevelBoxes(_ path: String) throws -> [String] {
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    var types: [String] = []
    var offset = 0
    while offset + 8 <= bytes.count {
      let size =
        Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8
        | Int(bytes[offset + 3])
      types.append(String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self))
      guard size >= 8 else { break }
      offset += size
    }
    return types
  }

  /// Runs `ingest recover` on `path` and checks that it refused, naming why, and left the file
  /// as it was.
  static func expectRefused(_ path: String, because reason: String) throws {
    let before = try Data(contentsOf: URL(fileURLWithPath: path))
    let result = try CommandRunner.ingest(["recover", path])
    #expect(result.status == 1, "\(result.stderr)")
    #expect(result.stderr.contains(reason), "\(result.stderr)")
    #expect(result.stderr.contains("nothing was changed"), "\(result.stderr)")
    #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
  }

  @Test func aFaststartFileMadeByFFmpegIsRefusedUnchanged() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    guard let file = try Self.ffmpegFile(directory, name: "f.mp4", movflags: "+faststart") else {
      return
    }
    #expect(try Self.topLevelBoxes(file).prefix(2) == ["ftyp", "moov"])
    try Self.expectRefused(file, because: "not a recording of ingest")
  }

  @Test func aFragmentedFFmpegFileWithItsIndexIsRefusedUnchanged() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    guard
      let file = try Self.ffmpegFile(
        directory, name: "frag.mp4", movflags: "+frag_keyframe+empty_moov")
    else { return }
    // The shape recovery used to take for a recording: ftyp, moov, fragments, and an index.
    let boxes = try Self.topLevelBoxes(file)
    #expect(boxes.prefix(3) == ["ftyp", "moov", "moof"])
    #expect(boxes.last == "mfra", "\(boxes)")
    try Self.expectRefused(file, because: "not a recording of ingest")
  }

  @Test func aTruncatedFFmpegFileIsRefusedUnchanged() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    for (name, flags) in [("fast.mp4", "+faststart"), ("frag.mp4", "+frag_keyframe+empty_moov")] {
      guard let file = try Self.ffmpegFile(directory, name: name, movflags: flags) else { return }
      let whole = try Data(contentsOf: URL(fileURLWithPath: file))
      try whole.prefix(whole.count * 2 / 3).write(to: URL(fileURLWithPath: file))
      try Self.expectRefused(file, because: "not a recording of ingest")
    }
  }

  @Test func aSecondRunAndARecoveryAreRefusedWhileARunWritesTheFile() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let output = directory.appending(path: "rec.mp4")
    let first = try SignalledIngest(
      ["replay", CommandRunner.fixture("screen.dump"), "--to", output.path, "--quiet"],
      in: directory)
    // Its first whole fragment is in the file: the head and a GOP.
    try LoopbackServers.waitUntil("a fragment in rec.mp4") {
      (try? MP4RecordingTests.fragmentEnds(output.path).isEmpty == false) ?? false
    }
    let written = LoopbackServers.size(of: output)

    let second = try CommandRunner.ingest([
      "replay", CommandRunner.fixture("screen.dump"), "--to", output.path, "-y", "--speed", "max",
      "--quiet",
    ])
    #expect(second.status == 1, "\(second.stderr)")
    #expect(second.stderr.contains("another ingest process is writing"), "\(second.stderr)")
    // Not truncated: the first run's fragments are still there.
    #expect(LoopbackServers.size(of: output) >= written)

    let recover = try CommandRunner.ingest(["recover", output.path])
    #expect(recover.status == 1, "\(recover.stderr)")
    #expect(recover.stderr.contains("another ingest process is writing"), "\(recover.stderr)")

    first.send(SIGINT)
    #expect(first.wait() == 0)
    // The first run's recording is whole and decodes; a recovery now finds it finished.
    #expect(try CommandRunner.decodeErrors(output.path) == "")
    let after = try CommandRunner.ingest(["recover", output.path, "--json"])
    #expect(after.status == 0, "\(after.stderr)")
    #expect(after.stdout.contains("\"was_finished\":true"), "\(after.stdout)")
  }
}
