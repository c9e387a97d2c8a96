/// How a dump's record CRCs (CRC-32/MPEG-2) are computed.
///
/// Every byte of a dump passes through the checksum, and the portable one (`MPEGCRC32`, table
/// lookups) is a large part of a replay's time. A CPU with carry-less multiplication computes the
/// same function several times faster, but reaching it takes C, which the core does not import:
/// the module that can (`IngestPOSIX`) supplies it through this type.
public struct RecordChecksum: Sendable {
  /// Continues a running checksum over bytes (start with `0xFFFF_FFFF`).
  public let update: @Sendable (UInt32, UnsafeRawBufferPointer) -> UInt32

  /// - Parameter update: must compute exactly `MPEGCRC32.update`.
  public init(update: @escaping @Sendable (UInt32, UnsafeRawBufferPointer) -> UInt32) {
    self.update = update
  }

  /// The core's own: slicing-by-16 table lookups.
  public static let portable = RecordChecksum(update: MPEGCRC32.update)
}
