import CChecksum
import IngestCore

extension RecordChecksum {
  /// CRC-32/MPEG-2 folded with the CPU's carry-less multiply (x86-64 PCLMULQDQ), about four
  /// times the portable table's speed; the portable one where the CPU has none.
  public static let cpu: RecordChecksum =
    cchecksum_crc32_mpeg2_is_accelerated() != 0
    ? RecordChecksum { crc, bytes in
      cchecksum_crc32_mpeg2(crc, bytes.baseAddress, bytes.count)
    }
    : .portable

  /// Whether `cpu` uses the CPU's carry-less multiply.
  public static var cpuIsAccelerated: Bool { cchecksum_crc32_mpeg2_is_accelerated() != 0 }
}
