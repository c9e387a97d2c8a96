/// What an HLS recording's media segments are: MPEG-TS, or fragmented MP4 (CMAF-style `.m4s`
/// segments after an initialization section that `EXT-X-MAP` names).
///
/// Apple's HLS Authoring Specification for Apple Devices (1.5) requires fMP4 for HEVC and allows
/// either for H.264, so HEVC recordings default to fMP4 (`preferred(for:)`). Here rather than in
/// `IngestHLS` because the `--to` URL names it (`hls:DIR?container=fmp4`) and the ring's
/// payload follows from it (`payloadFormat`).
public enum HLSContainer: String, Sendable, Equatable, CaseIterable {
  /// `segNNNNN.ts`: each segment starts with PAT, PMT and a keyframe (`#EXT-X-VERSION:3`).
  case transportStream = "ts"
  /// `segNNNNN.m4s`: `moof` + `mdat` fragments after `initNNNNN.mp4` (`#EXT-X-VERSION:7`).
  case fragmentedMP4 = "fmp4"

  /// The media segments' file extension, with its dot.
  public var segmentExtension: String {
    switch self {
    case .transportStream: ".ts"
    case .fragmentedMP4: ".m4s"
    }
  }

  /// What the ring holds for segments of this container.
  public var payloadFormat: PayloadFormat {
    self == .transportStream ? .transportStream : .accessUnits
  }

  /// fMP4 for HEVC video (Apple devices play HEVC only from fMP4), MPEG-TS otherwise: the
  /// container most players take for H.264 and audio alone.
  public static func preferred(for tracks: TrackFormats) -> HLSContainer {
    if case .hevc = tracks.video { return .fragmentedMP4 }
    return .transportStream
  }

  /// The container whose segments carry the extension of `name` (`seg00001.m4s`), nil for any
  /// other name.
  public static func of(segmentName name: String) -> HLSContainer? {
    allCases.first { name.hasSuffix($0.segmentExtension) }
  }
}
