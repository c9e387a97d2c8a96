import Testing

@testable import IngestCore

@Suite struct AnnexBDetectorTests {
  let video = VideoFormat.h264(CoreFixtures.h264)

  func summarize(_ bytes: [UInt8]) -> Result<AVCCSummary, FormatError> {
    bytes.withUnsafeBytes { payload in
      Result { () throws(FormatError) in try video.summarize(payload) }
    }
  }

  func error(_ bytes: [UInt8]) -> FormatError? {
    if case .failure(let error) = summarize(bytes) { error } else { nil }
  }

  @Test(arguments: [[0, 0, 0, 1] as [UInt8], [0, 0, 1]])
  func startCodesAreNamedAsTheCause(startCode: [UInt8]) {
    // An IDR and a P slice behind start codes, where the format announces 4-byte lengths.
    let sample = startCode + [0x65, 0x88, 0x84, 0x21] + startCode + [0x41, 0x9A, 0x02, 0x03]
    #expect(error(sample) == .annexBStartCodes(lengthSize: 4))
  }

  @Test func validAVCCOpeningLikeAStartCodeIsKept() {
    // A 4-byte length of 1: the bytes of a start code, and a valid AVCC sample.
    let sample: [UInt8] = [0, 0, 0, 1, 0x09] + CoreFixtures.idr()
    #expect((try? summarize(sample).get())?.containsIDR == true)
  }

  @Test func anyOtherBadLengthStaysALengthError() {
    let sample: [UInt8] = [0, 0, 0, 0xFF, 0x41, 0x9A]
    #expect(error(sample) == .nalLengthPastEnd(offset: 0, length: 255))
  }
}
