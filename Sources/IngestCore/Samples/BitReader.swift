/// Reads big-endian bit fields and Exp-Golomb codes (AudioSpecificConfig, H.264 SPS); every read
/// returns nil once the data runs out.
public struct BitReader {
  private let bytes: [UInt8]
  private var bit = 0

  /// Reads `bytes` as they are.
  public init(_ bytes: [UInt8]) { self.bytes = bytes }

  /// Reads an H.264 NAL unit's payload, dropping its emulation-prevention bytes (00 00 03).
  public init(removingEmulationPrevention nal: some Sequence<UInt8>) {
    var bytes: [UInt8] = []
    var zeros = 0
    for byte in nal {
      if zeros >= 2 && byte == 3 {
        zeros = 0
        continue
      }
      zeros = byte == 0 ? zeros + 1 : 0
      bytes.append(byte)
    }
    self.bytes = bytes
  }

  /// The next `count` bits as an unsigned number.
  public mutating func read(_ count: Int) -> Int? {
    guard bit + count <= bytes.count * 8 else { return nil }
    var value = 0
    for _ in 0..<count {
      value = value << 1 | Int(bytes[bit >> 3] >> (7 - UInt8(bit & 7)) & 1)
      bit += 1
    }
    return value
  }

  /// An unsigned Exp-Golomb code, ue(v).
  public mutating func ue() -> Int? {
    var zeros = 0
    while true {
      guard let next = read(1) else { return nil }
      if next == 1 { break }
      zeros += 1
      guard zeros < 32 else { return nil }
    }
    guard let rest = read(zeros) else { return nil }
    return (1 << zeros) - 1 + rest
  }

  /// A signed Exp-Golomb code, se(v).
  public mutating func se() -> Int? {
    guard let code = ue() else { return nil }
    return code & 1 == 1 ? (code + 1) / 2 : -(code / 2)
  }
}
