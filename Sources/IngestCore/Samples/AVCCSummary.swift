/// What one walk over the NAL units of a length-prefixed (AVCC-framed) H.264 or HEVC access
/// unit found, so that no later stage walks
/// them again: the dump reader (or the pipeline, for samples from elsewhere) makes it while
/// validating the lengths, the pipeline takes `isDisposable` from it and the TS packetizer its
/// Annex B size. A fixed-size value; nothing is allocated.
///
/// Only `AVCCScanner.summarize` and `summarizeHEVC` make one, so every summary describes a payload whose lengths
/// were all checked. It names the payload's size and NAL length size, and a stage that is given
/// a summary of another size walks the payload itself.
public struct AVCCSummary: Hashable, Sendable {
  /// Bytes of the payload walked.
  public let payloadSize: Int
  /// The NAL length prefix size it was walked with (1, 2 or 4).
  public let lengthSize: Int
  /// NAL units of non-zero length, access unit delimiters included.
  public let nalCount: Int
  /// Bytes of the NAL units in Annex B form (4-byte start code + NAL), access unit delimiters
  /// left out.
  public let annexBSize: Int
  /// True when the unit holds a random access slice: IDR (H.264 type 5) or IRAP (HEVC types
  /// 16-23).
  public let containsIDR: Bool
  /// True when the unit carries its parameter sets itself: SPS and PPS (HEVC: VPS too).
  public let hasParameterSets: Bool
  /// True when the unit has at least one slice and nothing references it, so it can be dropped
  /// alone: H.264 slices all with nal_ref_idc 0; HEVC slices all of sub-layer non-reference
  /// pictures (`_N` types) of the stream's highest temporal sub-layer.
  public let isDisposable: Bool
  /// HEVC: every slice is of a RASL picture (NAL types 8, 9), which may reference pictures
  /// from before the CRA it follows: it is sent only when those were. False for H.264.
  public let isRASL: Bool
  /// HEVC: the unit is a CRA or BLA picture, which RASL pictures may follow (an open GOP).
  public let admitsRASL: Bool
  /// HEVC: the TemporalId of the first slice, which the access unit delimiter repeats. 0 for
  /// H.264.
  public let temporalID: Int

  init(
    payloadSize: Int, lengthSize: Int, nalCount: Int, annexBSize: Int, containsIDR: Bool,
    hasParameterSets: Bool, isDisposable: Bool, isRASL: Bool = false,
    admitsRASL: Bool = false, temporalID: Int = 0
  ) {
    self.payloadSize = payloadSize
    self.lengthSize = lengthSize
    self.nalCount = nalCount
    self.annexBSize = annexBSize
    self.containsIDR = containsIDR
    self.hasParameterSets = hasParameterSets
    self.isDisposable = isDisposable
    self.isRASL = isRASL
    self.admitsRASL = admitsRASL
    self.temporalID = temporalID
  }

  /// Whether this summary can stand for `payload` walked with `lengthSize`.
  public func describes(_ payload: UnsafeRawBufferPointer, lengthSize: Int) -> Bool {
    payloadSize == payload.count && self.lengthSize == lengthSize
  }
}
