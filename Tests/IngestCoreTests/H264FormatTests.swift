import Testing

@testable import IngestCore

@Suite struct H264FormatTests {
  @Test func avcCRoundTrip() throws {
    let format = try H264Format(
      profile: 100, compatibility: 0, level: 31, nalLengthSize: 4, sps: [[0x67, 0x64, 0x00, 0x1F]],
      pps: [[0x68, 0xEE, 0x3C, 0x80]])
    let parsed = try H264Format(avcC: format.avcC)
    #expect(parsed == format)
  }

  @Test(arguments: [1, 2, 4]) func nalLengthSizes(size: Int) throws {
    let format = try H264Format(
      profile: 66, compatibility: 0, level: 30, nalLengthSize: size, sps: [[0x67]], pps: [[0x68]])
    #expect(try H264Format(avcC: format.avcC).nalLengthSize == size)
  }

  @Test func rejectsNalLengthSizeThree() {
    #expect(throws: FormatError.nalLengthSize(3)) {
      try H264Format(avcC: [1, 66, 0, 30, 0xFE, 0xE1, 0, 1, 0x67, 1, 0, 1, 0x68])
    }
  }

  @Test func truncatedRecordNamesOffset() {
    #expect(throws: FormatError.avcCTruncated(offset: 8)) {
      try H264Format(avcC: [1, 66, 0, 30, 0xFF, 0xE1, 0, 5, 0x67])
    }
  }
}
