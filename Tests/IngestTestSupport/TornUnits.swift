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
    let check = TransportStreamCheck(bytes: stream)
    let breaks = check.continuityBreaks
    var dropped = [Bool](repeating: false, count: check.packets.count)
    // Per PID: the packets of the unit being read, and whether a break touched it.
    var open: [UInt16: (packets: [Int], torn: Bool)] = [:]
    func close(_ pid: UInt16) {
      guard let unit = open.removeValue(forKey: pid), unit.torn else { return }
      byPID[pid, default: 0] += 1
      for index in unit.packets { dropped[index] = true }
    }
    for (index, packet) in check.packets.enumerated()
    where TransportStreamCheck.isElementary(packet.pid) && packet.hasPayload {
      if breaks[index] { open[packet.pid]?.torn = true }
      if packet.unitStart {
        close(packet.pid)
        open[packet.pid] = ([index], false)
      } else if open[packet.pid] != nil {
        open[packet.pid]!.packets.append(index)
      } else {
        dropped[index] = true
      }
    }
    for pid in Array(open.keys) { close(pid) }
    var intact = Data(capacity: stream.count)
    for (index, packet) in check.packets.enumerated() where !dropped[index] {
      let start = stream.startIndex + packet.offset
      intact.append(stream[start..<(start + 188)])
    }
    self.intact = intact
  }
}
