import IngestCore
import IngestPlatform

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// What a scan of a segment file (possibly cut short by a crash) found.
public struct HLSSegmentScan: Equatable, Sendable {
  /// Size of the file.
  public var fileBytes: Int64 = 0
  /// Length of the leading run of whole access units: where a torn file is cut.
  public var completeBytes: Int64 = 0
  /// The first packet is a PAT (every segment we write starts with PAT, PMT, keyframe).
  public var startsWithPAT = false
  /// A video elementary-stream packet was seen.
  public var hasVideo = false
  /// The first video access unit is flagged as a random access point.
  public var firstVideoIsKeyframe = false
  /// Whole video and audio access units inside `completeBytes`.
  public var completeVideoUnits = 0
  public var completeAudioUnits = 0
  /// Duration of the whole units on the timing track (video, else audio), 90 kHz ticks.
  public var duration: Int64 = 0
  /// Where the whole units end: the latest of every track's last decode time plus its frame
  /// step, in 90 kHz ticks as the stream carries them (33 bits); nil without a whole unit.
  public var endTime: Int64?
  /// Offset of the first packet without a sync byte, if any (the scan stopped there).
  public var malformedOffset: Int64?

  /// Whether the whole units still make a playable segment: PAT first and a complete keyframe
  /// (or, without video, a complete audio frame).
  public var isPlayable: Bool {
    startsWithPAT
      && (hasVideo ? completeVideoUnits > 0 && firstVideoIsKeyframe : completeAudioUnits > 0)
  }
}

/// Finds the whole access units at the start of a transport stream file written by our TS writer.
///
/// The writer emits each access unit as one contiguous run: optional PAT/PMT/PCR-only packets,
/// then the unit's packets, the first with payload_unit_start_indicator. So a unit is whole once
/// anything of the next unit follows it, and a torn file is cut at the start of its last unit
/// (including the PSI/PCR packets in front of it). The file is read in fixed chunks: memory does
/// not depend on its size.
public enum HLSSegmentScanner {
  /// Default duration of a lone unit: one 30 fps frame, one AAC frame at 48 kHz.
  static let loneVideoDuration: Int64 = 3000
  static let loneAudioDuration: Int64 = 1920

  private struct Track {
    var units = 0
    var firstDTS: Int64 = 0
    var lastDTS: Int64 = 0
    var lastDelta: Int64 = 0

    mutating func add(dts: Int64) {
      if units > 0 { lastDelta = (dts - lastDTS) & 0x1_FFFF_FFFF }
      if units == 0 { firstDTS = dts }
      lastDTS = dts
      units += 1
    }

    func duration(lone: Int64) -> Int64 {
      guard units > 0 else { return 0 }
      let span = (lastDTS - firstDTS) & 0x1_FFFF_FFFF
      return span + (units > 1 ? lastDelta : lone)
    }

    func end(lone: Int64) -> Int64? {
      units > 0 ? (lastDTS + (units > 1 ? lastDelta : lone)) & 0x1_FFFF_FFFF : nil
    }
  }

  /// Scans the file at `path`.
  /// - Throws: `FileError` when it cannot be opened or read.
  public static func scan(path: String) throws(FileError) -> HLSSegmentScan {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw FileError(operation: "open", path: path, errno: errno) }
    defer { _ = close(fd) }
    let packet = TSPacket.size
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 348 * packet, alignment: 16)
    defer { buffer.deallocate() }

    var scan = HLSSegmentScan()
    var tracks = [Track(), Track(), Track()]
    var pending: (start: Int64, track: Int, dts: Int64?)?
    var groupStart: Int64?
    var offset: Int64 = 0
    var firstVideoSeen = false
    reading: while true {
      var filled = 0
      while filled < buffer.count {
        let n: Int
        do {
          n = try FileDescriptor(rawValue: fd).read(
            into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
        } catch {
          throw FileError(operation: "read", path: path, errno: error.code)
        }
        if n == 0 { break }
        filled += n
      }
      scan.fileBytes += Int64(filled)
      var index = 0
      while index + packet <= filled {
        let p = UnsafeRawBufferPointer(rebasing: buffer[index..<index + packet])
        defer {
          index += packet
          offset += Int64(packet)
        }
        guard p[0] == TSPacket.syncByte else {
          scan.malformedOffset = offset
          break reading
        }
        let pid = UInt16(p[1] & 0x1F) << 8 | UInt16(p[2])
        let unitStart = p[1] & 0x40 != 0
        let control = p[3] & 0x30
        if offset == 0 { scan.startsWithPAT = pid == TSPacket.patPID }
        if pid == TSPacket.patPID || pid == TSPacket.pmtPID || control == TSPacket.adaptationOnly {
          if groupStart == nil { groupStart = offset }
          continue
        }
        let track: Int
        switch pid {
        case TSPacket.videoPID: track = 0
        case TSPacket.audioAppPID: track = 1
        case TSPacket.audioMicPID: track = 2
        default: track = -1
        }
        if track == 0 { scan.hasVideo = true }
        if unitStart && track >= 0 {
          if let done = pending, let dts = done.dts { tracks[done.track].add(dts: dts) }
          let adaptation = control == TSPacket.adaptationAndPayload ? Int(p[4]) + 1 : 0
          if track == 0 && !firstVideoSeen {
            firstVideoSeen = true
            scan.firstVideoIsKeyframe = adaptation > 1 && p[5] & TSPacket.randomAccessFlag != 0
          }
          pending = (groupStart ?? offset, track, decodeTime(p, payloadOffset: 4 + adaptation))
        }
        groupStart = nil
      }
      if filled < buffer.count { break }
    }
    // Trailing PSI/PCR packets belong to a unit that was never written: the one before is whole.
    if let groupStart {
      if let done = pending, let dts = done.dts { tracks[done.track].add(dts: dts) }
      scan.completeBytes = groupStart
    } else {
      scan.completeBytes = pending?.start ?? 0
    }
    scan.completeVideoUnits = tracks[0].units
    scan.completeAudioUnits = tracks[1].units + tracks[2].units
    scan.endTime = [
      tracks[0].end(lone: loneVideoDuration), tracks[1].end(lone: loneAudioDuration),
      tracks[2].end(lone: loneAudioDuration),
    ].compactMap { $0 }.max()
    if tracks[0].units > 0 {
      scan.duration = tracks[0].duration(lone: loneVideoDuration)
    } else if let audio = tracks[1...].first(where: { $0.units > 0 }) {
      scan.duration = audio.duration(lone: loneAudioDuration)
    }
    return scan
  }

  /// The DTS (or PTS) of a PES header starting at `payloadOffset`, nil if it is not one.
  private static func decodeTime(_ p: UnsafeRawBufferPointer, payloadOffset: Int) -> Int64? {
    let o = payloadOffset
    guard o + 14 <= p.count, p[o] == 0, p[o + 1] == 0, p[o + 2] == 1 else { return nil }
    let flags = p[o + 7] >> 6
    guard flags & 0b10 != 0 else { return nil }
    if flags == 0b11, o + 19 <= p.count {
      return PESHeader.readTimestamp(p, at: o + 14)
    }
    return PESHeader.readTimestamp(p, at: o + 9)
  }
}
