import Testing

@testable import IngestCore

@Suite struct MPEGCRC32Tests {
  @Test func checkValue() {
    #expect(MPEGCRC32.checksum(Array("123456789".utf8)) == 0x0376_E6E7)
  }

  @Test func emptyInputIsInitialValue() {
    #expect(MPEGCRC32.checksum([UInt8]()) == 0xFFFF_FFFF)
  }

  @Test func rawAndArrayAgreeAndUpdateComposes() {
    let bytes: [UInt8] = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 37) }
    let whole = bytes.withUnsafeBytes { MPEGCRC32.checksum($0) }
    #expect(whole == MPEGCRC32.checksum(bytes))
    let split = bytes.withUnsafeBytes { raw in
      MPEGCRC32.update(
        MPEGCRC32.update(0xFFFF_FFFF, UnsafeRawBufferPointer(rebasing: raw[..<100])),
        UnsafeRawBufferPointer(rebasing: raw[100...]))
    }
    #expect(split == whole)
  }

  /// The sixteen-bytes-a-step path agrees with the byte-at-a-time one at every length and offset.
  @Test func slicedAgreesWithBytewise() {
    var generator = SeededGenerator(state: 7)
    let bytes: [UInt8] = (0..<600).map { _ in UInt8.random(in: 0...255, using: &generator) }
    bytes.withUnsafeBytes { raw in
      for start in 0..<17 {
        for end in stride(from: start, through: raw.count, by: 13) {
          let slice = UnsafeRawBufferPointer(rebasing: raw[start..<end])
          #expect(MPEGCRC32.checksum(slice) == MPEGCRC32.checksum(bytes[start..<end]))
        }
      }
    }
  }

  /// A PAT section's CRC makes the CRC over section plus CRC zero (the receiver's check).
  @Test func sectionWithItsCRCChecksToZero() {
    var section: [UInt8] = [0x00, 0xB0, 0x0D, 0x00, 0x01, 0xC1, 0x00, 0x00, 0x00, 0x01, 0xF0, 0x00]
    let crc = MPEGCRC32.checksum(section)
    section += [
      UInt8(crc >> 24), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF),
    ]
    #expect(MPEGCRC32.checksum(section) == 0)
  }
}
