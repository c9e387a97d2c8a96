/// CRC-32/MPEG-2: polynomial 0x04C11DB7, initial value 0xFFFFFFFF, not reflected, no final XOR.
///
/// The checksum of PSI sections (ISO/IEC 13818-1, Annex A) and of dump records. Check value:
/// the ASCII bytes "123456789" give 0x0376E6E7.
///
/// Raw memory is checked eight bytes per step ("slicing-by-8"): every dump record passes through
/// here, so the byte-at-a-time loop was a sixth of a replay's CPU time.
public enum MPEGCRC32 {
  /// Eight 256-entry tables, one after the other: table k gives the CRC of a byte followed by k
  /// zero bytes.
  private static let tables: [UInt32] = {
    var tables = [UInt32](repeating: 0, count: 8 * 256)
    for index in 0..<256 {
      var crc = UInt32(index) << 24
      for _ in 0..<8 {
        crc = crc & 0x8000_0000 != 0 ? (crc << 1) ^ 0x04C1_1DB7 : crc << 1
      }
      tables[index] = crc
    }
    for slice in 1..<8 {
      for index in 0..<256 {
        let previous = tables[(slice - 1) * 256 + index]
        tables[slice * 256 + index] = (previous << 8) ^ tables[Int(previous >> 24)]
      }
    }
    return tables
  }()

  /// Continues a running checksum over `bytes`. Start with `0xFFFF_FFFF`.
  public static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
    tables.withUnsafeBufferPointer { t in
      var crc = crc
      var offset = 0
      let count = bytes.count
      while offset + 8 <= count {
        let high =
          UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16
          | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
        let c = crc ^ high
        crc =
          t[7 * 256 + Int(c >> 24)] ^ t[6 * 256 + Int(c >> 16 & 0xFF)]
          ^ t[5 * 256 + Int(c >> 8 & 0xFF)] ^ t[4 * 256 + Int(c & 0xFF)]
          ^ t[3 * 256 + Int(bytes[offset + 4])] ^ t[2 * 256 + Int(bytes[offset + 5])]
          ^ t[256 + Int(bytes[offset + 6])] ^ t[Int(bytes[offset + 7])]
        offset += 8
      }
      while offset < count {
        crc = (crc << 8) ^ t[Int(UInt8(truncatingIfNeeded: crc >> 24) ^ bytes[offset])]
        offset += 1
      }
      return crc
    }
  }

  /// The checksum of `bytes`, a byte at a time (short PSI sections).
  public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes {
      crc = (crc << 8) ^ tables[Int(UInt8(truncatingIfNeeded: crc >> 24) ^ byte)]
    }
    return crc
  }

  /// The checksum of raw memory.
  public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
    update(0xFFFF_FFFF, bytes)
  }
}
