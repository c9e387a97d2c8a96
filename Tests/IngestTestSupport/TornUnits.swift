import Foundation

/// The PES packets of a received transport stream that the path tore, and the stream without
/// them.
///
/// A receiver that gives up on a lost packet (SRT's too-late drop, after a blackout longer than
/// the latency) passes on what came before and after the hole: the frame it cut in two reaches
/// the decoder without its head or its tail, whatever the sender did. Such a hole shows as a
/// break of the continuity counter on the PID (ISO 13818-1, 2.4.3.3). A unit is torn when a
/// break lies between two of its packets or right after its last one (its tail may be what is
/// missing); packets without a unit start after a break belong to no unit and go too.
///
/// Everything else arrived whole, so a decoder must take the stream without the torn units
/// cleanly: that is what a test can ask of the sender on a path that loses for good.
package struct TornUnits {
  /// Torn PES packets by elementary PID.
  package private(set) var byPID: [UInt16: Int] = [:]
  /// The stream without the torn units' packets (PSI and every whole unit kept, in order).
  package private(set) var intact = Data()

  package var count: Int { byPID.values.reduce(0, +) }

  package init(path: String) throws {
    self.init(stream: try Data(contentsOf: URL(fileURLWithPath: path)))
  }

  package init(stream: Data) {
    let size = 188
    let packetCount = stream.count / size
    var dropped = [Bool](repeating: false, count: packetCount)
    // Per PID: the packets of the unit being read, whether a break touched it, the last counter.
    var open: [UInt16: (packets: [Int], torn: Bool)] = [:]
    var lastCounter: [UInt16: UInt8] = [:]
    func close(_ pid: UInt16) {
      guard let unit = open.removeValue(forKey: pid), unit.torn else { return }
      byPID[pid, default: 0] += 1
      for index in unit.packets { dropped[index] = true }
    }
    stream.withUnsafeBytes { raw in
      for index in 0..<packetCount {
        let offset = index * size
        guard raw[offset] == 0x47 else { continue }
        let pid = UInt16(raw[offset + 1] & 0x1F) << 8 | UInt16(raw[offset + 2])
        let control = raw[offset + 3] >> 4 & 0x3
        guard TransportStreamCheck.isElementary(pid), control & 0x1 != 0 else { continue }
        let unitStart = raw[offset + 1] & 0x40 != 0
        let counter = raw[offset + 3] & 0x0F
        let flagged = control & 0x2 != 0 && raw[offset + 4] > 0 && raw[offset + 5] & 0x80 != 0
        let broken = lastCounter[pid].map { !flagged && counter != ($0 + 1) & 0x0F } ?? false
        lastCounter[pid] = counter
        if broken { open[pid]?.torn = true }
        if unitStart {
          close(pid)
          open[pid] = ([index], false)
        } else if open[pid] != nil {
          open[pid]!.packets.append(index)
        } else {
          dropped[index] = true
        }
      }
    }
    for pid in Array(open.keys) { close(pid) }
    var intact = Data(capacity: stream.count)
    for index in 0..<packetCount where !dropped[index] {
      intact.append(
        stream[(stream.startIndex + index * size)..<(stream.startIndex + (index + 1) * size)])
    }
    self.intact = intact
  }
}
