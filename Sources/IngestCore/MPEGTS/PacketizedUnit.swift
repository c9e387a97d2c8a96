/// The transport packets one access unit became.
public struct PacketizedUnit: Equatable, Sendable {
  /// Bytes written: `packetCount * 188`.
  public var byteCount: Int
  /// Transport packets written.
  public var packetCount: Int
  /// True for a video unit whose VCL NAL units all have nal_ref_idc 0: nothing refers to it,
  /// so the send ring may drop it alone. Always false for audio.
  public var isDisposable: Bool

  public init(byteCount: Int, packetCount: Int, isDisposable: Bool) {
    self.byteCount = byteCount
    self.packetCount = packetCount
    self.isDisposable = isDisposable
  }

  /// The unit of a sample whose track is not in the program: nothing written.
  public static let empty = PacketizedUnit(byteCount: 0, packetCount: 0, isDisposable: false)
}
