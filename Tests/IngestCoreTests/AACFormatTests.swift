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

  /// HE-AAC signalled implicitly: the configuration is its AAC-LC core's (22.05 kHz stereo
  /// under a 44.1 kHz output), and is carried as that.
  @Test func parsesImplicitHEAACAsItsLCCore() throws {
    let format = try AACFormat(audioSpecificConfig: [0x13, 0x90])
    #expect(format.objectType == 2)
    #expect(format.sampleRate == 22050)
    #expect(format.channels == 2)
  }

  /// Explicit HE-AAC (object type 5: SBR, then the extension rate and the core's type) and
  /// HE-AAC v2 (29: PS) are refused by their names.
  @Test func refusesExplicitHEAACByName() {
    // 5 | 7 (22.05 kHz) | 2 channels | extension 3 (48 kHz) | core type 2.
    #expect(throws: FormatError.aacObjectType(5)) {
      try AACFormat(audioSpecificConfig: [0x2B, 0x92, 0x08, 0x00])
    }
    // 29 | 6 (24 kHz) | 1 channel | extension 3 | core type 2.
    #expect(throws: FormatError.aacObjectType(29)) {
      try AACFormat(audioSpecificConfig: [0xEB, 0x09, 0x88])
    }
    #expect(FormatError.aacObjectType(29).description.hasPrefix("HE-AAC v2 (PS) (object type 29)"))
  }

  /// AAC-ELD behind the escape: 31, then 6 bits (7, so 32 + 7 = 39) before the frequency index
  /// (3: 48 kHz) and the channels (1). Read in the wrong order, the 6 bits came after the
  /// frequency and channel fields and gave "object type 81".
  @Test func readsTheObjectTypeEscapeBeforeTheFrequency() {
    #expect(throws: FormatError.aacObjectType(39)) {
      try AACFormat(audioSpecificConfig: [0xF8, 0xE6, 0x30, 0x00])
    }
    let description = FormatError.aacObjectType(39).description
    #expect(description.hasPrefix("AAC-ELD (object type 39) cannot be carried"), "\(description)")
    #expect(description.contains("480 or 512 samples"), "\(description)")
    // ELD, 44.1 kHz (4), stereo: the same type whatever follows.
    #expect(throws: FormatError.aacObjectType(39)) {
      try AACFormat(audioSpecificConfig: [0xF8, 0xE8, 0x40, 0x00])
    }
    // One byte holds the escape but not the type it announces.
    #expect(throws: FormatError.audioSpecificConfigTruncated) {
      try AACFormat(audioSpecificConfig: [0xF8])
    }
  }
}
