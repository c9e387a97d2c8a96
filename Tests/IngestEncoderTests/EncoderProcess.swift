import Foundation
import IngestCore
import IngestPOSIX
import IngestTestSupport

/// One `ingest-encode` child: requests go to its stdin through a pipe, the dump and the JSON
/// lines to files, so the test reads both while it runs and nothing blocks on a full pipe.
final class EncoderProcess {
  let directory: URL
  let dump: URL
  private let log: URL
  private let process = Process()
  private let requests = Pipe()

  init(_ arguments: [String]) throws {
    directory = try CommandRunner.temporaryDirectory()
    dump = directory.appending(path: "out.dump")
    log = directory.appending(path: "stderr")
    _ = FileManager.default.createFile(atPath: dump.path, contents: nil)
    _ = FileManager.default.createFile(atPath: log.path, contents: nil)
    process.executableURL = URL(fileURLWithPath: CommandRunner.encoder)
    process.arguments = arguments
    process.standardInput = requests
    process.standardOutput = try FileHandle(forWritingTo: dump)
    process.standardError = try FileHandle(forWritingTo: log)
    try process.run()
  }

  deinit {
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    try? FileManager.default.removeItem(at: directory)
  }

  /// The JSON lines written so far, parsed.
  func events() -> [[String: Any]] {
    LoopbackServers.text(of: log).split(separator: "\n").compactMap {
      try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
  }

  /// Everything on stderr, for failure messages.
  var stderr: String { LoopbackServers.text(of: log) }

  /// Waits for the first event that `matches`, and returns it.
  @discardableResult
  func waitForEvent(
    _ what: String, timeout: TimeInterval = 30, _ matches: ([String: Any]) -> Bool
  ) throws -> [String: Any] {
    var found: [String: Any]?
    try LoopbackServers.waitUntil(what, timeout: timeout) {
      found = events().first(where: matches)
      return found != nil
    }
    return found!
  }

  /// Waits until the encoder has encoded `frames` frames (its once-a-second figures say so).
  func waitForFrames(_ frames: Int) throws {
    try waitForEvent("\(frames) frames") {
      $0["event"] as? String == "stats" && ($0["frame"] as? Int ?? 0) >= frames
    }
  }

  /// Writes one request line.
  func send(_ line: String) {
    requests.fileHandleForWriting.write(Data((line + "\n").utf8))
  }

  /// Waits for the process to exit (killing it after `timeout`) and returns its status.
  func finish(timeout: TimeInterval = 30) throws -> Int32 {
    try LoopbackServers.waitUntil("the encoder to exit", timeout: timeout) { !process.isRunning }
    return process.terminationStatus
  }

  /// The dump's samples: kind, pts in nanoseconds, size, keyframe; in file order.
  func samples() throws -> [(kind: SampleKind, pts: Int64, size: Int, keyframe: Bool)] {
    var reader = DumpReader(source: try FileByteSource(path: dump.path))
    var samples: [(kind: SampleKind, pts: Int64, size: Int, keyframe: Bool)] = []
    while let record = try reader.next() {
      guard case .sample(let header) = record else { continue }
      // Split into seconds and remainder: host-clock values times 10^9 overflow Int64.
      let scale = Int64(header.pts.timescale)
      let nanoseconds =
        header.pts.value / scale * 1_000_000_000 + header.pts.value % scale * 1_000_000_000 / scale
      samples.append((header.kind, nanoseconds, header.payloadSize, header.isKeyframe))
    }
    return samples
  }

  /// The dump's H.264 video format records, in file order, each with the number of video
  /// samples before it.
  func videoFormats() throws -> [(samplesBefore: Int, format: H264Format)] {
    var reader = DumpReader(source: try FileByteSource(path: dump.path))
    var formats: [(samplesBefore: Int, format: H264Format)] = []
    var videoSamples = 0
    while let record = try reader.next() {
      switch record {
      case .format(.video, .h264(let format)): formats.append((videoSamples, format))
      case .sample(let header) where header.kind == .video: videoSamples += 1
      default: break
      }
    }
    return formats
  }
}
