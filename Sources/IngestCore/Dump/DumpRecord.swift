/// One record returned by `DumpReader.next()`.
public enum DumpRecord: Hashable, Sendable {
  /// The codec configuration for a sample kind; applies to the samples that follow.
  case format(SampleKind, FormatDescription)
  /// A sample; its bytes are read with `DumpReader.withPayload(_:)` before the next `next()`.
  case sample(DumpSampleHeader)
  /// A timeline event.
  case event(DumpEvent)
}

/// The fixed fields of a sample record, without its encoded bytes.
public struct DumpSampleHeader: Hashable, Sendable {
  /// Which stream the sample belongs to.
  public var kind: SampleKind
  /// Presentation time (timescale > 0).
  public var pts: MediaTime
  /// Decode time, when the encoder gave one (timescale > 0).
  public var dts: MediaTime?
  /// True for an IDR access unit and for every audio frame.
  public var isKeyframe: Bool
  /// Size in bytes of the encoded payload.
  public var payloadSize: Int
  /// For H.264 video, what the reader's validating walk over the NAL units found; passed on to
  /// `Pipeline.append` so that nothing walks them again.
  public var nalUnits: AVCCSummary?

  public init(
    kind: SampleKind, pts: MediaTime, dts: MediaTime?, isKeyframe: Bool, payloadSize: Int,
    nalUnits: AVCCSummary? = nil
  ) {
    self.kind = kind
    self.pts = pts
    self.dts = dts
    self.isKeyframe = isKeyframe
    self.payloadSize = payloadSize
    self.nalUnits = nalUnits
  }
}
