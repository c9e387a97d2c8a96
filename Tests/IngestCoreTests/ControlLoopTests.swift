import Synchronization
import Testing

@testable import IngestCore

/// A link whose figures are whatever the test says.
private final class FakeLink: LinkEstimateSource {
  var estimate: LinkEstimate?
  var congestion = 0.0
  /// Keyframe requests the receiver made, not yet taken.
  var keyframeRequests = 0
  private(set) var reads = 0
  func takeKeyframeRequest(now: MonotonicInstant) -> Bool {
    guard keyframeRequests > 0 else { return false }
    keyframeRequests -= 1
    return true
  }
  init(_ estimate: LinkEstimate?) { self.estimate = estimate }
  func linkEstimate(now: MonotonicInstant) -> LinkEstimate? {
    reads += 1
    guard var estimate else { return nil }
    estimate.time = now
    return estimate
  }
}

/// Resident memory as the test sets it.
private final class FakeProbe: ResidentMemoryProbe {
  let bytes = Atomic<Int>(0)
  func residentBytes() -> Int? {
    let value = bytes.load(ordering: .relaxed)
    return value > 0 ? value : nil
  }
}

/// What the loop did, in order.
private final class Recorder {
  var events: [ControlEvent] = []
  var delivered: [EncoderRequest] = []
  var accept = true
  var requests: [EncoderRequest] {
    events.compactMap { if case .encoderRequest(let request, _) = $0 { request } else { nil } }
  }
  var decisions: [RateController.Decision] {
    events.compactMap { if case .rate(let decision) = $0 { decision } else { nil } }
  }
}

@Suite struct ControlLoopTests {
  static let budget = 50_000_000

  private func loop(
    _ clock: VirtualClock, probe: FakeProbe = FakeProbe(), link: FakeLink?,
    _ configuration: ControlLoop.Configuration = .init()
  ) throws -> (ControlLoop, Recorder) {
    let audio = try AACFormat(objectType: 2, sampleRate: 48000, channels: 2)
    let pipeline = try Pipeline(
      configuration: PipelineConfiguration(), tracks: TrackFormats(audioApp: audio),
      payloadFormat: .accessUnits,
      budget: MemoryBudget(budget: Self.budget, overhead: 20_000_000), clock: clock)
    let loop = ControlLoop(
      pipeline: pipeline, probe: probe, clock: clock, configuration: configuration)
    if let link { loop.attach(link) }
    let recorder = Recorder()
    loop.deliver = { request in
      recorder.delivered.append(request)
      return recorder.accept
    }
    loop.onEvent = { event, _ in recorder.events.append(event) }
    return (loop, recorder)
  }

  /// Ticks every 100 ms for `seconds`.
  private func run(_ loop: ControlLoop, _ clock: VirtualClock, seconds: Double) {
    for _ in 0..<Int(seconds * 10) {
      clock.advance(to: clock.now() + .milliseconds(100))
      loop.tick(now: clock.now())
    }
  }

