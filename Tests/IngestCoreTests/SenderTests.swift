import Testing

@testable import IngestCore

private let second = TimeSpan.seconds(1)
private let nanosecond = TimeSpan.nanoseconds(1)

/// Appends K a P a K P a (two GOPs, app audio between) from video frame `first` and audio
/// frame `first` on, and returns how many samples that was.
@discardableResult
private func appendTwoGOPs(_ pipeline: Pipeline, first: Int64 = 0) -> Int {
  let samples = [
    CoreFixtures.video(frame: first, key: true), CoreFixtures.audio(.audioApp, frame: first),
    CoreFixtures.video(frame: first + 1, key: false),
    CoreFixtures.audio(.audioApp, frame: first + 1),
    CoreFixtures.video(frame: first + 2, key: true),
    CoreFixtures.video(frame: first + 3, key: false),
    CoreFixtures.audio(.audioApp, frame: first + 2),
  ]
  for sample in samples { #expect(pipeline.append(sample)) }
  return samples.count
}

/// The PID of the TS packet at `offset`.
private func pid(_ bytes: [UInt8], at offset: Int = 0) -> Int {
  Int(bytes[offset + 1] & 0x1F) << 8 | Int(bytes[offset + 2])
}

@Suite struct SenderTests {
  @Test func retryableErrorReconnectsAfterBackoffAndRestartsAtAKeyframeWithPSI() throws {
    let (pipeline, _) = try makePipeline(format: .transportStream)
    let sink = ScriptedSink(payloadFormat: .transportStream)
    let sender = Sender(pipeline: pipeline, sink: sink, backoff: Backoff(seed: 42))
    var events: [SenderEvent] = []
    sender.onEvent = { events.append($0) }
    appendTwoGOPs(pipeline)
    sink.writeScript = [
      .written, .fail(.write(endpoint: "scripted", reason: "link down", retryable: true)),
    ]

    var reference = Backoff(seed: 42)
    let delay = reference.next()
    let start = MonotonicInstant.at(10 * second)
    #expect(sender.pump(now: start) == .blocked(until: start + delay))
    #expect(delay >= .milliseconds(400) && delay <= .milliseconds(600))
    #expect(!sender.isConnected)
    #expect(sink.closes == 1)
    #expect(
      events == [
        .connected(attempt: 1), .disconnected(reason: "scripted: link down"),
        .retrying(reason: "scripted: link down", delay: delay),
      ])
    // The first connection started at the keyframe with PAT and PMT in front.
    #expect(sink.written.count == 1)
    let first = sink.written[0].write
    #expect(first.unit.kind == .video && first.unit.isKeyframe && first.unit.prefixLength > 0)
    #expect(pid(first.bytes) == 0)

    // Not before the delay.
    #expect(sender.pump(now: start + delay - nanosecond) == .blocked(until: start + delay))
    #expect(sink.opens == 1)

    #expect(sender.pump(now: start + delay) == .idle)
    #expect(sink.opens == 2)
    #expect(events.last == .connected(attempt: 2))
    let afterReconnect = sink.written.filter { $0.connection == 2 }.map(\.write)
    #expect(afterReconnect.map(\.unit.kind) == [.video, .video, .audioApp])
    let restart = afterReconnect[0]
    #expect(restart.unit.isKeyframe)
    #expect(restart.unit.prefixLength >= 2 * TSPacket.size)
    #expect(pid(restart.bytes) == 0)
    #expect(pid(restart.bytes, at: TSPacket.size) == Int(TSPacket.pmtPID))
    // The unit in flight and everything older than the newest keyframe went as reconnect drops.
    let snapshot = pipeline.snapshot()
    #expect(snapshot.drops.total(.reconnect) == 3)
    #expect(snapshot.totalSent == 4)
    #expect(snapshot.totalAppended == snapshot.totalSent + snapshot.drops.total)
  }

  /// Ten outages in a row on the virtual clock (the integration suite restarts a real listener
  /// a few times only): each one reconnects after its delay, restarts at a keyframe with PAT and
  /// PMT, and the accounts close at the end.
  @Test func tenOutagesInARowEachReconnectAtAKeyframeWithPSI() throws {
    let (pipeline, _) = try makePipeline(format: .transportStream)
    let sink = ScriptedSink(payloadFormat: .transportStream)
    let sender = Sender(pipeline: pipeline, sink: sink, backoff: Backoff(seed: 7))
    var events: [SenderEvent] = []
    sender.onEvent = { events.append($0) }
    var now = MonotonicInstant.at(10 * second)
    // Each round's samples come after the last round's, as a capture's do.
    var frame: Int64 = 0
    for outage in 1...10 {
      appendTwoGOPs(pipeline, first: frame)
      frame += 4
      sink.writeScript = [
        .written, .fail(.write(endpoint: "scripted", reason: "peer gone", retryable: true)),
      ]
      guard case .blocked(let retryAt) = sender.pump(now: now) else {
        Issue.record("outage \(outage): the sender did not wait to retry")
        return
      }
      #expect(events.suffix(2).first == .disconnected(reason: "scripted: peer gone"))
      #expect(sender.pump(now: retryAt - nanosecond) == .blocked(until: retryAt))
      now = retryAt
      appendTwoGOPs(pipeline, first: frame)
      frame += 4
      #expect(sender.pump(now: now) == .idle)
      #expect(events.last == .connected(attempt: outage + 1))
      let restart = try #require(sink.written.first { $0.connection == outage + 1 }?.write)
      #expect(restart.unit.kind == .video && restart.unit.isKeyframe)
      #expect(pid(restart.bytes) == 0)
      #expect(pid(restart.bytes, at: TSPacket.size) == Int(TSPacket.pmtPID))
      now += second
    }
    #expect(sink.opens == 11 && sink.closes == 10)
    let snapshot = pipeline.snapshot()
    #expect(snapshot.totalAppended == snapshot.totalSent + snapshot.drops.total)
    #expect(snapshot.drops.total(.reconnect) > 0)
  }

  @Test func withoutAWaitingKeyframeVideoResumesOnlyAtTheNextKeyframe() throws {
    let (pipeline, _) = try makePipeline(format: .transportStream)
    let sink = ScriptedSink(payloadFormat: .transportStream)
    let sender = Sender(pipeline: pipeline, sink: sink, backoff: Backoff(seed: 1))
    #expect(pipeline.append(CoreFixtures.video(frame: 0, key: true)))
    #expect(pipeline.append(CoreFixtures.video(frame: 1, key: false)))
    #expect(pipeline.append(CoreFixtures.audio(.audioApp, frame: 0)))
    sink.writeScript = [.fail(.write(endpoint: "scripted", reason: "reset", retryable: true))]
    guard case .blocked(let retry) = sender.pump(now: .at(second)) else {
      Issue.record("expected a retry")
      return
    }
    #expect(pipeline.append(CoreFixtures.video(frame: 2, key: false)))
    #expect(sender.pump(now: retry) == .idle)
    // The keyframe in flight and both non-key frames went; the audio stayed and was sent.
    #expect(pipeline.snapshot().drops[.video, .reconnect] == 3)
    #expect(pipeline.append(CoreFixtures.video(frame: 3, key: false)) == false)
    #expect(pipeline.append(CoreFixtures.video(frame: 4, key: true)))
    #expect(pipeline.append(CoreFixtures.video(frame: 5, key: false)))
    #expect(sender.pump(now: retry + nanosecond) == .idle)
    let units = sink.written.map(\.write.unit)
    #expect(units.map(\.kind) == [.audioApp, .video, .video])
    #expect(units[0].prefixLength > 0)  // PAT/PMT lead the new connection
    #expect(units[1].isKeyframe)
    #expect(pipeline.snapshot().drops[.video, .awaitingKeyframe] >= 1)
  }

  @Test func backoffGrowsAcrossFailedAttemptsAndResetsAfterSuccess() throws {
    let (pipeline, _) = try makePipeline()
    let sink = ScriptedSink(payloadFormat: .accessUnits)
    let sender = Sender(pipeline: pipeline, sink: sink, backoff: Backoff(seed: 9))
    var delays: [TimeSpan] = []
    sender.onEvent = { event in
      if case .retrying(_, let delay) = event { delays.append(delay) }
    }
    let refused = SinkError.connect(endpoint: "scripted", reason: "refused", retryable: true)
    sink.openScript = [refused, refused, nil]
    #expect(pipeline.append(CoreFixtures.video(frame: 0, key: true)))
    var now = MonotonicInstant.at(second)
    for _ in 0..<2 {
      guard case .blocked(let until) = sender.pump(now: now) else {
        Issue.record("expected a retry")
        return
      }
      now = until
    }
    sink.writeScript = [
      .written, .fail(.write(endpoint: "scripted", reason: "dropped", retryable: true)),
    ]
    #expect(pipeline.append(CoreFixtures.video(frame: 1, key: false)))
    #expect(sender.pump(now: now) == .blocked(until: now + delays.last!))
    var reference = Backoff(seed: 9)
    let first = reference.next()
    let second = reference.next()
    reference.reset()
    #expect(delays == [first, second, reference.next()])
    #expect(delays[1] >= .milliseconds(800) && delays[1] <= .milliseconds(1200))
    #expect(delays[2] >= .milliseconds(400) && delays[2] <= .milliseconds(600))
    #expect(sink.closes == 1)  // failed opens are not closed; the broken connection is
  }

  @Test func fatalErrorStopsTheSender() throws {
    let (pipeline, _) = try makePipeline()
    let sink = ScriptedSink(payloadFormat: .accessUnits)
    let sender = Sender(pipeline: pipeline, sink: sink)
    var events: [SenderEvent] = []
    sender.onEvent = { events.append($0) }
    appendTwoGOPs(pipeline)
    let rejected = SinkError.publishRefused(
      endpoint: "scripted", reason: "stream key rejected", retryable: false)
    sink.writeScript = [.written, .fail(rejected)]
    #expect(sender.pump(now: .at(second)) == .failed(rejected))
    #expect(sender.pump(now: .at(100 * second)) == .failed(rejected))
    #expect(sink.offers.count == 2)
    #expect(sink.opens == 1)
    #expect(events.last == .failed(reason: rejected.description))
    #expect(throws: rejected) { try sender.finish() }
    #expect(!sink.finished)

    let refusing = ScriptedSink(payloadFormat: .accessUnits)
    let missing = SinkError.write(endpoint: "out", reason: "no such directory", retryable: false)
    refusing.openScript = [missing]
    let stopped = Sender(pipeline: pipeline, sink: refusing)
    #expect(stopped.pump(now: .at(second)) == .failed(missing))
    #expect(refusing.offers.isEmpty)
  }

  @Test(arguments: [PayloadFormat.accessUnits, .transportStream])
  func wouldBlockOffersTheSameUnitAgainLater(format: PayloadFormat) throws {
    let (pipeline, _) = try makePipeline(format: format)
    let sink = ScriptedSink(payloadFormat: format)
    let sender = Sender(pipeline: pipeline, sink: sink)
    let appended = appendTwoGOPs(pipeline)
    sink.writeScript = [.written, .wouldBlock(.at(5 * second)), .wouldBlock(.at(6 * second))]
    #expect(sender.pump(now: .at(second)) == .blocked(until: .at(5 * second)))
    #expect(sender.pump(now: .at(5 * second)) == .blocked(until: .at(6 * second)))
    #expect(sender.pump(now: .at(6 * second)) == .idle)
    #expect(sink.offers.count == appended + 2)
    let blocked = sink.offers[1...3]
    #expect(
      blocked.allSatisfy { $0.bytes == sink.offers[1].bytes && $0.unit == sink.offers[1].unit })
    #expect(sink.written.count == appended)
    #expect(
      Set(sink.written.map { "\($0.write.unit.kind) \($0.write.unit.dts)" }).count == appended)
    if format == .accessUnits {
      #expect(sink.written.allSatisfy { $0.write.unit.prefixLength == 0 })
      #expect(sink.written[0].write.bytes == CoreFixtures.idr())
    }
    let snapshot = pipeline.snapshot()
    #expect(snapshot.totalSent == appended)
    #expect(snapshot.drops.total == 0)
    #expect(snapshot.sentBytes == Int64(sink.written.reduce(0) { $0 + $1.write.bytes.count }))
    try sender.finish()
    #expect(sink.finished)
  }
}
