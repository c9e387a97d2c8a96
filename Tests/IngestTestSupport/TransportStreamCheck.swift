import Foundation

/// Reads a transport stream file the way a receiver would, for assertions: sync bytes, continuity
/// counters per PID, and what the stream starts with.
package struct TransportStreamCheck {
  package struct Packet {
    package var pid: UInt16
    package var unitStart: Bool
    package var hasPayload: Bool
    package var continuity: UInt8
    package var discontinuity: Bool
    package var randomAccess: Bool
    package var hasPCR: Bool
  }

  package let packets: [Packet]
  /// Bytes that were not whole 188-byte packets starting with 0x47.
  package let badSync: Int

  package init(path: String) throws {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    var packets: [Packet] = []
    var badSync = 0
    data.withUnsafeBytes { raw in
      var offset = 0
      while offset + 188 <= raw.count {
        guard raw[offset] == 0x47 else {
          badSync += 1
          offset += 1
          continue
        }
        let pid = UInt16(raw[offset + 1] & 0x1F) << 8 | UInt16(raw[offset + 2])
        let control = raw[offset + 3] >> 4 & 0x3
        var discontinuity = false
        var randomAccess = false
        var hasPCR = false
        if control & 0x2 != 0 && raw[offset + 4] > 0 {
          let flags = raw[offset + 5]
          discontinuity = flags & 0x80 != 0
          randomAccess = flags & 0x40 != 0
          hasPCR = flags & 0x10 != 0
        }
        packets.append(
          Packet(
            pid: pid, unitStart: raw[offset + 1] & 0x40 != 0, hasPayload: control & 0x1 != 0,
            continuity: raw[offset + 3] & 0x0F, discontinuity: discontinuity,
            randomAccess: randomAccess, hasPCR: hasPCR))
        offset += 188
      }
      badSync += raw.count - offset
    }
    self.packets = packets
    self.badSync = badSync
  }

  /// Continuity-counter errors per PID: a payload packet whose counter is not the previous + 1
  /// (modulo 16), unless it signals a discontinuity.
  package var continuityErrors: Int {
    var last: [UInt16: UInt8] = [:]
    var errors = 0
    for packet in packets where packet.hasPayload && packet.pid != 0x1FFF {
      if let previous = last[packet.pid], !packet.discontinuity,
        packet.continuity != (previous + 1) & 0x0F
      {
        errors += 1
      }
      last[packet.pid] = packet.continuity
    }
    return errors
  }

  /// PIDs that carry payload, in order of first appearance.
  package var pids: [UInt16] {
    var seen: [UInt16] = []
    for packet in packets where packet.hasPayload && !seen.contains(packet.pid) {
      seen.append(packet.pid)
    }
    return seen
  }

  /// Whether the stream begins with PAT then PMT and its first video packet starts a keyframe
  /// (random_access_indicator) carrying a PCR. Audio may come first: it needs no reference.
  package func startsCleanly(video: Bool) -> Bool {
    guard packets.count > 3, packets[0].pid == 0, packets[1].pid == 0x1000 else { return false }
    guard video else { return true }
    guard let first = packets.first(where: { $0.pid == 0x100 && $0.hasPayload }) else {
      return false
    }
    return first.unitStart && first.randomAccess && first.hasPCR
  }
}
