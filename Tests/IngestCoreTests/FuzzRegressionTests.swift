import Testing

@testable import IngestCore

/// Inputs that once broke an invariant the fuzz targets (`Scripts/fuzz`) check, replayed through
/// the same code as ordinary tests.
@Suite struct FuzzRegressionTests {
  /// Two samples at the opposite ends of the 90 kHz range: the inspector's track duration
  /// (last - first presentation time) must not overflow.
  @Test func inspectionOfExtremeTimestampsDoesNotOverflow() throws {
    var writer = try DumpWriter(sink: MemorySink())
    try writer.writeFormat(.aac(DumpFixtures.app), for: .audioApp)
    for value in [Int64.min + 1, Int64.max] {
      try writer.writeSample(
        MediaSample(
          kind: .audioApp, pts: MediaTime(value: value, timescale: 90_000), isKeyframe: true,
          payload: [0x21, 0x10]))
    }
    let inspection = DumpInspection(reading: MemorySource(writer.sink.bytes))
    let track = inspection.tracks[Int(SampleKind.audioApp.rawValue)]
    #expect(track.samples == 2)
    #expect(track.duration == .max)
  }
}
