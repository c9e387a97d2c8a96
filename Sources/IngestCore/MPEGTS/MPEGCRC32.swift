/// CRC-32/MPEG-2: polynomial 0x04C11DB7, initial value 0xFFFFFFFF, not reflected, no final XOR.
///
/// The checksum of PSI sections (ISO/IEC 13818-1, Annex A) and of dump records. Check value:
/// the ASCII bytes "123456789" give 0x0376E6E7.
public enum MPEGCRC32 {
  private static let table: [UInt32] = (0..<256).map { index in
    var crc = UInt32(index) << 24
    for _ in 0..<8 {
      crc = crc & 0x8000_0000 != 0 ? (crc << 1) ^ 0x04C1_1DB7 : crc << 1
    }
    return crc
  }

  /// Continues a running checksum over `bytes`. Start with `0xFFFF_FFFF`.
  @inlinable public static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
    var crc = crc
    for byte in bytes {
      crc = (crc << 8) ^ entry(Int(UInt8(truncatingIfNeeded: crc >> 24) ^ byte))
    }
    return crc
  }

  /// The checksum of `bytes`.
  public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes {
      crc = (crc << 8) ^ table[Int(UInt8(truncatingIfNeeded: crc >> 24) ^ byte)]
    }
    return crc
  }

  /// The checksum of raw memory.
  public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
    update(0xFFFF_FFFF, bytes)
  }

  @usableFromInline static func entry(_ index: Int) -> UInt32 { table[index] }
}
