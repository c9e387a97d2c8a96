import Testing

@testable import IngestCore

@Suite struct HEVCAnnexBTests {
  typealias F = HEVCFixtures
  static let startCode: [UInt8] = [0, 0, 0, 1]

  static func unit(_ sample: [UInt8], format: HEVCFormat = F.format) throws -> AVCCSummary {
    try sample.withUnsafeBytes {
      try AVCCScanner.summarizeHEVC(
        $0, lengthSize: format.nalLengthSize, highestTemporalID: format.highestTemporalID)
    }
  }

  static func convert(_ sample: [UInt8], format: HEVCFormat = F.format, isKeyframe: Bool) throws
    -> [UInt8]
  {
    var out = [UInt8](
      repeating: 0, count: HEVCAnnexB.maximumSize(payloadSize: sample.count, format: format))
    let written = try sample.withUnsafeBytes { sample in
      try out.withUnsafeMutableBytes {
        try HEVCAnnexB.convert(sample: sample, format: format, isKeyframe: isKeyframe, into: $0)
      }
    }
    return Array(out[..<written])
  }

  @Test(arguments: [UInt8(16), 17, 18, 19, 20, 21]) func everyIRAPTypeIsARandomAccessPoint(
    type: UInt8
  ) throws {
    let unit = try Self.unit(F.sample([F.slice(type)]))
    #expect(unit.containsIDR)
    #expect(!unit.isDisposable)
    // Even without the encoder's keyframe flag, an IRAP slice gets the parameter sets.
    let out = try Self.convert(F.sample([F.slice(type)]), isKeyframe: false)
    #expect(out.starts(with: Self.startCode + [0x46, 0x01, 0x50] + Self.startCode + F.vps))
  }

  @Test(arguments: [UInt8(0), 1, 2, 3, 8, 9]) func nonIRAPSlicesAreNot(type: UInt8) throws {
    #expect(try !Self.unit(F.sample([F.slice(type)])).containsIDR)
  }

  @Test func parameterSetsGoInFrontOfEveryIRAPInOrder() throws {
    let out = try Self.convert(F.idr, isKeyframe: true)
    let expected =
      Self.startCode + [0x46, 0x01, 0x50] + Self.startCode + F.vps + Self.startCode + F.sps
      + Self.startCode + F.pps + Self.startCode + F.slice(19)
    #expect(out == expected)
    let unit = try Self.unit(F.idr)
    let layout = HEVCAnnexB.inspect(
      summary: unit, parameterSetsSize: HEVCAnnexB.parameterSetsSize(F.format), isKeyframe: true)
    #expect(layout.size == out.count)
    #expect(layout.insertsParameterSets)
  }

  @Test func aUnitCarryingItsOwnParameterSetsGetsNoSecondCopy() throws {
    let sample = F.sample([F.vps, F.sps, F.pps, F.slice(19)])
    let out = try Self.convert(sample, isKeyframe: true)
    #expect(
      out == Self.startCode + [0x46, 0x01, 0x50] + Self.startCode + F.vps + Self.startCode
        + F.sps + Self.startCode + F.pps + Self.startCode + F.slice(19))
  }

  @Test func delimitersInTheSampleAreReplacedByOursWithItsTemporalID() throws {
    let format = try HEVCFormat(vps: [F.vps], sps: [F.sps], pps: [F.pps], nalLengthSize: 2)
    let sample = F.sample(
      [F.header(35) + [0x10], F.header(39) + [5, 1, 0x80], F.slice(1, temporalID: 2)],
      lengthSize: 2)
    let out = try Self.convert(sample, format: format, isKeyframe: false)
    #expect(
      out == Self.startCode + [0x46, 0x03, 0x50] + Self.startCode + F.header(39) + [5, 1, 0x80]
        + Self.startCode + F.slice(1, temporalID: 2))
  }

  @Test func subLayerNonReferencePicturesOfTheTopLayerAreDisposable() throws {
    #expect(try Self.unit(F.trailN).isDisposable)
    #expect(try Self.unit(F.sample([F.slice(8), F.slice(8)])).isDisposable)  // RASL_N
    #expect(try !Self.unit(F.trailR).isDisposable)
    #expect(try !Self.unit(F.sample([F.slice(0), F.slice(1)])).isDisposable)
    #expect(try !Self.unit(F.sample([F.header(39) + [5, 1, 0x80]])).isDisposable)
    // With two temporal sub-layers, TRAIL_N of layer 0 may be referenced by layer 1.
    func twoLayers(_ sample: [UInt8]) throws -> AVCCSummary {
      try sample.withUnsafeBytes {
        try AVCCScanner.summarizeHEVC($0, lengthSize: 4, highestTemporalID: 1)
      }
    }
    #expect(try !twoLayers(F.trailN).isDisposable)
    #expect(try twoLayers(F.sample([F.slice(0, temporalID: 1)])).isDisposable)
  }

  @Test func lengthsPastTheSampleAreRefused() {
    var sample = F.trailR
    sample[3] += 1
    #expect(throws: FormatError.nalLengthPastEnd(offset: 0, length: 6)) {
      try Self.unit(sample)
    }
    #expect(throws: FormatError.nalLengthPastEnd(offset: 9, length: 4)) {
      try Self.unit(F.trailR + [0, 0])
    }
  }

  @Test func theBoundHoldsForTinyNALUnits() throws {
    for lengthSize in [1, 2, 4] {
      let format = try HEVCFormat(
        vps: [F.vps], sps: [F.sps], pps: [F.pps], nalLengthSize: lengthSize)
      let sample = F.sample(Array(repeating: [0x26], count: 40), lengthSize: lengthSize)
      let out = try Self.convert(sample, format: format, isKeyframe: true)
      #expect(out.count <= HEVCAnnexB.maximumSize(payloadSize: sample.count, format: format))
    }
  }
}
