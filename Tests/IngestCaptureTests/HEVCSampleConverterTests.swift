import IngestCore
import Testing

@testable import IngestCapture

@Suite struct HEVCSampleConverterTests {
  static func bytes(_ hex: String) -> [UInt8] {
    stride(from: 0, to: hex.count, by: 2).map {
      let start = hex.index(hex.startIndex, offsetBy: $0)
      return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)!
    }
  }

  // libx265, 720x1280 Main.
  static let vps = bytes("40010c01ffff01600000030090000003000003005d959809")
  static let sps = bytes(
    "42010101600000030090000003000003005da005a20050165959a4932bc05a020000030002000003003c10")
  static let pps = bytes("4401c172b46240")
  static let aud: [UInt8] = [0x46, 0x01, 0x50]
  static let idr: [UInt8] = [0x26, 0x01, 0xAF, 0x10, 0x20]
  static let trail: [UInt8] = [0x02, 0x01, 0xD0, 0x11]
  static let startCode: [UInt8] = [0, 0, 0, 1]

  static func annexB(_ units: [[UInt8]]) -> [UInt8] { units.flatMap { startCode + $0 } }
  static func lengthPrefixed(_ units: [[UInt8]]) -> [UInt8] {
    units.flatMap { [0, 0, UInt8($0.count >> 8), UInt8($0.count & 0xFF)] + $0 }
  }

  @Test func annexBMovesParameterSetsIntoTheFormatAndDropsDelimiters() throws {
    var converter = try HEVCSampleConverter(extradata: [], stream: 0)
    #expect(converter.format == nil)
    let first = try converter.convert(
      Self.annexB([Self.aud, Self.vps, Self.sps, Self.pps, Self.idr]), packet: 0)
    #expect(first.payload == Self.lengthPrefixed([Self.idr]))
    #expect(first.formatChanged)
    let format = try #require(converter.format)
    #expect(format.vps == [Self.vps] && format.sps == [Self.sps] && format.pps == [Self.pps])
    #expect(format.nalLengthSize == 4)
    #expect(format.sequence.width == 720 && format.sequence.height == 1280)
    // The same parameter sets again (in front of the next IRAP) change nothing.
    let again = try converter.convert(
      Self.annexB([Self.aud, Self.vps, Self.sps, Self.pps, Self.idr]), packet: 1)
    #expect(!again.formatChanged)
    let trail = try converter.convert(Self.annexB([Self.aud, Self.trail]), packet: 2)
    #expect(trail.payload == Self.lengthPrefixed([Self.trail]))
  }

  @Test func annexBExtradataDescribesTheStreamBeforeTheFirstPacket() throws {
    let converter = try HEVCSampleConverter(
      extradata: Self.annexB([Self.vps, Self.sps, Self.pps]), stream: 0)
    #expect(converter.format?.pps == [Self.pps])
  }

  @Test func hvc1PassesThroughAndHev1LosesItsInBandSets() throws {
    let record = try HEVCFormat(vps: [Self.vps], sps: [Self.sps], pps: [Self.pps]).hvcC
    var converter = try HEVCSampleConverter(extradata: record, stream: 3)
    let plain = Self.lengthPrefixed([Self.trail])
    #expect(try converter.convert(plain, packet: 0).payload == plain)
    let changed: [UInt8] = Self.pps.dropLast() + [0x41]
    let inBand = try converter.convert(
      Self.lengthPrefixed([Self.vps, Self.sps, changed, Self.idr]), packet: 1)
    #expect(inBand.payload == Self.lengthPrefixed([Self.idr]))
    #expect(inBand.formatChanged)
    #expect(converter.format?.pps == [changed])
  }

  @Test func badInputGivesTypedErrorsNamingStreamAndPacket() throws {
    #expect(throws: CaptureError.hevc(stream: 2, packet: -1, .hvcCTruncated(offset: 5))) {
      try HEVCSampleConverter(extradata: [1, 1, 0x60, 0, 0], stream: 2)
    }
    let record = try HEVCFormat(vps: [Self.vps], sps: [Self.sps], pps: [Self.pps]).hvcC
    var converter = try HEVCSampleConverter(extradata: record, stream: 1)
    #expect(
      throws: CaptureError.hevc(stream: 1, packet: 7, .nalLengthPastEnd(offset: 0, length: 9))
    ) {
      try converter.convert([0, 0, 0, 9, 0x02, 0x01], packet: 7)
    }
    // Cut inside the constraint flags (the zero byte the cut leaves last is trailing padding).
    var annexB = try HEVCSampleConverter(extradata: [], stream: 0)
    #expect(
      throws: CaptureError.hevc(
        stream: 0, packet: 4, .hevcSequenceParameterSet(field: "general_constraint_flags"))
    ) {
      try annexB.convert(Self.annexB([Self.vps, Array(Self.sps.prefix(17)), Self.pps]), packet: 4)
    }
  }
}
