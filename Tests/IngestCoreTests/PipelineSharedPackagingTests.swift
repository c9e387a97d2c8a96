import Testing

@testable import IngestCore

/// `Pipeline.append(to:...)`: one packaging pass for the outputs that carry the same transport
/// stream, the same ring contents as appending to each on its own.
@Suite struct PipelineSharedPackagingTests {
  /// The units a pipeline's ring holds, in order: kind, keyframe flag and bytes.
  private func drain(_ pipeline: Pipeline) -> [(SampleKind, Bool, [UInt8])] {
    var units: [(SampleKind, Bool, [UInt8])] = []
    while let unit = pipeline.beginSend() {
      units.append((unit.info.kind, unit.info.isKeyframe, Array(unit.slot[unit.headroom...])))
      pipeline.completeSend(unit, bytes: unit.slot.count - unit.headroom)
    }
    return units
  }

  private func samples() -> [MediaSample] {
    var samples: [MediaSample] = []
    for frame in Int64(1)...12 {
      samples.append(
        CoreFixtures.video(
          frame: frame, key: frame % 4 == 1,
          payload: frame % 4 == 1 ? CoreFixtures.idr(fill: 300) : CoreFixtures.pFrame(fill: 90)))
      samples.append(CoreFixtures.audio(.audioApp, frame: frame, bytes: 200))
      samples.append(CoreFixtures.audio(.audioMic, frame: frame, bytes: 150))
    }
    return samples
  }

  @Test func sharedPackagingFillsEachRingAsItsOwnAppendWould() throws {
    let videoAndApp = TrackFormats(video: CoreFixtures.h264, audioApp: CoreFixtures.app)
    // Two outputs with the same TS (one of them at the keyframes-only tier: its own drops), one
    // TS without the mic, one of access units.
    func group() throws -> [Pipeline] {
      let pipelines = [
        try makePipeline(format: .transportStream).0,
        try makePipeline(format: .transportStream).0,
        try makePipeline(format: .transportStream, tracks: videoAndApp).0,
        try makePipeline(format: .accessUnits).0,
      ]
      pipelines[1].updateResident(Int(Double(pipelines[1].budget.budget) * 0.96))
      #expect(pipelines[1].tier == .keyframesOnly)
      return pipelines
    }
    let shared = try group()
    let alone = try group()
    for sample in samples() {
      let taking = { (pipelines: [Pipeline]) in
        pipelines.filter { $0.tracks.contains(sample.kind) }
      }
      sample.payload.withUnsafeBytes { payload in
        Pipeline.append(
          to: taking(shared), kind: sample.kind, pts: sample.pts, dts: sample.dts,
          isKeyframe: sample.isKeyframe, payload: payload)
      }
      for pipeline in taking(alone) { pipeline.append(sample) }
    }
    for (one, other) in zip(shared, alone) {
      let (a, b) = (drain(one), drain(other))
      #expect(a.count == b.count)
      for (x, y) in zip(a, b) {
        #expect(x.0 == y.0)
        #expect(x.1 == y.1)
        #expect(x.2 == y.2)
      }
      #expect(one.snapshot().drops == other.snapshot().drops)
      #expect(one.snapshot().appended == other.snapshot().appended)
    }
    // The keyframes-only output dropped the other frames; the first kept all 36 samples.
    #expect(shared[0].snapshot().sent.reduce(0, +) == 36)
    #expect(shared[1].snapshot().drops[.video, .tierKeyframesOnly] == 9)
  }
}
