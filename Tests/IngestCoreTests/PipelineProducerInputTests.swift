import Testing

@testable import IngestCore

/// What a producer sends that the pipeline mends (ADTS headers) or refuses.
@Suite struct PipelineProducerInputTests {
  func events(_ pipeline: Pipeline) -> [PipelineEvent] {
    var out: [PipelineEvent] = []
    while let event = pipeline.nextEvent() { out.append(event) }
    return out
  }

  func adts(_ sample: MediaSample, format: AACFormat) throws -> MediaSample {
    var sample = sample
    sample.payload =
      try ADTSHeader(format: format, payloadSize: sample.payload.count).bytes
      + sample.payload
    return sample
  }

  @Test func adtsHeadersAreRemovedAndReportedOnce() throws {
    let (pipeline, _) = try makePipeline()
    for frame in 0..<3 {
      let raw = CoreFixtures.audio(.audioApp, frame: Int64(frame))
      #expect(pipeline.append(try adts(raw, format: CoreFixtures.app)))
    }
    let snapshot = pipeline.snapshot()
    #expect(snapshot.adtsRemoved[.audioApp] == 3)
    #expect(snapshot.drops.total == 0)
    #expect(events(pipeline).filter { $0 == .adtsHeadersRemoved(kind: .audioApp) }.count == 1)
    // The ring holds the raw frame: the header was a slice off the payload.
    let unit = try #require(pipeline.beginSend())
    let bytes = Array(unit.slot[unit.headroom...])
    #expect(bytes == [UInt8](repeating: 0x21, count: 8))
  }

  @Test func anADTSHeaderForAnotherStreamIsRefusedNamingBoth() throws {
    let (pipeline, _) = try makePipeline()
    let raw = CoreFixtures.audio(.audioApp, frame: 0)
    #expect(!pipeline.append(try adts(raw, format: CoreFixtures.mic)))
    #expect(!pipeline.append(try adts(raw, format: CoreFixtures.mic)))
    #expect(pipeline.snapshot().drops[.audioApp, .invalid] == 2)
    #expect(
      events(pipeline) == [
        .sampleRefused(
          kind: .audioApp,
          error: .adtsConfigurationMismatch(
            field: "sampling frequency index", header: 4, config: 3))
      ])
  }

  @Test func samplesLostBeforeAppendAreCounted() throws {
    let (pipeline, _) = try makePipeline()
    pipeline.sampleLost(.video)
    pipeline.sampleLost(.audioMic)
    let snapshot = pipeline.snapshot()
    #expect(snapshot.lost[.video] == 1 && snapshot.lost[.audioMic] == 1)
    #expect(snapshot.inFlight == 0)
  }
}
