import IngestCore
import Testing

@testable import IngestRTMP

/// `onMetaData` as the stream's tracks give it, read back with a small AMF0 reader.
@Suite struct FLVMetadataTests {
  static let app = try! AACFormat(objectType: 2, sampleRate: 48_000, channels: 2)
  static let mic = try! AACFormat(objectType: 2, sampleRate: 44_100, channels: 1)
  static let hevc = try! HEVCFormat(
    vps: [hex("40010c01ffff01600000030090000003000003005d959809")],
    sps: [
      hex("42010101600000030090000003000003005da005a20050165959a4932bc05a020000030002000003003c10")
    ],
    pps: [hex("4401c172b46240")], nalLengthSize: 2)

  static func hex(_ text: String) -> [UInt8] {
    stride(from: 0, to: text.count, by: 2).map {
      let start = text.index(text.startIndex, offsetBy: $0)
      return UInt8(text[start..<text.index(start, offsetBy: 2)], radix: 16)!
    }
  }

  /// HEVC: videocodecid is the FourCC `hvc1` as a number; the default audio track is AAC (10).
  @Test func hevcIsNamedByItsFourCC() throws {
    let tracks = RTMPTracks(
      tracks: TrackFormats(video: Self.hevc, audioApp: Self.app), audio: [.audioApp])
    let (name, properties) = try AMF0Reader.metadata(tracks.metadata.body)
    #expect(name == "onMetaData")
    #expect(properties["videocodecid"] as? Double == 1_752_589_105)
    #expect(properties["width"] as? Double == 720)
    #expect(properties["height"] as? Double == 1280)
    #expect(properties["audiocodecid"] as? Double == 10)
    #expect(properties["audiosamplerate"] as? Double == 48_000)
    #expect(properties["stereo"] as? Bool == true)
    #expect(properties["duration"] as? Double == 0)
    #expect(properties["audioTrackIdInfoMap"] == nil)
  }

  /// A second audio track is described under its track id, its codec the FourCC `mp4a`.
  @Test func secondAudioTrackIsInTheTrackMap() throws {
    let tracks = RTMPTracks(
      tracks: TrackFormats(video: Self.hevc, audioApp: Self.app, audioMic: Self.mic),
      audio: [.audioApp, .audioMic])
    #expect(tracks.audio.map(\.trackID) == [nil, 1])
    #expect(tracks.isEnhanced)
    let (_, properties) = try AMF0Reader.metadata(tracks.metadata.body)
    let map = try #require(properties["audioTrackIdInfoMap"] as? [String: Any])
    let mic = try #require(map["1"] as? [String: Any])
    #expect(mic["audiocodecid"] as? Double == Double(0x6D70_3461))
    #expect(mic["audiosamplerate"] as? Double == 44_100)
    #expect(mic["stereo"] as? Bool == false)
  }

  /// The record sent says 4-byte NAL lengths, as the sink widens the units to them.
  @Test func hvcCRecordSaysFourByteLengths() throws {
    let record = RTMPTracks.configurationRecord(.hevc(Self.hevc))
    #expect(record[21] & 3 == 3)
    let parsed = try HEVCFormat(hvcC: record)
    #expect(parsed.nalLengthSize == 4)
    #expect(parsed.sps == Self.hevc.sps)
  }

  /// Only the kinds asked for and present are carried; one audio track asked for is legacy.
  @Test func tracksCarryWhatWasAskedFor() {
    let both = TrackFormats(video: Self.hevc, audioApp: Self.app, audioMic: Self.mic)
    let mic = RTMPTracks(tracks: both, audio: [.audioMic])
    #expect(mic.audio.map(\.kind) == [.audioMic] && mic.audio[0].trackID == nil)
    let missing = RTMPTracks(
      tracks: TrackFormats(audioMic: Self.mic), audio: [.audioApp, .audioMic])
    #expect(missing.audio.map(\.kind) == [.audioMic] && missing.audio[0].trackID == nil)
    #expect(!missing.isEnhanced)
  }
}

/// Reads the AMF0 values `FLVMetadata` writes: a string, then an ECMA array of numbers,
/// booleans, strings and objects.
private struct AMF0Reader {
  struct Malformed: Error {}
  var bytes: [UInt8]
  var offset = 0

  static func metadata(_ bytes: [UInt8]) throws -> (String, [String: Any]) {
    var reader = AMF0Reader(bytes: bytes)
    let name = try reader.value() as? String ?? ""
    let properties = try reader.value() as? [String: Any] ?? [:]
    guard reader.offset == bytes.count else { throw Malformed() }
    return (name, properties)
  }

  mutating func take(_ count: Int) throws -> ArraySlice<UInt8> {
    guard offset + count <= bytes.count else { throw Malformed() }
    defer { offset += count }
    return bytes[offset..<offset + count]
  }

  mutating func integer(_ count: Int) throws -> UInt64 {
    try take(count).reduce(0) { $0 << 8 | UInt64($1) }
  }

  mutating func string() throws -> String {
    String(decoding: try take(Int(try integer(2))), as: UTF8.self)
  }

  mutating func properties() throws -> [String: Any] {
    var result: [String: Any] = [:]
    while true {
      let name = try string()
      if name.isEmpty {
        guard try take(1).first == 9 else { throw Malformed() }
        return result
      }
      result[name] = try value()
    }
  }

  mutating func value() throws -> Any {
    switch try take(1).first! {
    case 0x00: return Double(bitPattern: try integer(8))
    case 0x01: return try take(1).first! != 0
    case 0x02: return try string()
    case 0x03: return try properties()
    case 0x08:
      _ = try integer(4)
      return try properties()
    default: throw Malformed()
    }
  }
}
