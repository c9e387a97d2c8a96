import Testing

@testable import IngestCore

/// A top-level or child box read back from written bytes.
private struct ParsedBox {
  var type: String
  var payload: ArraySlice<UInt8>
}

/// Splits `bytes` into its boxes (8-byte headers only, as the writer writes them).
private func boxes(_ bytes: ArraySlice<UInt8>) -> [ParsedBox] {
  var result: [ParsedBox] = []
  var offset = bytes.startIndex
  while offset + 8 <= bytes.endIndex {
    let size = Int(u32(bytes, offset))
    guard size >= 8, offset + size <= bytes.endIndex else { break }
    let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
    result.append(ParsedBox(type: type, payload: bytes[offset + 8..<offset + size]))
    offset += size
  }
  return result
}

private func u32(_ bytes: ArraySlice<UInt8>, _ at: Int) -> UInt32 {
  UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8
    | UInt32(bytes[at + 3])
}

/// The child of `path` (e.g. ["moov", "trak"]), the first of each type.
private func find(_ path: [String], in bytes: ArraySlice<UInt8>, skip: [String: Int] = [:])
  -> ParsedBox?
{
  var current = bytes
  var found: ParsedBox?
  for (depth, type) in path.enumerated() {
    var payload = current
    // Sample entries and stsd have fields before their children.
    if depth > 0, let leading = skip[path[depth - 1]] { payload = payload.dropFirst(leading) }
    guard let box = boxes(payload).first(where: { $0.type == type }) else { return nil }
    found = box
    current = box.payload
  }
  return found
}

