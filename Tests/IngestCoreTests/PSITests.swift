import Testing

@testable import IngestCore

@Suite struct PSITests {
  static let h264 = try! H264Format(
    profile: 66, compatibility: 0, level: 30, nalLengthSize: 4, sps: [[0x67, 0x42, 0x00, 0x1E]],
    pps: [[0x68, 0xCE, 0x38, 0x80]])
  static let stereo48k = try! AACFormat(objectType: 2, sampleRate: 48000, channels: 2)

  @Test func patSection() {
    let expected: [UInt8] = [
      0x00,  // table_id: program_association_section
      0xB0, 0x0D,  // section_syntax_indicator 1, '0', reserved '11', section_length 13
      0x00, 0x01,  // transport_stream_id 1
      0xC1,  // reserved '11', version_number 0, current_next_indicator 1
      0x00, 0x00,  // section_number, last_section_number
      0x00, 0x01,  // program_number 1
      0xF0, 0x00,  // reserved '111', program_map_PID 0x1000
      0x2A, 0xB1, 0x04, 0xB2,  // CRC_32 (the same PAT ffmpeg's muxer writes)
    ]
    #expect(PSI.patSection() == expected)
    #expect(MPEGCRC32.checksum(expected) == 0)
  }

  @Test func pmtWithVideoAppAndMic() {
    let program = TSProgram(video: Self.h264, audioApp: Self.stereo48k, audioMic: Self.stereo48k)
    let expected: [UInt8] = [
      0x02,  // table_id: TS_program_map_section
      0xB0, 0x1C,  // section_length 28 = 9 + 3 * 5 + 4
      0x00, 0x01,  // program_number 1
      0xC1, 0x00, 0x00,  // version 0, current, section 0 of 0
      0xE1, 0x00,  // reserved '111', PCR_PID 0x100 (video)
      0xF0, 0x00,  // reserved '1111', program_info_length 0
      0x1B, 0xE1, 0x00, 0xF0, 0x00,  // H.264 on 0x100, no descriptors
      0x0F, 0xE1, 0x01, 0xF0, 0x00,  // AAC ADTS on 0x101 (app)
      0x0F, 0xE1, 0x02, 0xF0, 0x00,  // AAC ADTS on 0x102 (mic)
      0x94, 0x60, 0x68, 0xC9,  // CRC_32
    ]
    #expect(PSI.pmtSection(program) == expected)
    #expect(MPEGCRC32.checksum(expected) == 0)
  }

  @Test func audioOnlyPMTCarriesPCROnAppAudio() {
    let program = TSProgram(audioApp: Self.stereo48k, audioMic: Self.stereo48k)
    let expected: [UInt8] = [
      0x02,
      0xB0, 0x17,  // section_length 23 = 9 + 2 * 5 + 4
      0x00, 0x01,
      0xC1, 0x00, 0x00,
      0xE1, 0x01,  // PCR_PID 0x101 (app audio): no video
      0xF0, 0x00,
      0x0F, 0xE1, 0x01, 0xF0, 0x00,
      0x0F, 0xE1, 0x02, 0xF0, 0x00,
      0xBA, 0xEA, 0x97, 0xE7,  // CRC_32
    ]
    #expect(PSI.pmtSection(program) == expected)
    #expect(MPEGCRC32.checksum(expected) == 0)
  }

  @Test func micOnlyProgramPutsPCROnMic() {
    let program = TSProgram(audioMic: Self.stereo48k)
    let section = PSI.pmtSection(program)
    #expect(program.pcrPID == 0x102)
    #expect(Array(section[8..<10]) == [0xE1, 0x02])
    #expect(section.count == 21)  // 3 header bytes + section_length 18 = 9 + 5 + 4
    #expect(MPEGCRC32.checksum(section) == 0)
  }

  @Test func packetWrapsSectionWithPointerFieldAndFill() {
    let section = PSI.patSection()
    let packet = PSI.packet(section: section, pid: 0)
    #expect(packet.count == 188)
    #expect(Array(packet[0..<5]) == [0x47, 0x40, 0x00, 0x10, 0x00])
    #expect(Array(packet[5..<5 + section.count]) == section)
    #expect(packet[(5 + section.count)...].allSatisfy { $0 == 0xFF })
    let pmt = PSI.packet(section: PSI.pmtSection(TSProgram(video: Self.h264)), pid: 0x1000)
    #expect(Array(pmt[0..<5]) == [0x47, 0x50, 0x00, 0x10, 0x00])
  }
}
