import Foundation
import IngestCore
import Testing

@testable import IngestPOSIX

/// The CPU's CRC-32/MPEG-2 (carry-less multiply folding) computes exactly the portable one.
@Suite struct RecordChecksumCPUTests {
  @Test func theCheckValue() {
    let check = Array("123456789".utf8).withUnsafeBytes {
      RecordChecksum.cpu.update(0xFFFF_FFFF, $0)
    }
    #expect(check == 0x0376_E6E7)
  }

  /// Every length up to a few folds, at every alignment of a 16-byte block, with a running CRC
  /// carried in; then lengths of whole dump records.
  @Test func sameAsThePortableChecksum() {
    var generator = SystemRandomNumberGenerator()
    let bytes = (0..<(1 << 16)).map { _ in UInt8.random(in: 0...255, using: &generator) }
    bytes.withUnsafeBytes { all in
      var mismatches: [String] = []
      func compare(_ start: Int, _ count: Int, _ crc: UInt32) {
        let slice = UnsafeRawBufferPointer(rebasing: all[start..<start + count])
        let portable = RecordChecksum.portable.update(crc, slice)
        let cpu = RecordChecksum.cpu.update(crc, slice)
        if portable != cpu { mismatches.append("\(count) bytes at \(start)") }
      }
      for count in 0...300 {
        for start in 0..<16 { compare(start, count, UInt32.random(in: 0...UInt32.max)) }
      }
      for count in [1316, 3400, 4096, 65_519, 65_520] { compare(7, count, 0xFFFF_FFFF) }
      #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }
  }

  /// On an x86-64 CPU that lists PCLMULQDQ (and SSSE3), the fast path is the one in use.
  @Test func foldsWhereTheCPUCan() throws {
    #if arch(x86_64)
      let cpuinfo = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
      let flags = cpuinfo.split(separator: "\n").first { $0.hasPrefix("flags") } ?? ""
      let words = Set(flags.split(separator: " ").map(String.init))
      #expect(
        RecordChecksum.cpuIsAccelerated == (words.contains("pclmulqdq") && words.contains("ssse3")))
    #else
      #expect(!RecordChecksum.cpuIsAccelerated)
    #endif
  }
}
