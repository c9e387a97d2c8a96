import Testing

@testable import IngestCore

@Suite struct SampleSizeLimitTests {
  let tracks = CoreFixtures.allTracks

  @Test func theLargestSampleFillsTheRingAndOneMoreByteDoesNot() {
    let arena = 1_000_000
    let largest = SampleSizeLimit.largest(
      cap: SampleSizeLimit.format, arenaBytes: arena, headroom: 564, tracks: tracks,
      payloadFormat: .transportStream)
    let size = {
      SampleSizeLimit.ringBytes(payloadSize: $0, tracks: tracks, payloadFormat: .transportStream)
    }
    #expect(564 + size(largest) <= arena)
    #expect(564 + size(largest + 1) > arena)
  }

  @Test func theFormatCapsALargeBudget() {
    #expect(SampleSizeLimit.format == 8 << 20 - 26)
    let largest = SampleSizeLimit.largest(
      cap: SampleSizeLimit.format, availableBytes: 120_000_000, readerExtra: 65_536, rings: 2,
      headroom: 564, tracks: tracks, payloadFormat: .transportStream)
    #expect(largest == SampleSizeLimit.format)
  }

  @Test func theReaderAndEveryRingShareWhatTheBudgetLeaves() {
    let available = 10_000_000
    let largest = SampleSizeLimit.largest(
      cap: SampleSizeLimit.format, availableBytes: available, readerExtra: 65_536, rings: 2,
      headroom: 564, tracks: tracks, payloadFormat: .transportStream)
    let ring = (available - largest - 65_536) / 2
    #expect(
      564
        + SampleSizeLimit.ringBytes(
          payloadSize: largest, tracks: tracks, payloadFormat: .transportStream) <= ring)
    #expect(largest > 2_000_000 && largest < 4_000_000)
  }

  @Test func aPipelineRefusesASampleAboveWhatItsRingHoldsAsTooLarge() throws {
    let (pipeline, _) = try makePipeline { $0.maximumSampleBytes = SampleSizeLimit.format }
    // The 4 MB budget less 1 MB of overhead and the record table: the ring's arena.
    #expect(pipeline.maximumSampleBytes < 3_000_000)
    #expect(pipeline.maximumSampleBytes > 2_900_000)
    let limit = pipeline.maximumSampleBytes
    let large = CoreFixtures.video(frame: 0, key: true, payload: CoreFixtures.idr(fill: limit - 5))
    #expect(pipeline.append(large))
    let tooLarge = CoreFixtures.video(
      frame: 1, key: true, payload: CoreFixtures.idr(fill: limit - 4))
    #expect(!pipeline.append(tooLarge))
    let snapshot = pipeline.snapshot()
    #expect(snapshot.drops[.video, .tooLarge] == 1)
    #expect(snapshot.drops[.video, .invalid] == 0)
    #expect(snapshot.largestRefusedSample == limit + 1)
    #expect(snapshot.maximumSampleBytes == limit)
    var events: [PipelineEvent] = []
    while let event = pipeline.nextEvent() { events.append(event) }
    #expect(events.contains(.sampleTooLarge(kind: .video, bytes: limit + 1, limit: limit)))
  }
}
