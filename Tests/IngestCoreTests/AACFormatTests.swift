import Testing

@testable import IngestCore

@Suite struct AACFormatTests {
  @Test func parsesLCStereo48k() throws {
    let format = try AACFormat(audioSpecificConfig: [0x11, 0x90])
    #expect(format.objectType == 2)
    #expect(format.sampleRate == 48000)
    #expect(format.channels == 2)
    #expect(format.audioSpecificConfig == [0x11, 0x90])
  }

  @Test func parsesLCMono44k() throws {
    let format = try AACFormat(audioSpecificConfig: [0x12, 0x08])
    #expect(format.sampleRate == 44100)
    #expect(format.channels == 1)
  }

  @Test func rejectsTruncatedAndUnsupported() {
    #expect(throws: FormatError.audioSpecificConfigTruncated) {
      try AACFormat(audioSpecificConfig: [0x11])
    }
    #expect(throws: FormatError.aacChannelConfiguration(0)) {
      try AACFormat(audioSpecificConfig: [0x11, 0x80])
    }
  }

  @Test func explicitRateIsAcceptedOnlyWhenADTSHasItsIndex() throws {
    // Frequency index 15 with an explicit 48000: carried in ADTS as index 3.
    let format = try AACFormat(audioSpecificConfig: [0x17, 0x80, 0x5D, 0xC0, 0x10])
    #expect(format.sampleRate == 48000)
    #expect(format.sampleRateIndex == 3)
    #expect(format.audioSpecificConfig == [0x11, 0x90])
    #expect(throws: FormatError.aacSampleRate(47999)) {
      try AACFormat(audioSpecificConfig: [0x17, 0x80, 0x5D, 0xBF, 0x90])
    }
  }
}
