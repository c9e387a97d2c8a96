import Testing

@testable import IngestPOSIX

@Suite struct SystemPathTests {
  @Test func utf8NamesAreTheirOwnStrings() {
    for name in ["in.dump", "/tmp/Aufnahme-Grüße.ts", "录像.m3u8", ""] {
      #expect(SystemPath.string(decoding: Array(name.utf8)) == name)
      #expect(SystemPath.bytes(name) == Array(name.utf8))
      #expect(SystemPath.display(name) == name)
    }
  }

  @Test func invalidBytesSurviveTheRoundTripAndAreShownEscaped() {
    let bytes = Array("bad".utf8) + [0xFF] + Array(".dump".utf8)
    let path = SystemPath.string(decoding: bytes)
    #expect(SystemPath.bytes(path) == bytes)
    #expect(SystemPath.display(path) == "bad\\xFF.dump")
  }

  /// Truncated sequences, overlong forms, encoded surrogates, a lead byte before ASCII, and the
  /// escape scalars themselves encoded in the input: every byte string comes back unchanged.
  @Test func anyBytesComeBackUnchanged() {
    let cases: [[UInt8]] = [
      [0xC3], [0xC3, 0x41], [0xE2, 0x82], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF5, 0x80],
      [0xEF, 0x9F, 0xBF], [0xEF, 0x9E, 0x80, 0xFF], [0x80, 0x80, 0xE2, 0x82, 0xAC],
      Array(0x01...0xFF),
    ]
    for bytes in cases {
      let path = SystemPath.string(decoding: bytes)
      #expect(SystemPath.bytes(path) == bytes, "\(bytes)")
      let passed = SystemPath.withCString(path) { pointer in
        Array(UnsafeBufferPointer(start: pointer, count: bytes.count + 1)).map {
          UInt8(bitPattern: $0)
        }
      }
      #expect(passed == bytes + [0], "\(bytes)")
    }
  }
}
