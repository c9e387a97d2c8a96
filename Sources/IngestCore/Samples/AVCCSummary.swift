/// What one walk over the NAL units of an AVCC access unit found, so that no later stage walks
/// them again: the dump reader (or the pipeline, for samples from elsewhere) makes it while
/// validating the lengths, the pipeline takes `isDisposable` from it and the TS packetizer its
/// Annex B size. A fixed-size value; nothing is allocated.
///
/// Only `AVCCScanner.summarize` makes one, so every summary describes a payload whose lengths
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
  /// True when the unit holds an IDR slice (nal_unit_type 5).
  public let containsIDR: Bool
  /// True when the unit carries both an SPS and a PPS.
  public let hasParameterSets: Bool
  /// True when the unit has at least one slice (types 1-5) and all of them have nal_ref_idc 0:
  /// nothing references it and it can be dropped alone.
  public let isDisposable: Bool

  init(
    payloadSize: Int, lengthSize: Int, nalCount: Int, annexBSize: Int, containsIDR: Bool,
    hasParameterSets: Bool, isDisposable: Bool
  ) {
    self.payloadSize = payloadSize
    self.lengthSize = lengthSize
    self.nalCount = nalCount
    self.annexBSize = annexBSize
    self.containsIDR = containsIDR
    self.hasParameterSets = hasParameterSets
    self.isDisposable = isDisposable
  }

  /// Whether this summary can stand for `payload` walked with `lengthSize`.
  public func describes(_ payload: UnsafeRawBufferPointer, lengthSize: Int) -> Bool {
    payloadSize == payload.count && self.lengthSize == lengthSize
  }
}
