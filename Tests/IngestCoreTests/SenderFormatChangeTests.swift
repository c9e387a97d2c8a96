import Testing

@testable import IngestCore

/// A format change reaches an access-unit sink with the first unit in the new format, once per
/// connection, however many units were already waiting in the ring when it happened.
@Suite struct SenderFormatChangeTests {
  static let mono = try! AACFormat(objectType: 2, sampleRate: 44100, channels: 1)

  @Test func theFirstUnitInANewFormatCarriesIt() throws {
    let (pipeline, _) = try makePipeline(format: .accessUnits)
    let sink = ScriptedSink(payloadFormat: .accessUnits)
    let sender = Sender(pipeline: pipeline, sink: sink, backoff: Backoff(seed: 1))
    // Units before the change are still in the ring when it happens.
    #expect(pipeline.append(CoreFixtures.audio(.audioApp, frame: 0)))
    #expect(pipeline.append(CoreFixtures.audio(.audioApp, frame: 1)))
    #expect(pipeline.changeFormat(.aac(Self.mono), for: .audioApp))
    #expect(pipeline.append(CoreFixtures.audio(.audioApp, frame: 2)))
    #expect(pipeline.append(CoreFixtures.audio(.audioApp, frame: 3)))
    // Back to the announced format.
    #expect(pipeline.changeFormat(.aac(CoreFixtures.allTracks.audioApp!), for: .audioApp))
    #expect(pipeline.append(CoreFixtures.audio(.audioApp, frame: 4)))
    #expect(sender.pump(now: .origin) == .idle)
    #expect(
      sink.written.map(\.write.unit.format) == [
        nil, nil, .aac(Self.mono), nil, .aac(CoreFixtures.allTracks.audioApp!),
      ])
  }

  @Test func aReconnectedSinkGetsTheFormatAgain() throws {
    let (pipeline, _) = try makePipeline(format: .accessUnits)
    let sink = ScriptedSink(payloadFormat: .accessUnits)
    let sender = Sender(pipeline: pipeline, sink: sink, backoff: Backoff(seed: 1))
    #expect(pipeline.append(CoreFixtures.audio(.audioApp, frame: 0)))
    #expect(pipeline.changeFormat(.aac(Self.mono), for: .audioApp))
    #expect(pipeline.append(CoreFixtures.audio(.audioApp, frame: 1)))
    #expect(pipeline.append(CoreFixtures.audio(.audioApp, frame: 2)))
    sink.writeScript = [
      .written, .written, .fail(.write(endpoint: "scripted", reason: "down", retryable: true)),
    ]
    guard case .blocked(let retry) = sender.pump(now: .origin) else {
      Issue.record("the failed write schedules a retry")
      return
    }
    #expect(pipeline.append(CoreFixtures.audio(.audioApp, frame: 3)))
    _ = sender.pump(now: retry)
    // The sink was opened again with the announced formats: the first unit after the
    // reconnect tells it the track is mono.
    let second = sink.written.filter { $0.connection == 2 }.map(\.write.unit.format)
    #expect(second.first == .aac(Self.mono))
    #expect(second.dropFirst().allSatisfy { $0 == nil })
  }
}
