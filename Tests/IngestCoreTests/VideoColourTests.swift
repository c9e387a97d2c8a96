import Testing

@testable import IngestCore

/// The colour of an SPS's VUI, and the `colr` box the MP4 writer makes of it.
@Suite struct VideoColourTests {
  /// libx264, 320x240, BT.2020 primaries and matrix, PQ transfer, full range.
  static let h264SPS = HEVCFixtures.bytes(
    "6764000dacd94141fb016e12201280000003008000001e078a14cb")
  /// libx265, 320x240 Main, the same colour.
  static let hevcSPS = HEVCFixtures.bytes(
    "42010101600000030090000003000003003ca00a080f165959a4932bc05b848804820000030002000003003c10")
  static let bt2100 = VideoColour(primaries: 9, transfer: 16, matrix: 9, isFullRange: true)

  /// The payload of the `colr` box inside the first visual sample entry of an init segment.
  static func colr(_ bytes: [UInt8]) -> [UInt8]? {
    guard
      let start = bytes.indices.dropLast(3).first(where: {
        bytes[$0] == 0x63 && bytes[$0 + 1] == 0x6F && bytes[$0 + 2] == 0x6C && bytes[$0 + 3] == 0x72
      })
    else { return nil }
    let size =
      Int(bytes[start - 4]) << 24 | Int(bytes[start - 3]) << 16 | Int(bytes[start - 2]) << 8
      | Int(bytes[start - 1])
    return Array(bytes[start + 4..<start - 4 + size])
  }

  @Test func h264VUIColourIsRead() {
    #expect(VideoColour(h264SPS: Self.h264SPS) == Self.bt2100)
    #expect(H264PictureSize(sps: Self.h264SPS) == H264PictureSize(width: 320, height: 240))
  }

  @Test func hevcVUIColourIsReadPastTheReferencePictureSets() throws {
    let sps = try HEVCSequenceParameterSet(nalUnit: Self.hevcSPS)
    #expect(sps.width == 320 && sps.height == 240)
    #expect(sps.colour == Self.bt2100)
    // x265's default VUI: a video signal type of unspecified code points in limited range,
    // which states nothing.
    #expect(try HEVCSequenceParameterSet(nalUnit: HEVCFixtures.sps).colour == nil)
  }

  @Test func anSPSWithoutColourOrCutShortHasNone() throws {
    #expect(VideoColour(h264SPS: [0x67, 0x42, 0x00, 0x1E]) == nil)
    // Cut at every length: no colour or the right one, never another.
    for length in 0..<Self.h264SPS.count {
      let colour = VideoColour(h264SPS: Array(Self.h264SPS.prefix(length)))
      #expect(colour == nil || colour == Self.bt2100, "\(length) bytes")
    }
    for length in 40..<Self.hevcSPS.count {
      let colour = try? HEVCSequenceParameterSet(nalUnit: Self.hevcSPS.prefix(length)).colour
      #expect(colour == nil || colour == Self.bt2100, "\(length) bytes")
    }
    // A cut inside the VUI leaves the fields before it readable.
    let cut = Array(Self.hevcSPS.prefix(Self.hevcSPS.count - 12))
    let sps = try HEVCSequenceParameterSet(nalUnit: cut)
    #expect(sps.width == 320 && sps.colour == nil)
  }

  @Test func sampleEntryCarriesColrWhereTheSPSStatesColour() throws {
    let h264 = try H264Format(
      profile: 100, compatibility: 0, level: 13, nalLengthSize: 4, sps: [Self.h264SPS],
      pps: [[0x68, 0xEB]])
    let iso = MP4InitSegment.bytes(tracks: MP4Track.tracks(for: TrackFormats(video: h264)))
    // nclx: primaries, transfer, matrix (16 bits each), then full_range_flag in the top bit.
    #expect(Self.colr(iso) == [0x6E, 0x63, 0x6C, 0x78, 0, 9, 0, 16, 0, 9, 0x80])
    let mov = MP4InitSegment.bytes(
      tracks: MP4Track.tracks(for: TrackFormats(video: h264)), brand: .quickTime)
    #expect(Self.colr(mov) == [0x6E, 0x63, 0x6C, 0x63, 0, 9, 0, 16, 0, 9])

    let hevc = try HEVCFormat(vps: [HEVCFixtures.vps], sps: [Self.hevcSPS], pps: [HEVCFixtures.pps])
    let hvc1 = MP4InitSegment.bytes(tracks: MP4Track.tracks(for: TrackFormats(video: hevc)))
    #expect(Self.colr(hvc1) == [0x6E, 0x63, 0x6C, 0x78, 0, 9, 0, 16, 0, 9, 0x80])

    let plain = MP4InitSegment.bytes(
      tracks: MP4Track.tracks(for: TrackFormats(video: CoreFixtures.h264)))
    #expect(Self.colr(plain) == nil)
  }

  @Test func decodeClockStartsAtTheFirstUnitAndNeverGoesBack() {
    var clock = MP4DecodeClock()
    func unit(_ kind: SampleKind, _ dts: Int64, reset: Bool = false) -> OutgoingUnit {
      OutgoingUnit(
        kind: kind, pts: dts, dts: dts, isKeyframe: true, isDiscontinuity: reset, prefixLength: 0)
    }
    #expect(clock.decodeTime(of: unit(.video, 900_000)) == 0)
    clock.advance(.video, to: 0)
    #expect(clock.decodeTime(of: unit(.audioApp, 899_000)) == nil)
    #expect(clock.decodeTime(of: unit(.video, 903_000)) == 3000)
    clock.advance(.video, to: 3000)
    // A clock reset back to 0 continues one frame after the latest time written.
    #expect(clock.decodeTime(of: unit(.video, 0, reset: true)) == 6000)
    #expect(clock.decodeTime(of: unit(.audioApp, 1920)) == 7920)
  }
}
