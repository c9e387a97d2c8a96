import Foundation
import IngestCore
import IngestEngine
import IngestPOSIX
import IngestTestSupport
import Synchronization
import Testing

/// Runs docs/embedding.md's portable part (`BroadcastEngine`) the way its SampleHandler does:
/// formats mapped from their atoms, timestamps from (value, timescale), samples appended on the
/// calling thread while the engine's own thread records, then `finish`.
@Suite struct EmbeddingTests {
  /// What the encoder was asked, collected on the engine's sender thread.
  final class Requests: Sendable {
    let received = Mutex<[EncoderRequest]>([])
    func deliver(_ request: EncoderRequest) -> Bool {
      received.withLock { $0.append(request) }
      return true
    }
  }

  /// The live encoder's samples: `ingest-encode testsrc … > dump`, read with `DumpReader`.
  @Test func recordsTheLiveEncodersSamples() throws {
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let dump = directory.appending(path: "live.dump").path
    let encoded = try CommandRunner.run(
      "sh",
      ["-c", #""$0" testsrc --duration 3 --size 320x240 > "$1""#, CommandRunner.encoder, dump])
    #expect(encoded.status == 0, "\(encoded.stderr)")
    let recording = directory.appending(path: "recording").path
    // The footprint of this test process, running hundreds of tests at once, is no extension's:
    // a fixed one keeps the ladder at rest (the next test moves it on purpose).
    struct QuietFootprint: ResidentMemoryProbe {
      func residentBytes() -> Int? { 8_000_000 }
    }
    let snapshot = try record(dump: dump, into: recording, probe: QuietFootprint())
    #expect(snapshot.sent[Int(SampleKind.video.rawValue)] > 60)
    #expect(snapshot.sent[Int(SampleKind.audioApp.rawValue)] > 100)
    let playlist = try String(contentsOfFile: recording + "/index.m3u8", encoding: .utf8)
    #expect(playlist.contains("#EXTINF:"))
    #expect(playlist.contains("#EXT-X-ENDLIST"))
  }

  /// A footprint at the budget moves the ladder, and the control loop hands its requests to
  /// `deliver` (where the extension calls `VTSessionSetProperty`).
  @Test func memoryPressureReachesTheEncoder() throws {
    struct FullFootprint: ResidentMemoryProbe {
      func residentBytes() -> Int? { 49_500_000 }
    }
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let requests = Requests()
    _ = try record(
      dump: CommandRunner.fixture("screen.dump"), into: directory.appending(path: "rec").path,
      probe: FullFootprint(), requests: requests, pacedFor: .milliseconds(1500))
    #expect(!requests.received.withLock { $0 }.isEmpty)
  }

  /// docs/embedding.md shows BroadcastEngine.swift as it is.
  @Test func thePageShowsTheEngineAsItIs() throws {
    let page = try String(
      contentsOfFile: CommandRunner.packageRoot.appending(path: "docs/embedding.md").path,
      encoding: .utf8)
    let source = try String(
      contentsOfFile: CommandRunner.packageRoot.appending(
        path: "Sources/IngestEngine/BroadcastEngine.swift"
      ).path, encoding: .utf8)
    let begin = "<!-- BroadcastEngine.swift -->\n```swift\n"
    let end = "```\n<!-- end BroadcastEngine.swift -->"
    let start = try #require(page.range(of: begin))
    let stop = try #require(page.range(of: end, range: start.upperBound..<page.endIndex))
    #expect(String(page[start.upperBound..<stop.lowerBound]) == source)
  }

  /// Reads `dump` and drives an engine with it as a SampleHandler would; when `pacedFor` is
  /// given, the samples are spread over that long so the control loop ticks.
  private func record(
    dump: String, into directory: String, probe: any ResidentMemoryProbe,
    requests: Requests = Requests(), pacedFor duration: TimeSpan? = nil
  ) throws -> PipelineSnapshot {
    var reader = DumpReader(source: try FileByteSource(path: dump))
    var tracks = TrackFormats()
    var engine: BroadcastEngine?
    var samples = 0
    let clock = SystemClock()
    let began = clock.now()
    while let record = try reader.next() {
      switch record {
      case .format(let kind, let format):
        // What the SampleHandler has: the atom's bytes, not the parsed format.
        let mapped = try mapped(format)
        if let engine {
          _ = engine.changeFormat(mapped, for: kind)
        } else {
          tracks.set(mapped, for: kind)
        }
      case .sample(let header):
        if engine == nil {
          engine = try BroadcastEngine(
            directory: directory, tracks: tracks, probe: probe, deliver: requests.deliver)
        }
        let pts = BroadcastEngine.mediaTime(
          value: header.pts.value, timescale: header.pts.timescale)
        let dts = header.dts.map {
          BroadcastEngine.mediaTime(value: $0.value, timescale: $0.timescale)
        }
        reader.withPayload { payload in
          _ = engine?.append(
            header.kind, pts: pts, dts: dts, isKeyframe: header.isKeyframe, payload: payload)
        }
        samples += 1
        if let duration, samples % 10 == 0 {
          clock.sleep(until: began + min(duration, Int64(samples) * .milliseconds(10)))
        }
      case .event:
        break
      }
    }
    let running = try #require(engine)
    try running.finish()
    return running.pipeline.snapshot()
  }

  /// `format` through its atom's bytes, as `CMFormatDescription` gives them.
  private func mapped(_ format: FormatDescription) throws -> FormatDescription {
    switch format {
    case .h264(let h264): try BroadcastEngine.videoFormat(atom: "avcC", bytes: h264.avcC)
    case .hevc(let hevc): try BroadcastEngine.videoFormat(atom: "hvcC", bytes: hevc.hvcC)
    case .aac(let aac):
      try BroadcastEngine.audioFormat(audioSpecificConfig: aac.audioSpecificConfig)
    }
  }
}
