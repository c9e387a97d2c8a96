import Testing

@testable import IngestCore

/// Audio times come to the fragmenter converted from 90 kHz, which host times do not always
/// map to whole ticks: one sample early or late at random. Every frame still lasts its 1024
/// samples, and each fragment's `tfdt` is where the one before it ended (no sample of gap or
/// overlap for a strict reader), whether the fragment is cut by the audio or by a video
/// keyframe (no end time for the audio).
@Suite struct MP4AudioTimingTests {
  static let tracks = MP4Track.tracks(
    for: TrackFormats(audioMic: try! AACFormat(objectType: 2, sampleRate: 44100, channels: 1)))

  /// Each fragment's tfdt and its trun's sample durations (flags 0x301: duration, size).
  static func timing(_ bytes: [UInt8]) -> [(tfdt: Int64, durations: [UInt32])] {
    func u32(_ at: Int) -> UInt32 { bytes[at..<at + 4].reduce(0) { $0 << 8 | UInt32($1) } }
    func find(_ type: String, from: Int) -> Int? {
      let tag = Array(type.utf8)
      var at = from
      while at + 4 <= bytes.count {
        if Array(bytes[at..<at + 4]) == tag { return at }
        at += 1
      }
      return nil
    }
    var result: [(Int64, [UInt32])] = []
    var at = 0
    while let tfdt = find("tfdt", from: at), let trun = find("trun", from: tfdt) {
      let time = Int64(u32(tfdt + 8)) << 32 | Int64(u32(tfdt + 12))
      let count = Int(u32(trun + 8))
      let durations = (0..<count).map { u32(trun + 16 + $0 * 8) }
      result.append((time, durations))
      at = trun + 16
    }
    return result
  }

  @Test(arguments: [false, true])
  func jitteredTimesMakeWholeFramesAndContinuousFragments(cutByAudio: Bool) {
    var fragmenter = MP4Fragmenter(
      tracks: Self.tracks, mediaCapacity: { _ in 256 }, sampleCapacity: 8)
    var file: [UInt8] = []
    let jitter: [Int64] = [0, 1, -1, 1, 0, -1, 0]
    var frame: Int64 = 0
    for _ in 0..<6 {
      for _ in 0..<5 {
        _ = [UInt8](repeating: 1, count: 10).withUnsafeBytes {
          fragmenter.append(
            track: 0, bytes: $0, decodeTime: frame * 1024 + jitter[Int(frame) % jitter.count],
            compositionOffset: 0, isSync: true)
        }
        frame += 1
      }
      // The audio cuts with the next frame's (jittered) time; a video keyframe gives none.
      let end = frame * 1024 + jitter[Int(frame) % jitter.count]
      fragmenter.writeFragment(endTime: { _ in cutByAudio ? end : nil }) {
        (bytes) throws(Never) in file.append(contentsOf: bytes)
      }
    }
    let fragments = Self.timing(file)
    #expect(fragments.count == 6)
    #expect(fragments.allSatisfy { $0.durations.allSatisfy { $0 == 1024 } }, "\(fragments)")
    for (earlier, later) in zip(fragments, fragments.dropFirst()) {
      #expect(later.tfdt == earlier.tfdt + Int64(earlier.durations.reduce(0, +)))
    }
  }
}
