import IngestCore

/// Consumes a fuzzer's input front to back: small fields first, the rest as a payload.
struct FuzzInput {
  let bytes: UnsafeRawBufferPointer
  private(set) var position = 0

  init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

  var remaining: Int { bytes.count - position }

  /// The next byte, or 0 once the input is used up (so every input is a valid case).
  mutating func byte() -> UInt8 {
    guard position < bytes.count else { return 0 }
    defer { position += 1 }
    return bytes[position]
  }

  /// A big-endian 16-bit value.
  mutating func uint16() -> Int { Int(byte()) << 8 | Int(byte()) }

  /// Up to `count` bytes.
  mutating func take(_ count: Int) -> UnsafeRawBufferPointer {
    let end = position + min(max(0, count), remaining)
    defer { position = end }
    return UnsafeRawBufferPointer(rebasing: bytes[position..<end])
  }

  /// Everything not consumed yet.
  mutating func rest() -> UnsafeRawBufferPointer { take(remaining) }
}

/// Serves bytes from memory in reads of at most `chunk` bytes, as a slow file or socket would.
struct MemorySource: ByteSource {
  let bytes: [UInt8]
  let chunk: Int
  var position = 0

  init(_ bytes: [UInt8], chunk: Int) {
    self.bytes = bytes
    self.chunk = max(1, chunk)
  }

  mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
    let count = min(buffer.count, chunk, bytes.count - position)
    guard count > 0 else { return 0 }
    bytes.withUnsafeBytes { raw in
      buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[position..<position + count]))
    }
    position += count
    return count
  }
}

/// Stops the process the way libFuzzer records as a crash, with a message saying which
/// property failed (a Swift `precondition` would be stripped of its text in -O builds).
func require(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
  if !condition() { fatalError(message()) }
}

/// Rewrites the CRC of every complete record so that mutations reach the record decoders instead
/// of stopping at the checksum. Framing (type, length) is left as the fuzzer made it.
func repairRecordCRCs(_ dump: inout [UInt8]) {
  var offset = DumpFormat.headerSize
  while offset + DumpFormat.recordHeaderSize <= dump.count {
    var length = 0
    for index in 0..<4 { length |= Int(dump[offset + 1 + index]) << (8 * index) }
    let end = offset + DumpFormat.recordHeaderSize + length
    guard length <= DumpFormat.maximumPayloadSize, end + DumpFormat.crcSize <= dump.count else {
      return
    }
    let crc = dump.withUnsafeBytes {
      MPEGCRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[offset..<end]))
    }
    for index in 0..<4 { dump[end + index] = UInt8(truncatingIfNeeded: crc >> (8 * index)) }
    offset = end + DumpFormat.crcSize
  }
}

/// A valid configuration from the fixtures, for inputs whose own configuration does not parse.
enum FallbackFormats {
  static let h264 = try! H264Format(
    profile: 77, compatibility: 0, level: 31, nalLengthSize: 4,
    sps: [[0x67, 0x4D, 0x00, 0x1F, 0xAC, 0xD9, 0x40, 0x5A, 0x05, 0x1B]],
    pps: [[0x68, 0xEB, 0xE3, 0xCB, 0x22, 0xC0]])
  static let aac = try! AACFormat(objectType: 2, sampleRate: 48000, channels: 2)

  /// 720x1280 HEVC Main from libx265, with NAL lengths of `nalLengthSize` bytes.
  static func hevc(nalLengthSize: Int) -> HEVCFormat {
    try! HEVCFormat(
      vps: [
        [
          0x40, 0x01, 0x0C, 0x01, 0xFF, 0xFF, 0x01, 0x60, 0x00, 0x00, 0x03, 0x00, 0x90, 0x00,
          0x00, 0x03, 0x00, 0x00, 0x03, 0x00, 0x5D, 0x95, 0x98, 0x09,
        ]
      ],
      sps: [
        [
          0x42, 0x01, 0x01, 0x01, 0x60, 0x00, 0x00, 0x03, 0x00, 0x90, 0x00, 0x00, 0x03, 0x00,
          0x00, 0x03, 0x00, 0x5D, 0xA0, 0x05, 0xA2, 0x00, 0x50, 0x16, 0x59, 0x59, 0xA4, 0x93,
          0x2B, 0xC0, 0x5A, 0x02, 0x00, 0x00, 0x03, 0x00, 0x02, 0x00, 0x00, 0x03, 0x00, 0x3C,
          0x10,
        ]
      ],
      pps: [[0x44, 0x01, 0xC1, 0x72, 0xB4, 0x62, 0x40]], nalLengthSize: nalLengthSize)
  }
}
