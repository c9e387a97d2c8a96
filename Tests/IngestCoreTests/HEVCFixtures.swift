@testable import IngestCore

/// Real HEVC parameter sets (libx265) and hand-made length-prefixed access units.
enum HEVCFixtures {
  static func bytes(_ hex: String) -> [UInt8] {
    var out: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex {
      let next = hex.index(index, offsetBy: 2)
      out.append(UInt8(hex[index..<next], radix: 16)!)
      index = next
    }
    return out
  }

  /// 720x1280 Main, level 3.1, 8 bits.
  static let vps = bytes("40010c01ffff01600000030090000003000003005d959809")
  static let sps = bytes(
    "42010101600000030090000003000003005da005a20050165959a4932bc05a020000030002000003003c10")
  static let pps = bytes("4401c172b46240")
  /// 642x362 Main 10, level 2.1: a conformance window crops the coded 648x368, and the SPS
  /// holds emulation prevention bytes.
  static let main10SPS = bytes(
    "42010102200000030090000003000003003fa005120171c92365959a4932bc05a020000003002000000303c1")

  static let format = try! HEVCFormat(vps: [vps], sps: [sps], pps: [pps])

  /// A NAL header of `type` with TemporalId `temporalID`.
  static func header(_ type: UInt8, temporalID: Int = 0) -> [UInt8] {
    [type << 1, UInt8(temporalID + 1)]
  }

  /// Length-prefixes each NAL unit with `lengthSize` big-endian bytes.
  static func sample(_ nals: [[UInt8]], lengthSize: Int = 4) -> [UInt8] {
    nals.reduce(into: []) { out, nal in
      for shift in stride(from: (lengthSize - 1) * 8, through: 0, by: -8) {
        out.append(UInt8(truncatingIfNeeded: nal.count >> shift))
      }
      out += nal
    }
  }

  /// A slice NAL of `type`: header and a few payload bytes.
  static func slice(_ type: UInt8, temporalID: Int = 0, fill: Int = 3) -> [UInt8] {
    header(type, temporalID: temporalID) + [UInt8](repeating: 0xA5, count: fill)
  }

  static let idr = sample([slice(19)])
  static let trailR = sample([slice(1)])
  static let trailN = sample([slice(0)])
}
