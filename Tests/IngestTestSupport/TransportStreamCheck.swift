import Foundation
import IngestCore
import IngestPOSIX

/// Reads a transport stream file the way a receiver would, for assertions: sync bytes, continuity
/// counters per PID, what the stream starts with, and the timing and decodability rules of
/// `conformanceViolations(parameterSets:)`.
package struct TransportStreamCheck {
  package struct Packet {
    /// Where the packet starts in the stream (bytes).
    package var offset: Int
    package var pid: UInt16
    package var unitStart: Bool
    package var hasPayload: Bool
    package var continuity: UInt8
    package var discontinuity: Bool
    package var randomAccess: Bool
    package var hasPCR: Bool
    /// The PCR base (90 kHz), when `hasPCR`.
    package var pcr: Int64?
  }

  /// One reassembled PES packet of an elementary PID.
  package struct Unit {
    package var pid: UInt16
    /// Index of its first and last TS packet in `packets`.
    package var firstPacket: Int
    package var lastPacket: Int
    package var pts: Int64?
    package var dts: Int64?
    /// The first packet carried the discontinuity_indicator.
    package var discontinuity: Bool
    /// The PES payload (Annex B for video, ADTS for audio).
    package var payload: [UInt8]

    /// DTS, or PTS when the header has no DTS.
    package var decodeTime: Int64? { dts ?? pts }

    /// The NAL units of an Annex B payload, each without its start code.
    package var nalUnits: [ArraySlice<UInt8>] {
      var starts: [(code: Int, data: Int)] = []
      var index = 0
      while index + 3 <= payload.count {
        if payload[index] == 0, payload[index + 1] == 0, payload[index + 2] == 1 {
          starts.append((index > 0 && payload[index - 1] == 0 ? index - 1 : index, index + 3))
          index += 3
        } else {
          index += 1
        }
      }
      return starts.indices.map { position in
        let end = position + 1 < starts.count ? starts[position + 1].code : payload.count
        return payload[starts[position].data..<max(end, starts[position].data)]
      }
    }

    /// The nal_unit_type of each NAL unit.
    package var nalTypes: [UInt8] { nalUnits.compactMap { $0.first.map { $0 & 0x1F } } }
  }

  /// The SPS and PPS of one video format record, in the order the dump announced them.
  package struct ParameterSets: Equatable, CustomStringConvertible {
    package var sps: [[UInt8]]
    package var pps: [[UInt8]]

    package init(sps: [[UInt8]], pps: [[UInt8]]) {
      self.sps = sps
      self.pps = pps
    }

    package var description: String {
      "SPS \(sps.map(\.count)) bytes, PPS \(pps.map(\.count)) bytes"
    }
  }

  /// A rule of a decodable, well-timed stream that the file breaks, with where.
  package enum Violation: Equatable, CustomStringConvertible {
    /// A PCR equal to or below the previous one without a discontinuity_indicator.
    case pcrNotIncreasing(packet: Int, previous: Int64, pcr: Int64)
    /// More than 40 ms of PCR time between two PCRs without a discontinuity_indicator.
    case pcrGap(packet: Int, ticks: Int64)
    /// A PID's decode time went back or repeated without a discontinuity_indicator.
    case decodeTimeNotIncreasing(pid: UInt16, packet: Int, previous: Int64, dts: Int64)
    /// A PES whose decode time is earlier than the PCR at its last byte: it arrives too late.
    case decodeTimeBeforePCR(pid: UInt16, packet: Int, dts: Int64, pcr: Int64)
    /// The first video unit is not an IDR access unit.
    case firstVideoUnitNotIDR(packet: Int, nalTypes: [UInt8])
    /// An IDR without SPS and PPS in front of it.
    case idrWithoutParameterSets(packet: Int)
    /// An IDR whose SPS/PPS are not those of the format record in force.
    case idrWithStaleParameterSets(packet: Int, expected: String)
    /// Format records whose parameter sets no IDR ever carried.
    case formatsNeverSent(count: Int)

    package var description: String {
      switch self {
      case .pcrNotIncreasing(let packet, let previous, let pcr):
        "packet \(packet): PCR \(pcr) not above the previous \(previous)"
      case .pcrGap(let packet, let ticks):
        "packet \(packet): \(ticks / 90) ms since the previous PCR (at most 40)"
      case .decodeTimeNotIncreasing(let pid, let packet, let previous, let dts):
        "PID \(pid) packet \(packet): DTS \(dts) not above \(previous), no discontinuity"
      case .decodeTimeBeforePCR(let pid, let packet, let dts, let pcr):
        "PID \(pid) packet \(packet): DTS \(dts) before the PCR \(pcr) at its last byte"
      case .firstVideoUnitNotIDR(let packet, let types):
        "packet \(packet): first video unit has NAL types \(types), no IDR"
      case .idrWithoutParameterSets(let packet): "packet \(packet): IDR without SPS and PPS"
      case .idrWithStaleParameterSets(let packet, let expected):
        "packet \(packet): IDR parameter sets are not the current format's (\(expected))"
      case .formatsNeverSent(let count): "\(count) video format records never reached an IDR"
      }
    }
  }

  /// The most PCR time allowed between two PCRs (40 ms, as DVB requires).
  package static let maximumPCRInterval: Int64 = 3_600
  package static let videoPID: UInt16 = 0x100

  /// Whether a PID is one of the writer's elementary streams (video 0x100, audio 0x101, 0x102),
  /// not PSI (PAT 0, PMT 0x1000) or null packets.
  package static func isElementary(_ pid: UInt16) -> Bool { (0x100..<0x1000).contains(pid) }

  package let packets: [Packet]
  /// Bytes that were not whole 188-byte packets starting with 0x47.
  package let badSync: Int
  /// The PES packets of every elementary PID, in stream order.
  package let units: [Unit]

  package init(path: String) throws {
    self.init(bytes: try Data(contentsOf: URL(fileURLWithPath: path)))
  }

  /// Reads a stream held in memory (what a test sent through the TS writer).
  package init(bytes data: some ContiguousBytes) {
    var packets: [Packet] = []
    var units: [Unit] = []
    var open: [UInt16: Unit] = [:]
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
        let unitStart = raw[offset + 1] & 0x40 != 0
        let control = raw[offset + 3] >> 4 & 0x3
        var packet = Packet(
          offset: offset, pid: pid, unitStart: unitStart, hasPayload: control & 0x1 != 0,
          continuity: raw[offset + 3] & 0x0F, discontinuity: false, randomAccess: false,
          hasPCR: false)
        var payloadStart = offset + 4
        if control & 0x2 != 0 {
          let length = Int(raw[offset + 4])
          payloadStart += 1 + length
          if length > 0 {
            let flags = raw[offset + 5]
            packet.discontinuity = flags & 0x80 != 0
            packet.randomAccess = flags & 0x40 != 0
            packet.hasPCR = flags & 0x10 != 0 && length >= 7
            if packet.hasPCR {
              let p = offset + 6
              packet.pcr =
                Int64(raw[p]) << 25 | Int64(raw[p + 1]) << 17 | Int64(raw[p + 2]) << 9
                | Int64(raw[p + 3]) << 1 | Int64(raw[p + 4] >> 7)
            }
          }
        }
        let index = packets.count
        packets.append(packet)
        if Self.isElementary(pid), packet.hasPayload, payloadStart < offset + 188 {
          let bytes = Array(raw[payloadStart..<(offset + 188)])
          if unitStart {
            if let finished = open.removeValue(forKey: pid) { units.append(Self.parsed(finished)) }
            open[pid] = Unit(
              pid: pid, firstPacket: index, lastPacket: index, discontinuity: packet.discontinuity,
              payload: bytes)
          } else if open[pid] != nil {
            open[pid]!.payload += bytes
            open[pid]!.lastPacket = index
          }
        }
        offset += 188
      }
      badSync += raw.count - offset
    }
    units += open.values.sorted { $0.firstPacket < $1.firstPacket }.map(Self.parsed)
    self.packets = packets
    self.badSync = badSync
    self.units = units.sorted { $0.firstPacket < $1.firstPacket }
  }

  /// Splits a PES packet's header (PTS, DTS) from its payload.
  private static func parsed(_ unit: Unit) -> Unit {
    var unit = unit
    let bytes = unit.payload
    guard bytes.count >= 9, bytes[0] == 0, bytes[1] == 0, bytes[2] == 1 else { return unit }
    func timestamp(at index: Int) -> Int64? {
      guard index + 5 <= bytes.count else { return nil }
      return Int64(bytes[index] >> 1 & 0x07) << 30 | Int64(bytes[index + 1]) << 22
        | Int64(bytes[index + 2] >> 1) << 15 | Int64(bytes[index + 3]) << 7
        | Int64(bytes[index + 4] >> 1)
    }
    let flags = bytes[7] >> 6
    if flags & 0x2 != 0 { unit.pts = timestamp(at: 9) }
    if flags == 0x3 { unit.dts = timestamp(at: 14) }
    let start = min(9 + Int(bytes[8]), bytes.count)
    unit.payload = Array(bytes[start...])
    return unit
  }

  /// Continuity-counter errors: payload packets that break their PID's continuity.
  package var continuityErrors: Int { continuityBreaks.count(where: \.self) }

  /// For each packet, whether it breaks its PID's continuity: a payload packet whose counter is
  /// not the previous + 1 (modulo 16) and that signals no discontinuity (null packets never do).
  package var continuityBreaks: [Bool] {
    var last: [UInt16: UInt8] = [:]
    return packets.map { packet in
      guard packet.hasPayload, packet.pid != 0x1FFF else { return false }
      defer { last[packet.pid] = packet.continuity }
      guard let previous = last[packet.pid] else { return false }
      return !packet.discontinuity && packet.continuity != (previous + 1) & 0x0F
    }
  }

  /// PIDs that carry payload, in order of first appearance.
  package var pids: [UInt16] {
    var seen: [UInt16] = []
    for packet in packets where packet.hasPayload && !seen.contains(packet.pid) {
      seen.append(packet.pid)
    }
    return seen
  }

  /// The elementary PIDs that carry payload (PAT and PMT left out), in order of first appearance.
  package var elementaryPIDs: [UInt16] { pids.filter(Self.isElementary) }

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

  /// The packets with a PCR: index in `packets`, value, discontinuity_indicator.
  package var pcrs: [(packet: Int, pcr: Int64, discontinuity: Bool)] {
    packets.indices.compactMap { index in
      packets[index].pcr.map { (index, $0, packets[index].discontinuity) }
    }
  }

  /// Every rule the stream breaks: PCR strictly increasing and at most 40 ms apart (both waived
  /// at a discontinuity_indicator), each PID's DTS increasing unless flagged, no PES whose DTS is
  /// before the PCR at its last byte, the first video unit an IDR, and every IDR with the SPS/PPS
  /// of the video format in force.
  ///
  /// - Parameter parameterSets: the dump's video format records in order (from
  ///   `parameterSets(ofDump:)`); an IDR may carry the current one or move on to the next. Nil
  ///   checks only that every IDR carries some SPS and PPS.
  package func conformanceViolations(parameterSets: [ParameterSets]? = nil) -> [Violation] {
    var violations: [Violation] = []
    let pcrs = self.pcrs
    for (previous, current) in zip(pcrs, pcrs.dropFirst()) where !current.discontinuity {
      if current.pcr <= previous.pcr {
        violations.append(
          .pcrNotIncreasing(packet: current.packet, previous: previous.pcr, pcr: current.pcr))
      } else if current.pcr - previous.pcr > Self.maximumPCRInterval {
        violations.append(.pcrGap(packet: current.packet, ticks: current.pcr - previous.pcr))
      }
    }

    var lastDecode: [UInt16: Int64] = [:]
    var pcrCursor = 0
    for unit in units {
      guard let dts = unit.decodeTime else { continue }
      if let previous = lastDecode[unit.pid], dts <= previous, !unit.discontinuity {
        violations.append(
          .decodeTimeNotIncreasing(
            pid: unit.pid, packet: unit.firstPacket, previous: previous, dts: dts))
      }
      lastDecode[unit.pid] = dts
      while pcrCursor + 1 < pcrs.count, pcrs[pcrCursor + 1].packet <= unit.lastPacket {
        pcrCursor += 1
      }
      if let pcr = pcrAt(packet: unit.lastPacket, pcrs: pcrs, from: pcrCursor), dts < pcr {
        violations.append(
          .decodeTimeBeforePCR(pid: unit.pid, packet: unit.lastPacket, dts: dts, pcr: pcr))
      }
    }

    let video = units.filter { $0.pid == Self.videoPID }
    if let first = video.first, !first.nalTypes.contains(5) {
      violations.append(.firstVideoUnitNotIDR(packet: first.firstPacket, nalTypes: first.nalTypes))
    }
    var formatIndex = 0
    for unit in video where unit.nalTypes.contains(5) {
      let nals = unit.nalUnits
      let carried = ParameterSets(
        sps: nals.filter { $0.first.map { $0 & 0x1F == 7 } ?? false }.map(Array.init),
        pps: nals.filter { $0.first.map { $0 & 0x1F == 8 } ?? false }.map(Array.init))
      guard !carried.sps.isEmpty, !carried.pps.isEmpty else {
        violations.append(.idrWithoutParameterSets(packet: unit.firstPacket))
        continue
      }
      guard let expected = parameterSets, !expected.isEmpty else { continue }
      if formatIndex + 1 < expected.count, carried == expected[formatIndex + 1] {
        formatIndex += 1
      } else if carried != expected[formatIndex] {
        violations.append(
          .idrWithStaleParameterSets(
            packet: unit.firstPacket, expected: expected[formatIndex].description))
      }
    }
    if let expected = parameterSets, !video.isEmpty, formatIndex + 1 < expected.count {
      violations.append(.formatsNeverSent(count: expected.count - formatIndex - 1))
    }
    return violations
  }

  /// The PCR at a packet: interpolated by byte position between the PCRs around it when no
  /// discontinuity lies between them, else the last PCR before it.
  private func pcrAt(
    packet: Int, pcrs: [(packet: Int, pcr: Int64, discontinuity: Bool)], from cursor: Int
  ) -> Int64? {
    guard cursor < pcrs.count, pcrs[cursor].packet <= packet else { return nil }
    let before = pcrs[cursor]
    guard cursor + 1 < pcrs.count else { return before.pcr }
    let after = pcrs[cursor + 1]
    guard !after.discontinuity, after.pcr > before.pcr, after.packet > before.packet else {
      return before.pcr
    }
    // The last byte of the packet is 187 bytes after its first.
    let position = Int64(packet - before.packet) * 188 + 187
    let span = Int64(after.packet - before.packet) * 188
    return before.pcr + (after.pcr - before.pcr) * position / span
  }

  /// The SPS/PPS of each video format record of a dump, in order (repeats of the same record
  /// count once).
  package static func parameterSets(ofDump path: String) throws -> [ParameterSets] {
    var reader = DumpReader(source: try FileByteSource(path: path))
    var result: [ParameterSets] = []
    while true {
      let record: DumpRecord?
      do { record = try reader.next() } catch {
        if !error.isRecoverable { break }
        continue
      }
      guard let record else { break }
      if case .format(.video, .h264(let format)) = record {
        let sets = ParameterSets(sps: format.sps, pps: format.pps)
        if result.last != sets { result.append(sets) }
      }
    }
    return result
  }
}