@Suite struct MP4WriterTests {
  @Test func boxSizesArePatchedWhenNestedBoxesEnd() {
    var w = MP4ByteWriter()
    let outer = w.begin("moof")
    let inner = w.begin("mfhd", version: 0, flags: 0)
    w.u32(7)
    w.end(inner)
    w.end(outer)
    #expect(
      w.bytes == [
        0, 0, 0, 24, 0x6D, 0x6F, 0x6F, 0x66,  // moof, 24 bytes
        0, 0, 0, 16, 0x6D, 0x66, 0x68, 0x64,  // mfhd, 16 bytes
        0, 0, 0, 0,  // version 0, flags 0
        0, 0, 0, 7,  // sequence_number
      ])
  }

  @Test func audioOnlyInitSegmentIsByteExact() {
    let aac = try! AACFormat(objectType: 2, sampleRate: 48000, channels: 2)
    let tracks = MP4Track.tracks(for: TrackFormats(audioApp: aac))
    let bytes = MP4InitSegment.bytes(tracks: tracks)[...]
    let top = boxes(bytes)
    #expect(top.map(\.type) == ["ftyp", "moov"])
    #expect(Array(top[0].payload) == Array("iso6\0\0\0\0iso6isommp41".utf8))
    let mdhd = find(["moov", "trak", "mdia", "mdhd"], in: bytes)!
    #expect(u32(mdhd.payload, mdhd.payload.startIndex + 12) == 48000)  // timescale
    let hdlr = find(["moov", "trak", "mdia", "hdlr"], in: bytes)!
    #expect(Array(hdlr.payload.dropFirst(8).prefix(4)) == Array("soun".utf8))
    let mp4a = find(
      ["moov", "trak", "mdia", "minf", "stbl", "stsd", "mp4a"], in: bytes, skip: ["stsd": 8])!
    // channelcount 2, samplesize 16, rate 48000 in 16.16.
    #expect(
      Array(mp4a.payload[mp4a.payload.startIndex + 16..<mp4a.payload.startIndex + 28])
        == [0, 2, 0, 16, 0, 0, 0, 0, 0xBB, 0x80, 0, 0])
    let esds = boxes(mp4a.payload.dropFirst(28)).first!
    #expect(esds.type == "esds")
    #expect(
      Array(esds.payload) == [
        0, 0, 0, 0,  // version, flags
        0x03, 25, 0, 0, 0,  // ES_Descriptor
        0x04, 17, 0x40, 0x15, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  // DecoderConfigDescriptor
        0x05, 2, 0x11, 0x90,  // AudioSpecificConfig: AAC-LC, 48 kHz, stereo
        0x06, 1, 0x02,  // SLConfigDescriptor
      ])
    let trex = find(["moov", "mvex", "trex"], in: bytes)!
    #expect(
      Array(trex.payload) == [0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1] + [UInt8](repeating: 0, count: 12)
    )
  }

  @Test func videoSampleEntryCarriesTheRecordAndThePictureSize() {
    // 1280x720 High profile SPS.
    let sps: [UInt8] = [
      0x67, 0x64, 0x00, 0x1F, 0xAC, 0xD9, 0x40, 0x50, 0x05, 0xBB, 0x01, 0x10, 0x00, 0x00, 0x03,
      0x00, 0x10, 0x00, 0x00, 0x03, 0x03, 0xC0, 0xF1, 0x83, 0x19, 0x60,
    ]
    let h264 = try! H264Format(
      profile: 100, compatibility: 0, level: 31, nalLengthSize: 4, sps: [sps], pps: [[0x68, 0xEB]])
    let bytes = MP4InitSegment.bytes(tracks: MP4Track.tracks(for: TrackFormats(video: h264)))[...]
    let avc1 = find(
      ["moov", "trak", "mdia", "minf", "stbl", "stsd", "avc1"], in: bytes, skip: ["stsd": 8])!
    let start = avc1.payload.startIndex
    #expect(u32(avc1.payload, start + 24) == 1280 << 16 | 720)
    let avcC = boxes(avc1.payload.dropFirst(78)).first!
    #expect(avcC.type == "avcC")
    #expect(Array(avcC.payload) == h264.avcC)
    let tkhd = find(["moov", "trak", "tkhd"], in: bytes)!
    #expect(u32(tkhd.payload, tkhd.payload.startIndex + 76) == 1280 << 16)
    #expect(u32(tkhd.payload, tkhd.payload.startIndex + 80) == 720 << 16)
  }

  @Test func fragmentIsByteExactAndPointsAtItsSamples() {
    let aac = try! AACFormat(objectType: 2, sampleRate: 48000, channels: 2)
    let tracks = MP4Track.tracks(for: TrackFormats(video: CoreFixtures.h264, audioApp: aac))
    var fragmenter = MP4Fragmenter(tracks: tracks, mediaCapacity: { _ in 64 }, sampleCapacity: 4)
    let key: [UInt8] = [0, 0, 0, 2, 0x65, 0x88]
    let delta: [UInt8] = [0, 0, 0, 1, 0x41]
    let frame: [UInt8] = [0x21, 0x10, 0x04]
    #expect(
      key.withUnsafeBytes {
        fragmenter.append(track: 0, bytes: $0, decodeTime: 0, compositionOffset: 3000, isSync: true)
      })
    #expect(
      delta.withUnsafeBytes {
        fragmenter.append(
          track: 0, bytes: $0, decodeTime: 3000, compositionOffset: 0, isSync: false)
      })
    #expect(
      frame.withUnsafeBytes {
        fragmenter.append(track: 1, bytes: $0, decodeTime: 0, compositionOffset: 0, isSync: true)
      })
    var written: [UInt8] = []
    fragmenter.writeFragment(endTime: { $0 == 0 ? 6000 : nil }) { (bytes) throws(Never) in
      written.append(contentsOf: bytes)
    }
    let expectedMoof: [UInt8] =
      [0, 0, 0, 0xC0] + Array("moof".utf8)
      + [0, 0, 0, 16] + Array("mfhd".utf8) + [0, 0, 0, 0, 0, 0, 0, 1]
      // video traf
      + [0, 0, 0, 0x60] + Array("traf".utf8)
      + [0, 0, 0, 16] + Array("tfhd".utf8) + [0, 2, 0, 0, 0, 0, 0, 1]
      + [0, 0, 0, 20] + Array("tfdt".utf8) + [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
      + [0, 0, 0, 0x34] + Array("trun".utf8) + [0, 0, 0x0F, 0x01, 0, 0, 0, 2, 0, 0, 0, 0xC8]
      + [0, 0, 0x0B, 0xB8, 0, 0, 0, 6, 0x02, 0, 0, 0, 0, 0, 0x0B, 0xB8]
      + [0, 0, 0x0B, 0xB8, 0, 0, 0, 5, 0x01, 0x01, 0, 0, 0, 0, 0, 0]
      // audio traf: the last frame lasts its nominal 1024 ticks
      + [0, 0, 0, 0x48] + Array("traf".utf8)
      + [0, 0, 0, 16] + Array("tfhd".utf8) + [0, 2, 0, 0, 0, 0, 0, 2]
      + [0, 0, 0, 20] + Array("tfdt".utf8) + [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
      + [0, 0, 0, 0x1C] + Array("trun".utf8) + [0, 0, 0x03, 0x01, 0, 0, 0, 1, 0, 0, 0, 0xD3]
      + [0, 0, 0x04, 0, 0, 0, 0, 3]
    let expected =
      expectedMoof + [0, 0, 0, 22] + Array("mdat".utf8) + key + delta + frame
    #expect(written == expected)
    // The data offsets land on the first byte of each track's samples.
    #expect(written[0xC8] == key[0] && written[0xC8 + 4] == 0x65)
    #expect(written[0xD3] == frame[0])
    #expect(fragmenter.isEmpty)
    #expect(fragmenter.sequenceNumber == 1)
  }

  @Test func appendRefusesWhatTheBuffersCannotHold() {
    let tracks = MP4Track.tracks(for: TrackFormats(video: CoreFixtures.h264))
    var fragmenter = MP4Fragmenter(tracks: tracks, mediaCapacity: { _ in 8 }, sampleCapacity: 2)
    let six = [UInt8](repeating: 1, count: 6)
    let two = [UInt8](repeating: 1, count: 2)
    let append = { (f: inout MP4Fragmenter, b: [UInt8], t: Int64) in
      b.withUnsafeBytes {
        f.append(track: 0, bytes: $0, decodeTime: t, compositionOffset: 0, isSync: true)
      }
    }
    #expect(append(&fragmenter, six, 0))
    #expect(!append(&fragmenter, six, 1))  // media full
    #expect(append(&fragmenter, two, 1))
    #expect(!append(&fragmenter, [1], 2))  // table full
    #expect(!fragmenter.canEverHold(track: 0, byteCount: 9))
  }

  @Test func scanFindsTheEndOfTheLastWholeFragmentAtEveryCut() throws {
    let aac = try! AACFormat(objectType: 2, sampleRate: 44100, channels: 1)
    let tracks = MP4Track.tracks(for: TrackFormats(audioMic: aac))
    var file = MP4InitSegment.bytes(tracks: tracks, marksRecording: true)
    let head = file.count
    var fragmenter = MP4Fragmenter(tracks: tracks, mediaCapacity: { _ in 64 }, sampleCapacity: 8)
    var ends: [Int] = []
    for fragment in 0..<3 {
      for frame in 0..<3 {
        _ = [UInt8](repeating: UInt8(frame), count: 5 + frame).withUnsafeBytes {
          fragmenter.append(
            track: 0, bytes: $0, decodeTime: Int64(fragment * 3 + frame) * 1024,
            compositionOffset: 0, isSync: true)
        }
      }
      fragmenter.writeFragment(endTime: { _ in nil }) { (bytes) throws(Never) in
        file.append(contentsOf: bytes)
      }
      ends.append(file.count)
    }
    for length in head...file.count {
      let scan = try file.withUnsafeBytes { whole in
        try MP4FileScan.scan(fileBytes: Int64(length)) { offset, buffer in
          let available = min(buffer.count, length - Int(offset))
          buffer.copyMemory(
            from: UnsafeRawBufferPointer(rebasing: whole[Int(offset)..<Int(offset) + available]))
          return available
        }
      }
      let expected = ends.last { $0 <= length } ?? head
      #expect(scan.wholeBytes == Int64(expected), "cut at \(length)")
      #expect(scan.fragments == ends.filter { $0 <= length }.count)
    }
    #expect(throws: MP4Error.self) {
      try MP4FileScan.scan(fileBytes: 8) { _, buffer in
        buffer.copyBytes(from: [0, 0, 0, 8] + Array("moof".utf8))
        return 8
      }
    }
  }

  @Test func audioTimesRoundTripThroughNinetyKilohertz() {
    let aac = try! AACFormat(objectType: 2, sampleRate: 44100, channels: 2)
    let track = MP4Track(kind: .audioApp, id: 2, format: .aac(aac))
    for frame: Int64 in [0, 1, 7, 1000, 123_457] {
      let samples = frame * 1024
      let time90k = (samples * 90_000 + 22_050) / 44_100
      #expect(track.ticks(from: time90k) == samples)
    }
  }
}