  @Test func aLongQueueLowersTheBitrateThroughTheCallback() throws {
    let clock = VirtualClock()
    let link = FakeLink(
      LinkEstimate(
        time: .origin, queueMilliseconds: 180, roundTripMilliseconds: 20,
        deliveredBitsPerSecond: 700_000, latencyMilliseconds: 200))
    let (loop, recorder) = try loop(
      clock, link: link, .init(rateControl: .init(nominalBitsPerSecond: 2_000_000)))
    // A new connection is observed for up to 3 s while its queue does not clear.
    run(loop, clock, seconds: 4)
    // Read five times a second, not on every tick.
    #expect(link.reads == 20)
    // The start share goes out with the first estimate; then the congestion.
    #expect(recorder.decisions.map(\.reason).prefix(2) == [.start, .congestion])
    let congestion = try #require(recorder.decisions.dropFirst().first)
    // 150 ms above the 30 ms in flight: under the link's 648 kb/s of video by 17.5 %.
    #expect(congestion.queueDelayMilliseconds == 150)
    #expect(congestion.targetBitsPerSecond == 534_722)
    #expect(congestion.link?.queueMilliseconds == 180)
    #expect(recorder.delivered.prefix(2) == [.bitrate(800_000), .bitrate(534_722)])
    // Each decision is reported before the requests that carry it out.
    #expect(
      Array(recorder.events.prefix(4)) == [
        .rate(recorder.decisions[0]), .encoderRequest(.bitrate(800_000), delivered: true),
        .rate(recorder.decisions[1]), .encoderRequest(.bitrate(534_722), delivered: true),
      ])
  }

  /// A receiver's keyframe request (WHIP: PLI or FIR) reaches the encoder once, with or
  /// without a rate controller.
  @Test func aReceiversKeyframeRequestIsDeliveredOnce() throws {
    let clock = VirtualClock()
    let link = FakeLink(nil)
    let (loop, recorder) = try loop(clock, link: link)
    run(loop, clock, seconds: 0.5)
    #expect(recorder.delivered.isEmpty)
    link.keyframeRequests = 1
    run(loop, clock, seconds: 1)
    #expect(recorder.delivered == [.keyframe])
    #expect(recorder.events == [.encoderRequest(.keyframe, delivered: true)])
  }

  /// Before the output has a link to read (it connects), the encoder is asked for the start
  /// share at the first tick, and nothing else is decided; the first clear estimate takes the
  /// climb's first step, not the start share again.
  @Test func withoutAnEstimateOnlyTheStartShareIsAsked() throws {
    let clock = VirtualClock()
    let link = FakeLink(nil)
    let (loop, recorder) = try loop(
      clock, link: link, .init(rateControl: .init(nominalBitsPerSecond: 2_000_000)))
    run(loop, clock, seconds: 2)
    #expect(link.reads > 0)
    #expect(recorder.delivered == [.bitrate(800_000)])
    guard case .rate(let start)? = recorder.events.first else {
      Issue.record("expected the start share first, got \(recorder.events)")
      return
    }
    #expect(start.rule == .start && start.link == nil && start.targetBitsPerSecond == 800_000)
    #expect(recorder.events.count == 2)
    link.estimate = LinkEstimate(
      time: clock.now(), queueMilliseconds: 20, roundTripMilliseconds: 20,
      deliveredBitsPerSecond: 900_000, latencyMilliseconds: 400)
    run(loop, clock, seconds: 0.5)
    #expect(recorder.delivered == [.bitrate(800_000), .bitrate(1_200_000)])
  }

  /// One event per request, exactly once, whether the encoder took it or not.
  @Test func anUndeliveredRequestIsReportedOnceAsUndelivered() throws {
    let clock = VirtualClock()
    let probe = FakeProbe()
    let (loop, recorder) = try loop(clock, probe: probe, link: nil)
    recorder.accept = false
    probe.bytes.store(Self.budget * 96 / 100, ordering: .relaxed)
    run(loop, clock, seconds: 1.2)
    #expect(recorder.delivered.count == 4)
    #expect(
      recorder.events.filter { if case .encoderRequest = $0 { true } else { false } }
        == recorder.delivered.map { .encoderRequest($0, delivered: false) })
  }

  /// Memory past the last threshold: the ladder jumps to keyframes only and asks for every
  /// step on the way; once memory is low again it comes down one step per hold period and
  /// undoes each ask, the frame rate back to the nominal one. The lower bitrate is asked once
  /// the output's send rate was measured (a second in: nothing sent, so the floor).
  @Test func memoryPressureMovesTheLadderAndItsAsks() throws {
    let clock = VirtualClock()
    let probe = FakeProbe()
    var configuration = ControlLoop.Configuration()
    configuration.nominalFrameRate = 60
    configuration.bitrateFloorBitsPerSecond = 300_000
    let (loop, recorder) = try loop(clock, probe: probe, link: nil, configuration)
    probe.bytes.store(Self.budget * 96 / 100, ordering: .relaxed)
    run(loop, clock, seconds: 0.5)
    #expect(recorder.requests == [.frameRate(30), .mic(false), .keyframesOnly(true)])
    run(loop, clock, seconds: 0.7)
    #expect(
      recorder.requests == [.frameRate(30), .mic(false), .keyframesOnly(true), .bitrate(300_000)])
    guard
      case .pipeline(.tierChanged(.normal, .keyframesOnly, _, .resident)) = recorder.events.first
    else {
      Issue.record("no tier change first: \(recorder.events)")
      return
    }
    recorder.events = []
    probe.bytes.store(Self.budget / 2, ordering: .relaxed)
    // A hold period of 5 s below the recovery threshold for each step down.
    run(loop, clock, seconds: 7)
    #expect(recorder.requests == [.keyframesOnly(false)])
    run(loop, clock, seconds: 20)
    #expect(
      recorder.requests == [.keyframesOnly(false), .mic(true), .frameRate(60), .bitrate(nil)])
  }

  /// With a rate controller the ladder leaves bitrate and frame rate to it, and sees the link
  /// as congested only once the controller is down to keyframes only.
  @Test func aRateControlledLadderAsksOnlyForTheMicAndKeyframes() throws {
    let clock = VirtualClock()
    let probe = FakeProbe()
    let link = FakeLink(nil)
    link.congestion = 1
    let (loop, recorder) = try loop(
      clock, probe: probe, link: link, .init(rateControl: .init(nominalBitsPerSecond: 2_000_000)))
    run(loop, clock, seconds: 3)
    // The start share alone: the sink's own congestion is the controller's business.
    #expect(recorder.requests == [.bitrate(800_000)])
    recorder.events = []
    probe.bytes.store(Self.budget * 96 / 100, ordering: .relaxed)
    run(loop, clock, seconds: 1.2)
    #expect(recorder.requests == [.mic(false), .keyframesOnly(true)])
  }

  /// Without a rate controller the sink's congestion grades the ladder, one step a second up
  /// to its link ceiling (a lower frame rate).
  @Test func withoutAControllerTheSinksCongestionGradesTheLadder() throws {
    let clock = VirtualClock()
    let link = FakeLink(nil)
    link.congestion = 1
    let (loop, recorder) = try loop(clock, link: link)
    run(loop, clock, seconds: 4)
    #expect(recorder.requests == [.bitrate(200_000), .frameRate(15)])
    #expect(link.reads == 0, "no controller: the link's estimate is not read")
  }
}
