import Foundation
import IngestTestSupport
import Testing

/// `TornUnits` on hand-made packets: which units a hole in the continuity counter tears, and
/// what is left.
struct TornUnitsTests {
  /// One 188-byte packet: the PID, whether it starts a unit, its counter, a marker byte in the
  /// payload to tell packets apart, and optionally the discontinuity_indicator.
  static func packet(
    pid: UInt16, start: Bool, counter: UInt8, marker: UInt8, discontinuity: Bool = false
  ) -> [UInt8] {
    var bytes = [UInt8](repeating: 0xFF, count: 188)
    bytes[0] = 0x47
    bytes[1] = (start ? 0x40 : 0) | UInt8(pid >> 8)
    bytes[2] = UInt8(pid & 0xFF)
    if discontinuity {
      bytes[3] = 0x30 | counter & 0x0F
      bytes[4] = 1
      bytes[5] = 0x80
      bytes[6] = marker
    } else {
      bytes[3] = 0x10 | counter & 0x0F
      bytes[4] = marker
    }
    return bytes
  }

  /// Three video units of three packets each (markers 0...8, counters 0...8), a PAT first.
  static var stream: [[UInt8]] {
    [packet(pid: 0, start: true, counter: 0, marker: 0xAA)]
      + (0..<9).map {
        packet(pid: 0x100, start: $0 % 3 == 0, counter: UInt8($0), marker: UInt8($0))
      }
  }

  static func markers(_ data: Data) -> [UInt8] {
    stride(from: 0, to: data.count, by: 188).compactMap { offset in
      let pid = UInt16(data[offset + 1] & 0x1F) << 8 | UInt16(data[offset + 2])
      guard pid == 0x100 else { return nil }
      return data[offset + 3] & 0x20 != 0 ? data[offset + 6] : data[offset + 4]
    }
  }

  @Test func aWholeStreamHasNoTornUnit() {
    let torn = TornUnits(stream: Data(Self.stream.joined()))
    #expect(torn.count == 0)
    #expect(torn.intact == Data(Self.stream.joined()))
  }

  @Test func aHoleInsideAUnitTearsThatUnit() {
    var packets = Self.stream
    packets.remove(at: 1 + 4)  // the middle packet of the second unit
    let torn = TornUnits(stream: Data(packets.joined()))
    #expect(torn.byPID == [0x100: 1])
    #expect(Self.markers(torn.intact) == [0, 1, 2, 6, 7, 8])
  }

  /// A hole across a unit boundary: the unit before it may have lost its tail, and what
  /// follows without a unit start belongs to no unit.
  @Test func aHoleAcrossUnitsTearsTheUnitBeforeAndDropsTheOrphans() {
    var packets = Self.stream
    packets.removeSubrange((1 + 2)...(1 + 3))  // the first unit's tail, the second's head
    let torn = TornUnits(stream: Data(packets.joined()))
    #expect(torn.byPID == [0x100: 1])
    #expect(Self.markers(torn.intact) == [6, 7, 8])
  }

  @Test func aJumpTheWriterFlaggedIsNoHole() {
    var packets = Self.stream
    packets[1 + 3] = Self.packet(
      pid: 0x100, start: true, counter: 12, marker: 3, discontinuity: true)
    for index in 4..<9 {
      packets[1 + index] = Self.packet(
        pid: 0x100, start: index % 3 == 0, counter: UInt8(9 + index), marker: UInt8(index))
    }
    let torn = TornUnits(stream: Data(packets.joined()))
    #expect(torn.count == 0)
    #expect(Self.markers(torn.intact) == Array(0..<9))
  }
}
