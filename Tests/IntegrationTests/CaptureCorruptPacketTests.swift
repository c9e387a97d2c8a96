import Foundation
import IngestCore
import IngestTestSupport
import Testing

/// `ingest capture` of an mp4 with one corrupt video packet: the packet is skipped and
/// counted, the frames that reference it wait for the next keyframe, and the capture goes on
/// to the end of the input.
@Suite struct CaptureCorruptPacketTests {
  /// Frames of the source: 4 s at 30 fps, a keyframe every 30.
  static let frames = 120
  static let gop = 30
  /// The corrupt packet: the 11th frame of the second GOP, a P-frame.
  static let corrupt = 40

  /// Encodes the source with ffmpeg and overwrites the first NAL length of video packet
  /// `corrupt` so that it runs past the end of the packet: the mp4 still demuxes, but the
  /// packet's bytes are not AVCC (the H.264 converter refuses it).
  static func corruptMP4(in directory: URL) throws -> String {
    let path = directory.appending(path: "corrupt.mp4").path
    let made = try CommandRunner.run(
      "ffmpeg",
      [
        "-v", "error", "-nostdin", "-y", "-fflags", "+bitexact", "-f", "lavfi", "-i",
        "testsrc2=size=160x288:rate=30", "-f", "lavfi", "-i",
        "sine=frequency=440:sample_rate=48000", "-t", "4", "-c:v", "libx264", "-preset",
        "ultrafast", "-bf", "0", "-g", "\(gop)", "-sc_threshold", "0", "-threads", "1", "-c:a",
        "aac", "-b:a", "48k", path,
      ])
    #expect(made.status == 0, "\(made.stderr)")
    let probe = try CommandRunner.run(
      "ffprobe",
      [
        "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pos,size,flags", "-of",
        "csv=p=0", path,
      ])
    let packets = probe.stdout.split(separator: "\n").map { $0.split(separator: ",") }
    #expect(packets.count == frames)
    #expect(packets.indices.filter { packets[$0].last?.hasPrefix("K") == true } == [0, 30, 60, 90])
    guard packets.count > corrupt, let size = Int(packets[corrupt][0]),
      let position = UInt64(packets[corrupt][1])
    else { throw LoopbackServers.Failure("ffprobe \(path): \(probe.stdout)") }
    let file = try FileHandle(forUpdating: URL(fileURLWithPath: path))
    defer { try? file.close() }
    try file.seek(toOffset: position)
    let length = UInt32(size) * 4
    try file.write(
      contentsOf: [
        UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF),
        UInt8(length & 0xFF),
      ])
    return path
  }

  @Test func aCorruptPacketIsSkippedAndTheCaptureGoesOn() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let source = try Self.corruptMP4(in: directory)
    let dump = directory.appending(path: "capture.dump").path
    let capture = try CommandRunner.ingest(["capture", source, "-o", dump], timeout: 60)
    #expect(capture.status == 0, "\(capture.stderr)")
    #expect(capture.stdout.contains(", 1 corrupt packets skipped"), "\(capture.stdout)")
    // Frames 41 to 59 reference the lost one: skipped until the keyframe at 60.
    let waited = Self.gop * 2 - Self.corrupt - 1
    #expect(capture.stdout.contains(", \(waited) packets skipped"), "\(capture.stdout)")

    let video = try DumpItems.read(dump).compactMap(\.sample).filter { $0.kind == .video }
    #expect(video.count == Self.frames - 1 - waited)
    #expect(video.filter(\.isKeyframe).count == Self.frames / Self.gop)
    // The capture went on past the corrupt packet to the last frame of the input.
    let step = 1_000_000_000 / 30
    let times = video.map { ($0.pts.value - video[0].pts.value + Int64(step / 2)) / Int64(step) }
    #expect(times.contains(Int64(Self.corrupt - 1)))
    #expect(!times.contains(Int64(Self.corrupt)))
    #expect(times.contains(Int64(Self.gop * 2)))
    #expect(times.last == Int64(Self.frames - 1))

    let output = directory.appending(path: "capture.ts").path
    let replay = try CommandRunner.ingest([
      "replay", dump, "--to", output, "--speed", "max", "--quiet",
    ])
    #expect(replay.status == 0, "\(replay.stderr)")
    #expect(try CommandRunner.decodeErrors(output) == "")
  }
}
