/// One encoded access unit as the encoder delivered it.
///
/// Video payloads are AVCC (length-prefixed NAL units, length size from the stream's
/// `H264Format`); audio payloads are raw AAC frames without ADTS headers.
public struct MediaSample: Sendable {
  /// Which stream the sample belongs to.
  public var kind: SampleKind
  /// Presentation time.
  public var pts: MediaTime
  /// Decode time; `nil` means equal to `pts` (no reordering).
  public var dts: MediaTime?
  /// True for an IDR access unit (video) and for every audio frame.
  public var isKeyframe: Bool
  /// The encoded bytes.
  public var payload: [UInt8]

  public init(
    kind: SampleKind, pts: MediaTime, dts: MediaTime? = nil, isKeyframe: Bool, payload: [UInt8]
  ) {
    self.kind = kind
    self.pts = pts
    self.dts = dts
    self.isKeyframe = isKeyframe
    self.payload = payload
  }

  /// The decode time, falling back to the presentation time.
  @inlinable public var decodeTime: MediaTime { dts ?? pts }
}
