import Testing

@testable import IngestCore

private let second = TimeSpan.seconds(1)

/// A sink whose connection attempts take `attempt` of the clock's time and fail, as
/// a libsrt or libavformat connect to a silent server blocks for its whole timeout.
private final class SlowRefusingSink: OutputSink {
  let clock: VirtualClock
  let attempt: TimeSpan
  private(set) var attemptStarts: [MonotonicInstant] = []
  private(set) var connecting: [Bool] = []

  init(clock: VirtualClock, attempt: TimeSpan) {
    self.clock = clock
    self.attempt = attempt
  }

  var payloadFormat: PayloadFormat { .accessUnits }
  var bufferBytes: Int { 0 }
  var congestion: Double { 0 }
  var redactedDescription: String { "slow" }

  func open(tracks: TrackFormats) throws(SinkError) {
    attemptStarts.append(clock.now())
    clock.advance(to: clock.now() + attempt)
    throw .timeout(endpoint: "slow", operation: "connect", reason: "no answer")
  }

  func write(_ unit: OutgoingUnit, bytes: UnsafeRawBufferPointer, now: MonotonicInstant)
    throws(SinkError)
    -> SinkWriteResult
  { .written }
  func close() {}
  func finish() throws(SinkError) {}
}

@Suite struct SenderBackoffTests {
  /// Each delay counts from the end of the failed attempt: with 3 s attempts and a first delay
  /// of 0.5 s, the second attempt starts 3.5 s after the first, not at once.
  @Test func delayCountsFromTheEndOfTheFailedAttempt() throws {
    let (pipeline, clock) = try makePipeline()
    let sink = SlowRefusingSink(clock: clock, attempt: 3 * second)
    let sender = Sender(pipeline: pipeline, sink: sink, backoff: Backoff(seed: 5), clock: clock)
    var attempts: [Bool] = []
    sender.onConnectAttempt = { attempts.append($0) }
    var reference = Backoff(seed: 5)
    var expectedStarts: [MonotonicInstant] = []
    var now = clock.now()
    for _ in 0..<3 {
      expectedStarts.append(now)
      guard case .blocked(let until) = sender.pump(now: now) else {
        Issue.record("expected a scheduled retry")
        return
      }
      #expect(until == now + 3 * second + reference.next())
      clock.advance(to: until)
      now = until
    }
    #expect(sink.attemptStarts == expectedStarts)
    #expect(attempts == [true, false, true, false, true, false])
  }
}
