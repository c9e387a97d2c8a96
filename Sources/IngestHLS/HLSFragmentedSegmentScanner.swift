import IngestCore
import IngestPlatform

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// What a scan of an fMP4 media segment (possibly cut short by a crash) found.
public struct HLSFragmentedSegmentScan: Equatable, Sendable {
  /// Size of the file.
  public var fileBytes: Int64 = 0
  /// Bytes up to the end of the last whole `moof` + `mdat` fragment: where a torn file is cut.
  public var completeBytes: Int64 = 0
  /// Whole fragments inside `completeBytes`.
  public var fragments = 0
  /// The first sample of the timing track is a sync sample (every segment we write starts with
  /// a keyframe; audio samples are all sync samples).
  public var startsWithSyncSample = false
  /// Duration of the timing track's samples in the whole fragments, 90 kHz ticks.
  public var duration: Int64 = 0

  /// Whether the whole fragments still make a playable segment.
  public var isPlayable: Bool { fragments > 0 && startsWithSyncSample }
}

/// Finds the whole fragments at the start of an fMP4 media segment written by the HLS sink, and
/// their duration on the timing track: the first track of the initialization section (video
/// when there is video, as `MP4Track.tracks(for:)` numbers them), whose timescale it reads.
///
/// A fragment is whole once its `mdat` is: the segment is cut after the last such one. Only box
/// headers are read, and each `moof` (bounded by `maximumBoxBytes`): memory does not depend on
/// the segment's size.
public enum HLSFragmentedSegmentScanner {
  /// The largest `moof` or initialization section read; ours are a few kilobytes.
  static let maximumBoxBytes: Int64 = 1 << 20

  /// A box inside a buffer: its type and its payload's range.
  private typealias Box = (type: UInt32, payload: Range<Int>)

