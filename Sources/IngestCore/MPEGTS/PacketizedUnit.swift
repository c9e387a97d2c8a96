/// The transport packets one access unit became.
public struct PacketizedUnit: Equatable, Sendable {
  /// Bytes written: `packetCount * 188`.
  public var byteCount: Int
  /// Transport packets written.
  public var packetCount: Int

  public init(byteCount: Int, packetCount: Int) {
    self.byteCount = byteCount
    self.packetCount = packetCount
  }

  /// The unit of a sample whose track is not in the program: nothing written.
  public static let empty = PacketizedUnit(byteCount: 0, packetCount: 0)
}
