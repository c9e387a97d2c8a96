import Foundation
import Glibc
import IngestTestSupport
import Testing

/// File names are bytes: a name that is not UTF-8 (byte 0xFF) given to `inspect`, `replay` and
/// `capture` is opened and created exactly as given, and messages show it escaped (`\xFF`).
@Suite struct NonUTF8FileNameTests {
  /// `name`'s bytes inside `directory`, with `byte` (not UTF-8 on its own) after `name`.
  private static func path(_ directory: URL, _ name: String, _ byte: UInt8, _ suffix: String)
    -> [UInt8]
  {
    Array((directory.path + "/" + name).utf8) + [byte] + Array(suffix.utf8)
  }

  private static func withCString<R>(_ path: [UInt8], _ body: (UnsafePointer<CChar>) -> R) -> R {
    (path.map { CChar(bitPattern: $0) } + [0]).withUnsafeBufferPointer { body($0.baseAddress!) }
  }

  /// The size of the file at the byte path, nil when there is none.
  private static func size(_ path: [UInt8]) -> Int? {
    var stats = stat()
    return withCString(path) { stat($0, &stats) } == 0 ? Int(stats.st_size) : nil
  }

  /// Writes `data` to a new file named by the bytes `path`.
  private static func write(_ data: Data, to path: [UInt8]) throws {
    let fd = withCString(path) { open($0, O_WRONLY | O_CREAT | O_TRUNC, 0o644) }
    guard fd >= 0 else { throw LoopbackServers.Failure("open: errno \(errno)") }
    defer { close(fd) }
    let written = data.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    guard written == data.count else { throw LoopbackServers.Failure("write: \(written)") }
  }

  @Test func inspectAndReplayOpenAndCreateTheNamesAsGiven() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let dump = Self.path(directory, "bad", 0xFF, ".dump")
    let output = Self.path(directory, "out", 0xFE, ".ts")
    let fixture = try Data(contentsOf: URL(fileURLWithPath: CommandRunner.fixture("screen.dump")))
    try Self.write(fixture, to: dump)

    let inspect = try CommandRunner.run(
      CommandRunner.ingest, byteArguments: [Array("inspect".utf8), dump], timeout: 60)
    #expect(inspect.status == 0, "stderr: \(inspect.stderr)")
    #expect(inspect.stdout.contains("bad\\xFF.dump: \(fixture.count) bytes"), "\(inspect.stdout)")

    let replay = try CommandRunner.run(
      CommandRunner.ingest,
      byteArguments: ["replay", "--speed", "max", "--to"].map { Array($0.utf8) } + [output] + [
        dump
      ], timeout: 60)
    #expect(replay.status == 0, "stderr: \(replay.stderr)")
    #expect(replay.stderr.contains("replayed \(directory.path)/bad\\xFF.dump"), "\(replay.stderr)")
    let written = try #require(Self.size(output), "no file under the exact byte name")
    #expect(written > 0 && written % 188 == 0)
    // Nothing was created under the repaired (U+FFFD) name instead.
    #expect(Self.size(Array((directory.path + "/out\u{FFFD}.ts").utf8)) == nil)
  }

  @Test func captureReadsAndWritesTheNamesAsGiven() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let source = directory.appending(path: "source.mp4")
    let made = try CommandRunner.run(
      "ffmpeg",
      [
        "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=30", "-t", "1",
        "-c:v", "libx264", "-pix_fmt", "yuv420p", source.path,
      ], timeout: 60)
    try #require(made.status == 0, "ffmpeg: \(made.stderr)")
    let input = Self.path(directory, "in", 0xFF, ".mp4")
    let output = Self.path(directory, "out", 0xFF, ".dump")
    try Self.write(try Data(contentsOf: source), to: input)

    let capture = try CommandRunner.run(
      CommandRunner.ingest,
      byteArguments: [Array("capture".utf8), input, Array("-o".utf8), output], timeout: 60)
    #expect(capture.status == 0, "stderr: \(capture.stderr)")
    #expect(
      capture.stdout.hasPrefix("\(directory.path)/out\\xFF.dump: video 30"), "\(capture.stdout)")
    #expect((Self.size(output) ?? 0) > 0, "no dump under the exact byte name")
  }

  @Test func aMissingNonUTF8NameIsReportedEscaped() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let missing = Self.path(directory, "gone", 0xFF, ".dump")
    let result = try CommandRunner.run(
      CommandRunner.ingest, byteArguments: [Array("inspect".utf8), missing], timeout: 60)
    #expect(result.status == 1)
    #expect(
      result.stderr.contains("cannot open \(directory.path)/gone\\xFF.dump"), "\(result.stderr)")
  }
}