  /// Scans the segment at `path`, whose initialization section is at `mapPath`.
  /// - Throws: `FileError` when a file cannot be opened or read, or the initialization
  ///   section is larger than any of ours (`EFBIG`).
  public static func scan(path: String, mapPath: String) throws(FileError)
    -> HLSFragmentedSegmentScan
  {
    let timing = try timingTrack(mapPath: mapPath)
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw FileError(operation: "open", path: path, errno: errno) }
    defer { _ = close(fd) }
    var status = stat()
    guard fstat(fd, &status) == 0 else {
      throw FileError(operation: "stat", path: path, errno: errno)
    }
    var scan = HLSFragmentedSegmentScan()
    scan.fileBytes = Int64(status.st_size)
    var offset: Int64 = 0
    var pendingTicks: Int64?
    var ticks: Int64 = 0
    var header = [UInt8](repeating: 0, count: MP4BoxHeader.maximumSize)
    while offset < scan.fileBytes {
      let count = try read(fd, into: &header, at: offset, path: path)
      let box: MP4BoxHeader?
      do {
        box = try header.withUnsafeBytes {
          try MP4BoxHeader(UnsafeRawBufferPointer(rebasing: $0[..<count]), offset: offset)
        }
      } catch { break }
      guard let box, let size = box.size, offset + size <= scan.fileBytes else { break }
      switch box.type {
      case MP4BoxHeader.code("moof"):
        guard size <= maximumBoxBytes else { return scan }
        var moof = [UInt8](repeating: 0, count: Int(size))
        guard try read(fd, into: &moof, at: offset, path: path) == moof.count else { return scan }
        let (fragmentTicks, firstIsSync) = timingSamples(moof, track: timing.id)
        if scan.fragments == 0 { scan.startsWithSyncSample = firstIsSync ?? false }
        pendingTicks = fragmentTicks
      case MP4BoxHeader.code("mdat"):
        if let fragmentTicks = pendingTicks {
          scan.fragments += 1
          ticks += fragmentTicks
          scan.completeBytes = offset + size
        }
        pendingTicks = nil
      default:
        pendingTicks = nil
      }
      offset += size
    }
    scan.duration = ticks * MediaTicks.perSecond / Int64(max(1, timing.timescale))
    return scan
  }

  /// The track_ID and timescale of the first track of the initialization section at `path`.
  static func timingTrack(mapPath path: String) throws(FileError) -> (id: UInt32, timescale: UInt32)
  {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw FileError(operation: "open", path: path, errno: errno) }
    defer { _ = close(fd) }
    var status = stat()
    guard fstat(fd, &status) == 0 else {
      throw FileError(operation: "stat", path: path, errno: errno)
    }
    guard Int64(status.st_size) <= maximumBoxBytes else {
      throw FileError(operation: "read", path: path, errno: EFBIG)
    }
    var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
    let count = try read(fd, into: &bytes, at: 0, path: path)
    bytes.removeLast(bytes.count - count)
    guard let moov = children(bytes, 0..<bytes.count).first(where: { $0.type == code("moov") }),
      let trak = children(bytes, moov.payload).first(where: { $0.type == code("trak") })
    else { return (0, 0) }
    var id: UInt32 = 0
    var timescale: UInt32 = 0
    for box in children(bytes, trak.payload) {
      if box.type == code("tkhd"), box.payload.count >= 16 {
        // version 1 has 64-bit creation and modification times before the track_ID.
        id = u32(bytes, box.payload.lowerBound + (bytes[box.payload.lowerBound] == 1 ? 20 : 12))
      }
      if box.type == code("mdia"),
        let mdhd = children(bytes, box.payload).first(where: { $0.type == code("mdhd") }),
        mdhd.payload.count >= 24
      {
        timescale = u32(
          bytes, mdhd.payload.lowerBound + (bytes[mdhd.payload.lowerBound] == 1 ? 20 : 12))
      }
    }
    return (id, timescale)
  }

  /// The summed durations of `track`'s samples in a `moof`, and whether its first sample is a
  /// sync sample (nil when the fragment has none of the track's samples).
  static func timingSamples(_ moof: [UInt8], track: UInt32) -> (ticks: Int64, firstIsSync: Bool?) {
    var ticks: Int64 = 0
    var firstIsSync: Bool?
    for traf in children(moof, children(moof, 0..<moof.count).first?.payload ?? 0..<0)
    where traf.type == code("traf") {
      let boxes = children(moof, traf.payload)
      guard let tfhd = boxes.first(where: { $0.type == code("tfhd") }), tfhd.payload.count >= 8,
        u32(moof, tfhd.payload.lowerBound + 4) == track
      else { continue }
      for trun in boxes where trun.type == code("trun") && trun.payload.count >= 8 {
        let flags = u32(moof, trun.payload.lowerBound) & 0xFF_FFFF
        let samples = Int(u32(moof, trun.payload.lowerBound + 4))
        var at = trun.payload.lowerBound + 8
        if flags & 0x1 != 0 { at += 4 }  // data_offset
        var firstFlags: UInt32?
        if flags & 0x4 != 0 {
          firstFlags = at + 4 <= trun.payload.upperBound ? u32(moof, at) : nil
          at += 4
        }
        // duration, size, flags, composition offset: 4 bytes each where present.
        let fields = [0x100, 0x200, 0x400, 0x800].filter { flags & UInt32($0) != 0 }.count
        for sample in 0..<samples where at + 4 * fields <= trun.payload.upperBound {
          var field = at
          if flags & 0x100 != 0 {
            ticks += Int64(u32(moof, field))
            field += 4
          }
          if flags & 0x200 != 0 { field += 4 }
          if sample == 0 && firstFlags == nil && flags & 0x400 != 0 {
            firstFlags = u32(moof, field)
          }
          at += 4 * fields
        }
        if firstIsSync == nil && samples > 0 {
          // sample_is_non_sync_sample; without sample flags every sample is a sync sample (the
          // track's defaults, which our `trex` leaves at 0).
          firstIsSync = (firstFlags ?? 0) & 0x0001_0000 == 0
        }
      }
    }
    return (ticks, firstIsSync)
  }

  /// The boxes directly inside `range` of `bytes`, up to the first malformed header.
  private static func children(_ bytes: [UInt8], _ range: Range<Int>) -> [Box] {
    var boxes: [Box] = []
    var offset = range.lowerBound
    while offset + 8 <= range.upperBound {
      let size = Int(u32(bytes, offset))
      guard size >= 8, offset + size <= range.upperBound else { break }
      boxes.append((u32(bytes, offset + 4), offset + 8..<offset + size))
      offset += size
    }
    return boxes
  }

  private static func u32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
    UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8
      | UInt32(bytes[at + 3])
  }

  private static func code(_ name: StaticString) -> UInt32 { MP4BoxHeader.code(name) }

  /// Fills `buffer` from `offset` (fewer bytes at the end of the file); returns the count.
  private static func read(_ fd: Int32, into buffer: inout [UInt8], at offset: Int64, path: String)
    throws(FileError) -> Int
  {
    var filled = 0
    while filled < buffer.count {
      let n = buffer.withUnsafeMutableBytes {
        pread(fd, $0.baseAddress! + filled, $0.count - filled, off_t(offset) + off_t(filled))
      }
      if n < 0 && errno == EINTR { continue }
      guard n >= 0 else { throw FileError(operation: "read", path: path, errno: errno) }
      if n == 0 { break }
      filled += n
    }
    return filled
  }
}
