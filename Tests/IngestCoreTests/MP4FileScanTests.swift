import Testing

@testable import IngestCore

/// `MP4FileScan` cuts only what our writer made: our brand in `ftyp`, then our fragments in
/// sequence; anything else is refused with what is wrong and where.
@Suite struct MP4FileScanTests {
  static let tracks = MP4Track.tracks(
    for: TrackFormats(audioMic: try! AACFormat(objectType: 2, sampleRate: 44100, channels: 1)))

  /// A recording's head and `count` fragments of three audio frames each.
  static func recording(fragments count: Int, marked: Bool = true) -> [UInt8] {
    var file = MP4InitSegment.bytes(tracks: tracks, marksRecording: marked)
    var fragmenter = MP4Fragmenter(tracks: tracks, mediaCapacity: { _ in 64 }, sampleCapacity: 8)
    for fragment in 0..<count {
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
    }
    return file
  }

  static func scan(_ file: [UInt8]) throws -> MP4FileScan {
    try file.withUnsafeBytes { whole in
      try MP4FileScan.scan(fileBytes: Int64(file.count)) { offset, buffer in
        let available = min(buffer.count, file.count - Int(offset))
        buffer.copyMemory(
          from: UnsafeRawBufferPointer(rebasing: whole[Int(offset)..<Int(offset) + available]))
        return available
      }
    }
  }

  static func box(_ type: String, payload: [UInt8]) -> [UInt8] {
    let size = UInt32(8 + payload.count)
    return [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: size >> $0) } + Array(type.utf8)
      + payload
  }

  @Test func theRecordingBrandIsListedAmongTheCompatibleBrands() {
    let iso = MP4InitSegment.bytes(tracks: Self.tracks, marksRecording: true)
    #expect(Array(iso[8..<32]) == Array("iso6\0\0\0\0iso6isommp41bcin".utf8))
    let mov = MP4InitSegment.bytes(tracks: Self.tracks, brand: .quickTime, marksRecording: true)
    #expect(Array(mov[8..<24]) == Array("qt  \0\0\u{2}\0qt  bcin".utf8))
    // HLS initialization sections stay as they were.
    let plain = MP4InitSegment.bytes(tracks: Self.tracks)
    #expect(Array(plain[8..<28]) == Array("iso6\0\0\0\0iso6isommp41".utf8))
  }

  @Test func aWholeRecordingAndATornOneAreOurs() throws {
    let file = Self.recording(fragments: 2)
    let whole = try Self.scan(file)
    #expect(whole.fragments == 2 && !whole.isTorn)
    let torn = try Self.scan(Array(file.dropLast(3)))
    #expect(torn.fragments == 1 && torn.isTorn)
    // Zeros a file system left after a power loss are a torn end, not another program's box.
    let zeros = try Self.scan(file + [UInt8](repeating: 0, count: 4096))
    #expect(zeros.fragments == 2 && zeros.wholeBytes == Int64(file.count))
  }

  @Test func aFileWithoutTheBrandIsNotOurs() {
    #expect(throws: MP4Error.notARecording(brands: ["iso6", "iso6", "isom", "mp41"])) {
      try Self.scan(Self.recording(fragments: 2, marked: false))
    }
  }

  @Test func anIndexAfterTheFragmentsIsAnotherProgramsFile() {
    let file = Self.recording(fragments: 2)
    // ffmpeg's fragmented MP4 ends with an mfra index; recovery would cut it away.
    let mfra = Self.box("mfra", payload: Self.box("mfro", payload: [0, 0, 0, 0, 0, 0, 0, 16]))
    #expect(
      throws: MP4Error.unexpectedBox(offset: Int64(file.count), found: "mfra", expected: "moof")
    ) { try Self.scan(file + mfra) }
    // A torn box of another type is not ours either.
    #expect(throws: MP4Error.self) { try Self.scan(file + Array(mfra.dropLast(4))) }
    // Nor an mdat where a moof should start (a non-fragmented file's media).
    #expect(throws: MP4Error.self) {
      try Self.scan(file + Self.box("mdat", payload: [1, 2, 3]))
    }
  }

  @Test func fragmentsOutOfSequenceAreNotOurs() {
    let head = MP4InitSegment.bytes(tracks: Self.tracks, marksRecording: true)
    let file = Self.recording(fragments: 2)
    let first = Array(file[head.count...])
    // The same fragment twice: the second's mfhd says 1 where 2 follows.
    let firstFragment = Array(first.prefix(first.count / 2))
    #expect(
      throws: MP4Error.fragmentSequence(
        offset: Int64(head.count + firstFragment.count), found: 1, expected: 2)
    ) { try Self.scan(head + firstFragment + firstFragment) }
  }
}
