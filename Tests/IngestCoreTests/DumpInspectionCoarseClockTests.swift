import Testing

@testable import IngestCore

/// `inspect` names an audio clock coarser than one frame: many frames share a timestamp, which
/// the timeline corrects by the sample count and rate.
@Suite struct DumpInspectionCoarseClockTests {
  /// `DumpFixtures.app` at timescale `timescale`, `count` frames at `frameStep` units apart.
  static func inspect(timescale: Int32, count: Int, every frameStep: Int64) throws
    -> DumpInspection.Track
  {
    var writer = try DumpWriter(sink: MemorySink())
    try writer.writeFormat(.aac(DumpFixtures.app), for: .audioApp)
    for index in 0..<count {
      try writer.writeSample(
        MediaSample(
          kind: .audioApp, pts: MediaTime(value: Int64(index) * frameStep, timescale: timescale),
          isKeyframe: true, payload: [0x21, 0x10]))
    }
    return DumpInspection(reading: MemorySource(writer.sink.bytes)).tracks[1]
  }

  @Test func aWholeSecondClockIsCounted() throws {
    // Frames stamped in whole seconds: one unit of the clock spans about 43 frames.
    let track = try Self.inspect(timescale: 1, count: 86, every: 0)
    #expect(track.coarseClockSamples == 86)
    #expect(track.coarsestTimescale == 1)
  }

  @Test func aMillisecondClockIsNot() throws {
    let track = try Self.inspect(timescale: 1000, count: 10, every: 23)
    #expect(track.coarseClockSamples == 0)
    #expect(track.coarsestTimescale == nil)
  }
}
