import IngestCore
import Synchronization
import Testing

@testable import IngestRuntime

/// A sink whose link is whatever the test says it is.
private final class ScriptedLinkSink: OutputSink {
  /// The estimate the link gives, stamped with the time it is read; nil for none.
  let link: LinkEstimate?
  init(link: LinkEstimate?) { self.link = link }
  var payloadFormat: PayloadFormat { .accessUnits }
  var bufferBytes: Int { 0 }
  var congestion: Double { 1 }
  var redactedDescription: String { "scripted" }
  func open(tracks: TrackFormats) throws(SinkError) {}
  func write(_ unit: OutgoingUnit, bytes: UnsafeRawBufferPointer, now: Int64) throws(SinkError)
    -> SinkWriteResult
  { .written }
  func close() {}
  func finish() throws(SinkError) {}
  func linkEstimate(now: Int64) -> LinkEstimate? {
    guard var estimate = link else { return nil }
    estimate.time = now
    return estimate
  }
}

private struct NoProbe: ResidentMemoryProbe {
  func residentBytes() -> Int? { nil }
}

private final class Lines: Sendable {
  let lines = Mutex<[String]>([])
  func append(_ line: String) { lines.withLock { $0.append(line) } }
  var all: [String] { lines.withLock { $0 } }
}

@Suite struct RateControlLoopTests {
  private func reporter(_ clock: VirtualClock, _ lines: Lines) throws -> StatusReporter {
    let audio = try AACFormat(objectType: 2, sampleRate: 48000, channels: 2)
    let pipeline = try Pipeline(
      configuration: PipelineConfiguration(), tracks: TrackFormats(audioApp: audio),
      payloadFormat: .accessUnits, budget: MemoryBudget(budget: 50_000_000, overhead: 20_000_000),
      clock: clock)
    return StatusReporter(
      pipeline: pipeline, clock: clock, probe: NoProbe(), writeLine: { lines.append($0) })
  }

  /// A request the encoder's input refused is said so in its `encoder` event; one it took is
  /// not marked.
  @Test func anUndeliveredRequestIsMarkedInItsEvent() throws {
    let clock = VirtualClock()
    let lines = Lines()
    let reporter = try reporter(clock, lines)
    let accept = Mutex(false)
    reporter.onEncoderRequest = { _ in accept.withLock { $0 } }
    reporter.requestEncoder("keyframe", now: 0) { _ in }
    accept.withLock { $0 = true }
    reporter.requestEncoder("keyframe", now: 0) { _ in }
    let events = lines.all.filter { $0.contains(#""event":"encoder""#) }
    #expect(events.count == 2)
    #expect(events.first?.contains(#""delivered":false"#) == true, "\(events)")
    #expect(events.last?.contains("delivered") == false, "\(events)")
  }

  @Test func aLongQueueBecomesARateEventAndABitrateRequest() throws {
    let clock = VirtualClock()
    let lines = Lines()
    let reporter = try reporter(clock, lines)
    let sink = ScriptedLinkSink(
      link: LinkEstimate(
        time: 0, queueMilliseconds: 180, roundTripMilliseconds: 20,
        deliveredBitsPerSecond: 700_000, latencyMilliseconds: 200))
    let requests = Lines()
    reporter.onEncoderRequest = {
      requests.append($0.rendered)
      return true
    }
    reporter.attach(sink)
    reporter.rateControl = RateControlLoop(
      configuration: .init(nominalBitsPerSecond: 2_000_000))
    // A new connection is observed for up to 3 s while its queue does not clear.
    for _ in 0..<40 {
      clock.advance(to: clock.now() + 100_000_000)
      reporter.tick(now: clock.now())
    }
    // The start share goes out with the first estimate; then the congestion.
    #expect(
      lines.all.first { $0.contains(#""event":"rate""#) }?.contains(#""reason":"start""#) == true)
    let rate = try #require(lines.all.first { $0.contains(#""reason":"congestion""#) })
    #expect(rate.contains(#""algorithm":"queue-delay-aimd""#))
    // 150 ms above the 30 ms in flight: under the link's 648 kb/s of video by 17.5 %.
    #expect(rate.contains(#""queue_delay_ms":150"#))
    #expect(rate.contains(#""target_bps":534722"#), "\(rate)")
    #expect(rate.contains(#""link":{"queue_ms":180"#))
    #expect(requests.all.first == #"{"request":"bitrate","target_bps":800000}"#)
    #expect(requests.all.dropFirst().first == #"{"request":"bitrate","target_bps":534722}"#)
  }

  @Test func withoutAnEstimateNothingIsDecided() throws {
    let clock = VirtualClock()
    let lines = Lines()
    let reporter = try reporter(clock, lines)
    reporter.attach(ScriptedLinkSink(link: nil))
    reporter.rateControl = RateControlLoop(configuration: .init(nominalBitsPerSecond: 2_000_000))
    for _ in 0..<20 {
      clock.advance(to: clock.now() + 100_000_000)
      reporter.tick(now: clock.now())
    }
    #expect(!lines.all.contains { $0.contains(#""event":"rate""#) })
    #expect(!lines.all.contains { $0.contains(#""event":"encoder""#) })
  }
}
