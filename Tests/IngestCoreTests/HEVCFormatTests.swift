import Testing

@testable import IngestCore

@Suite struct HEVCFormatTests {
  typealias F = HEVCFixtures

  @Test func sequenceParameterSetGivesProfileTierLevelAndSize() throws {
    let sps = try HEVCSequenceParameterSet(nalUnit: F.sps)
    #expect(sps.profileIDC == 1)
    #expect(sps.profileName == "Main")
    #expect(!sps.isHighTier)
    #expect(sps.levelIDC == 93)
    #expect(sps.levelName == "3.1")
    #expect(sps.width == 720)
    #expect(sps.height == 1280)
    #expect(sps.chromaFormat == 1)
    #expect(sps.bitDepthLuma == 8)
    #expect(sps.maxSubLayers == 1)
  }

  @Test func conformanceWindowAndEmulationPreventionAreApplied() throws {
    let sps = try HEVCSequenceParameterSet(nalUnit: F.main10SPS)
    #expect(sps.profileName == "Main 10")
    #expect(sps.bitDepthLuma == 10)
    #expect(sps.levelName == "2.1")
    #expect(sps.width == 642)
    #expect(sps.height == 362)
  }

  @Test func truncatedSPSNamesTheField() {
    #expect(throws: FormatError.hevcSequenceParameterSet(field: "general_level_idc")) {
      try HEVCSequenceParameterSet(nalUnit: F.sps.prefix(17))
    }
    #expect(throws: FormatError.hevcSequenceParameterSet(field: "nal_unit_type")) {
      try HEVCSequenceParameterSet(nalUnit: F.pps)
    }
  }

  @Test(arguments: [1, 2, 4]) func hvcCRoundTrip(lengthSize: Int) throws {
    let format = try HEVCFormat(
      vps: [F.vps], sps: [F.sps, F.main10SPS], pps: [F.pps], nalLengthSize: lengthSize,
      averageFrameRate: 7680, constantFrameRate: 1)
    let record = format.hvcC
    #expect(record[0] == 1)
    #expect(record[12] == 93)
    #expect(Int(record[21] & 3) + 1 == lengthSize)
    let parsed = try HEVCFormat(hvcC: record)
    #expect(parsed == format)
    #expect(parsed.sps.count == 2)
  }

  /// The record libx265 writes through ffmpeg's mp4 muxer, with its declarative SEI array: the
  /// SEI is skipped, the parameter sets kept.
  @Test func hvcCWithAnSEIArrayKeepsOnlyParameterSets() throws {
    var record = Array(F.format.hvcC.prefix(22))
    record.append(4)
    for unit in [F.vps, F.sps, F.pps, F.header(39) + [5, 1, 0x80]] {
      record += [0x80 | unit[0] >> 1, 0, 1, 0, UInt8(unit.count)] + unit
    }
    let parsed = try HEVCFormat(hvcC: record)
    #expect(parsed.vps == [F.vps])
    #expect(parsed.sps == [F.sps])
    #expect(parsed.pps == [F.pps])
    #expect(parsed.hvcC == F.format.hvcC)
  }

  @Test func truncatedRecordsNameTheOffset() {
    let record = F.format.hvcC
    #expect(throws: FormatError.hvcCTruncated(offset: 10)) {
      try HEVCFormat(hvcC: record.prefix(10))
    }
    // Cut inside the VPS: its length says 24 bytes, the record ends sooner.
    #expect(throws: FormatError.hvcCTruncated(offset: 28)) {
      try HEVCFormat(hvcC: record.prefix(40))
    }
    // Cut between arrays.
    #expect(throws: FormatError.hvcCTruncated(offset: 52)) {
      try HEVCFormat(hvcC: record.prefix(52))
    }
  }

  @Test func absurdCountsEndWhereTheRecordDoes() {
    var record = Array(F.format.hvcC.prefix(22))
    // 255 arrays of 65535 NAL units each: nothing is reserved from these counts.
    record += [255, 0xA0, 0xFF, 0xFF, 0x00, 0x18] + F.vps
    #expect(throws: FormatError.hvcCTruncated(offset: record.count)) {
      try HEVCFormat(hvcC: record)
    }
    // A NAL length of 65535 in a short record.
    var long = Array(F.format.hvcC.prefix(22))
    long += [1, 0xA0, 0x00, 0x01, 0xFF, 0xFF] + F.vps
    #expect(throws: FormatError.hvcCTruncated(offset: 28)) { try HEVCFormat(hvcC: long) }
  }

  @Test func malformedRecordsAreRefused() {
    var record = F.format.hvcC
    record[0] = 0
    #expect(throws: FormatError.hvcCVersion(0)) { try HEVCFormat(hvcC: record) }
    var lengthThree = F.format.hvcC
    lengthThree[21] = lengthThree[21] & 0xFC | 2
    #expect(throws: FormatError.nalLengthSize(3)) { try HEVCFormat(hvcC: lengthThree) }
    // A PPS in the VPS array.
    var mislabelled = Array(F.format.hvcC.prefix(22))
    mislabelled += [1, 0xA0, 0x00, 0x01, 0x00, 0x07] + F.pps
    #expect(throws: FormatError.hvcCParameterSet(offset: 28, found: 34)) {
      try HEVCFormat(hvcC: mislabelled)
    }
    // Arrays present but no PPS.
    var noPPS = Array(F.format.hvcC.prefix(22))
    noPPS += [2, 0xA0, 0x00, 0x01, 0x00, 0x18] + F.vps + [0xA1, 0x00, 0x01, 0x00, 0x2B] + F.sps
    #expect(throws: FormatError.hevcMissingParameterSets) { try HEVCFormat(hvcC: noPPS) }
  }

  @Test func parameterSetsTheRecordCannotHoldAreRefused() {
    #expect(throws: FormatError.hevcParameterSet(type: 32, length: 1)) {
      try HEVCFormat(vps: [[0x40]], sps: [F.sps], pps: [F.pps])
    }
    #expect(throws: FormatError.hevcParameterSet(type: 34, length: 7)) {
      try HEVCFormat(vps: [F.pps], sps: [F.sps], pps: [F.pps])
    }
  }

  @Test func nalUnitTypes() {
    for raw in UInt8(0)...63 {
      let type = HEVCNALUnitType(rawValue: raw)
      #expect(type.isIRAP == (16...23).contains(raw))
      #expect(type.isVCL == (raw < 32))
      #expect(type.isSubLayerNonReference == [0, 2, 4, 6, 8, 10, 12, 14].contains(raw))
    }
    #expect(HEVCNALUnitType(headerByte: 0x26) == .idrWithLeadingPictures)
    #expect(HEVCNALUnitType.temporalID(headerByte: 0x01) == 0)
    #expect(HEVCNALUnitType.temporalID(headerByte: 0x03) == 2)
    #expect(HEVCNALUnitType.temporalID(headerByte: 0x00) == nil)
  }
}
