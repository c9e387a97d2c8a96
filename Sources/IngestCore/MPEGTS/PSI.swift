/// The program-specific information of our stream: a PAT announcing program 1 on PMT PID
/// 0x1000, and that program's PMT (ISO/IEC 13818-1, 2.4.4).
///
/// ```
/// PAT  00 | B0 0D | 00 01 tsid | C1 v0 current | 00 00 | 00 01 program | F0 00 PMT PID | CRC
/// PMT  02 | B0 len | 00 01 program | C1 | 00 00 | E1 00 PCR PID | F0 00 no descriptors
///      per track: stream_type | E1 0x pid | F0 00 | ... CRC
/// ```
///
/// Sections are built once; `packet` wraps one in a transport packet with pointer_field 0 and
/// 0xFF fill, leaving the continuity counter 0 for the output stream to stamp.
public enum PSI {
  /// transport_stream_id in the PAT.
  public static let transportStreamID: UInt16 = 1
  /// program_number of our single program.
  public static let programNumber: UInt16 = 1

  /// The PAT section, CRC included.
  public static func patSection() -> [UInt8] {
    var section: [UInt8] = [0x00, 0xB0, 0x00]
    appendSyntaxHeader(&section, tableIDExtension: transportStreamID)
    append16(&section, programNumber)
    append16(&section, 0xE000 | TSPacket.pmtPID)
    return finish(section)
  }

  /// The PMT section of `program`, CRC included: one entry per present track.
  public static func pmtSection(_ program: TSProgram) -> [UInt8] {
    var section: [UInt8] = [0x02, 0xB0, 0x00]
    appendSyntaxHeader(&section, tableIDExtension: programNumber)
    append16(&section, 0xE000 | program.pcrPID)
    append16(&section, 0xF000)  // program_info_length 0
    for kind in program.kinds {
      section.append(program.streamType(for: kind))
      append16(&section, 0xE000 | TSPacket.pid(for: kind))
      append16(&section, 0xF000)  // ES_info_length 0
    }
    return finish(section)
  }

  /// A transport packet carrying `section` on `pid`, continuity counter 0.
  ///
  /// - Precondition: the section fits in one packet (183 bytes); ours are at most 32.
  public static func packet(section: [UInt8], pid: UInt16) -> [UInt8] {
    precondition(section.count <= TSPacket.maximumPayloadSize - 1)
    var packet = [UInt8](repeating: 0xFF, count: TSPacket.size)
    packet.withUnsafeMutableBytes {
      TSPacket.writeHeader(
        $0, at: 0, pid: pid, unitStart: true, adaptationFieldControl: TSPacket.payloadOnly)
    }
    packet[4] = 0  // pointer_field
    packet.replaceSubrange(5..<5 + section.count, with: section)
    return packet
  }

  private static func appendSyntaxHeader(_ section: inout [UInt8], tableIDExtension: UInt16) {
    append16(&section, tableIDExtension)
    section.append(0xC1)  // reserved, version_number 0, current_next_indicator 1
    section.append(0x00)  // section_number
    section.append(0x00)  // last_section_number
  }

  /// Fills in section_length and appends the CRC.
  private static func finish(_ section: [UInt8]) -> [UInt8] {
    var section = section
    let length = section.count - 3 + 4
    section[1] = 0xB0 | UInt8(length >> 8)
    section[2] = UInt8(length & 0xFF)
    let crc = MPEGCRC32.checksum(section)
    for shift in [24, 16, 8, 0] { section.append(UInt8(truncatingIfNeeded: crc >> UInt32(shift))) }
    return section
  }

  private static func append16(_ bytes: inout [UInt8], _ value: UInt16) {
    bytes.append(UInt8(value >> 8))
    bytes.append(UInt8(value & 0xFF))
  }
}
