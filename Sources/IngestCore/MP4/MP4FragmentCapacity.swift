/// What one fragment holds per track, for the `.mp4` recording (`IngestMP4`) and fMP4 HLS
/// segments (`IngestHLS`) alike: the fragment buffers that `MP4Fragmenter` reserves.
///
/// A fragment is cut at every keyframe, and also when a track's buffer fills, so the buffers
/// bound a fragment, not the stream. The video buffer holds a 2 s GOP at 12 Mb/s, or the run's
/// largest sample when that is larger: a keyframe starts an empty fragment, so a buffer of the
/// largest sample takes every keyframe the run admits (the run builder plans the sample limit
/// with this buffer in the memory ledger, `OutputSink.bufferBytes(forSamplesUpTo:)`).
public struct MP4FragmentCapacity: Sendable, Equatable {
  /// Bytes of video a fragment holds at least: a 2 s GOP at 12 Mb/s.
  public static let videoGOPBytes = 3 << 20
  /// Bytes of one audio track a fragment holds: 10 s of 256 kb/s AAC, far above the largest
  /// AAC frame (6144 bits per channel).
  public static let audioBytes = 320 << 10
  /// Samples of one track a fragment holds: 10 s of 48 kHz AAC, 8 s of 60 fps video.
  public static let samples = 480

  /// The largest sample payload the video buffer must take whole.
  public var largestSample: Int

  /// - Parameter largestSample: the run's sample limit (`Pipeline.maximumSampleBytes`); 0
  ///   for the buffers of a GOP alone.
  public init(largestSample: Int = 0) { self.largestSample = max(0, largestSample) }

  /// Bytes of media one fragment holds for a track of `kind`.
  public func mediaBytes(_ kind: SampleKind) -> Int {
    kind == .video ? max(Self.videoGOPBytes, largestSample) : Self.audioBytes
  }

  /// Every buffer a fragmenter for `kinds` holds: media, sample tables and the `moof`
  /// (`MP4Fragmenter.bufferBytes` of a fragmenter made with these capacities).
  public func bufferBytes(kinds: [SampleKind]) -> Int {
    let media = kinds.reduce(0) { $0 + mediaBytes($1) }
    return media + kinds.count * Self.samples * MP4Fragmenter.sampleStride
      + MP4Fragmenter.moofBytes(tracks: kinds.count, samples: Self.samples)
  }

  /// A fragmenter for `tracks` with these buffers.
  public func fragmenter(tracks: [MP4Track]) -> MP4Fragmenter {
    MP4Fragmenter(
      tracks: tracks, mediaCapacity: { mediaBytes($0.kind) }, sampleCapacity: Self.samples)
  }
}
