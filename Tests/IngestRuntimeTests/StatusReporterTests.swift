import IngestCore
import Synchronization
import Testing

@testable import IngestRuntime

private final class Lines: Sendable {
  let lines = Mutex<[String]>([])
  func append(_ line: String) { lines.withLock { $0.append(line) } }
  var all: [String] { lines.withLock { $0 } }
}

/// The reporter turns the control loop's events into lines; what is decided is tested with the
/// loop itself (`ControlLoopTests`).
@Suite struct StatusReporterTests {
  private func reporter(_ clock: VirtualClock, _ lines: Lines) throws -> StatusReporter {
    let audio = try AACFormat(objectType: 2, sampleRate: 48000, channels: 2)
    let pipeline = try Pipeline(
      configuration: PipelineConfiguration(), tracks: TrackFormats(audioApp: audio),
      payloadFormat: .accessUnits, budget: MemoryBudget(budget: 50_000_000, overhead: 20_000_000),
      clock: clock)
    return StatusReporter(pipeline: pipeline, clock: clock, writeLine: { lines.append($0) })
  }

  /// A request the encoder's input refused is said so in its `encoder` event; one it took is
  /// not marked.
  @Test func anUndeliveredRequestIsMarkedInItsEvent() throws {
    let clock = VirtualClock()
    let lines = Lines()
    let reporter = try reporter(clock, lines)
    reporter.output = 2
    reporter.report(.encoderRequest(.keyframe, delivered: false), now: clock.now())
    reporter.report(.encoderRequest(.bitrate(800_000), delivered: true), now: clock.now())
    #expect(
      lines.all == [
        #"{"event":"encoder","t":0.000,"output":2,"request":"keyframe","delivered":false}"#,
        #"{"event":"encoder","t":0.000,"output":2,"request":"bitrate","target_bps":800000}"#,
      ])
  }

  @Test func aDecisionBecomesARateEventWithItsLink() throws {
    let clock = VirtualClock()
    let lines = Lines()
    let reporter = try reporter(clock, lines)
    var link = LinkEstimate(time: .origin, queueMilliseconds: 180, latencyMilliseconds: 200)
    link.backlogMilliseconds = 12
    link.unsentMilliseconds = 4
    var decision = RateController.Decision(
      targetBitsPerSecond: 534_722, frameRate: 30, keyframesOnly: false, reason: .congestion,
      rule: .standingQueue, state: .drain, link: link, queueDelayMilliseconds: 150)
    decision.baseRoundTripMilliseconds = 40
    decision.ceilingBitsPerSecond = 600_000
    reporter.report(.rate(decision), now: clock.now() + .seconds(1))
    // The rule that fired and the state it left the controller in, beside the inputs.
    #expect(
      lines.all == [
        #"{"event":"rate","t":1.000,"reason":"congestion","algorithm":"queue-delay-aimd","#
          + #""rule":"standingQueue","state":"drain","queue_delay_ms":150,"base_rtt_ms":40.0,"#
          + #""ceiling_bps":600000,"target_bps":534722,"frame_rate":30,"keyframes_only":false,"#
          + #""link":{"queue_ms":180,"queue_bytes":0,"unsent_ms":4,"latency_ms":200,"#
          + #""backlog_ms":12}}"#
      ])
  }

  @Test func aTierChangeIsCountedAndReported() throws {
    let clock = VirtualClock()
    let lines = Lines()
    let reporter = try reporter(clock, lines)
    reporter.report(
      .pipeline(.tierChanged(from: .normal, to: .noMic, pressure: 0.91, source: .resident)),
      now: clock.now())
    #expect(reporter.tierChanges == 1)
    #expect(
      lines.all == [
        #"{"event":"tier","t":0.000,"from":"normal","to":"noMic","tier":3,"pressure":0.910,"#
          + #""reason":"resident"}"#
      ])
  }
}
