/// Where a recording of ours stops being whole: walks its top-level boxes, reading only their
/// headers (and the first bytes of `ftyp` and of each `moof`), checks that the file is one our
/// writer made, and finds the end of its last complete `moof` + `mdat` pair.
///
/// ```
/// ftyp moov | moof mdat | moof mdat | ... | moof md.....   <- killed while writing
///           |<------ whole fragments ---->|<- torn: cut ->
///                                         wholeBytes
/// ```
///
/// A file written by `MP4FileSink` (`MP4InitSegment` with `marksRecording`, then
/// `MP4Fragmenter`'s fragments) and stopped at any byte (SIGKILL, power loss) is a playable
/// file again once cut to `wholeBytes`: everything before it is the head and whole fragments.
///
/// What proves the file is ours, since cutting anyone else's file would destroy it: `ftyp`
/// lists `MP4InitSegment.recordingBrand`, `moov` follows it, and after `moov` come only
/// `moof` + `mdat` pairs, each `moof` opening with the `mfhd` whose sequence number is the
/// previous one's plus one (1 for the first). Only the end may be torn: a box that runs past the
/// end of the file, a header cut short, or zeros (what a file system can leave after a power
/// loss). An `mfra` index, a `sidx`, `free` space, a second `moov` or a box running to the end of
/// the file (size 0) is another program's, and the scan throws.
public struct MP4FileScan: Equatable, Sendable {
  /// Bytes from the start of the file to the end of its last whole fragment (or of `moov`).
  public var wholeBytes: Int64
  /// Whole `moof` + `mdat` fragments.
  public var fragments: Int
  /// The file's size as scanned.
  public var fileBytes: Int64

  /// Whether the file ends with a torn fragment (or other bytes) that a cut removes.
  public var isTorn: Bool { wholeBytes < fileBytes }

  /// Bytes read at the start of each top-level box: the largest header, and a `moof`'s `mfhd`
  /// after it, or the brands of our `ftyp` (32 bytes).
  static let readBytes = 64

  /// Scans a file of `fileBytes` bytes.
  /// - Parameter read: fills the buffer from the given file offset and returns the bytes read
  ///   (fewer at the end of the file).
  /// - Throws: `MP4Error.notFragmentedMP4` when the file does not start with whole `ftyp` and
  ///   `moov` boxes, `.notARecording` when `ftyp` lacks our brand, `.unexpectedBox` or
  ///   `.fragmentSequence` when the boxes after `moov` are not our fragments, `.boxSize` for a
  ///   malformed header, or what `read` throws.
  /// - Complexity: one read of at most 64 bytes per top-level box; no allocation.
  public static func scan(
    fileBytes: Int64, read: (Int64, UnsafeMutableRawBufferPointer) throws -> Int
  ) throws -> MP4FileScan {
    let moof = MP4BoxHeader.code("moof")
    let mdat = MP4BoxHeader.code("mdat")
    var offset: Int64 = 0
    var whole: Int64 = 0
    var fragments = 0
    var pendingFragment = false
    var index = 0
    var storage: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) =
      (0, 0, 0, 0, 0, 0, 0, 0)
    scanning: while offset < fileBytes {
      let count = try withUnsafeMutableBytes(of: &storage) { buffer in
        try read(offset, UnsafeMutableRawBufferPointer(rebasing: buffer[..<readBytes]))
      }
      let (header, start) = try withUnsafeBytes(of: &storage) { buffer in
        let bytes = UnsafeRawBufferPointer(rebasing: buffer[..<min(count, readBytes)])
        return (try MP4BoxHeader(bytes, offset: offset), BoxStart(bytes))
      }
      // A header cut short by the end of the file: the torn end of the last write.
      guard let header else { break }
      let end = header.size.map { offset + $0 }
      let isWhole = end.map { $0 <= fileBytes } ?? false
      switch index {
      case 0:
        guard header.type == MP4BoxHeader.code("ftyp") else {
          throw MP4Error.notFragmentedMP4(offset: offset, found: header.typeName)
        }
        guard let end, isWhole else { break scanning }
        try checkBrands(start, header: header, boxBytes: Int(end - offset))
      case 1:
        guard header.type == MP4BoxHeader.code("moov") else {
          throw MP4Error.notFragmentedMP4(offset: offset, found: header.typeName)
        }
        guard isWhole, let end else { break scanning }
        whole = end
      default:
        // Zeros where a box should start: blocks a file system allocated but never filled
        // before a power loss. Nothing of ours starts with a size of 0.
        if header.type == 0 && header.size == nil { break scanning }
        let expected = pendingFragment ? mdat : moof
        guard header.type == expected, header.size != nil else {
          throw MP4Error.unexpectedBox(
            offset: offset,
            found: header.size == nil ? header.typeName + " (size 0)" : header.typeName,
            expected: pendingFragment ? "mdat" : "moof")
        }
        if header.type == moof {
          try checkSequence(start, header: header, offset: offset, expected: UInt32(fragments + 1))
        }
        guard isWhole, let end else { break scanning }
        if header.type == moof {
          pendingFragment = true
        } else {
          pendingFragment = false
          fragments += 1
          whole = end
        }
      }
      offset = end ?? fileBytes
      index += 1
    }
    if index < 2 {
      throw MP4Error.notFragmentedMP4(offset: offset, found: index == 0 ? "end of file" : "no moov")
    }
    return MP4FileScan(wholeBytes: whole, fragments: fragments, fileBytes: fileBytes)
  }

  /// The first bytes of a box as read (at most `readBytes`), kept without allocating.
  struct BoxStart {
    var storage: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) =
      (0, 0, 0, 0, 0, 0, 0, 0)
    var count: Int

    init(_ bytes: UnsafeRawBufferPointer) {
      count = bytes.count
      withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: bytes) }
    }

    func u32(_ at: Int) -> UInt32 {
      withUnsafeBytes(of: storage) { b in
        UInt32(b[at]) << 24 | UInt32(b[at + 1]) << 16 | UInt32(b[at + 2]) << 8 | UInt32(b[at + 3])
      }
    }
  }

  /// Throws `.notARecording` unless `ftyp` (whole in the file, `boxBytes` long) lists our brand.
  private static func checkBrands(_ start: BoxStart, header: MP4BoxHeader, boxBytes: Int)
    throws(MP4Error)
  {
    let mark = MP4InitSegment.recordingBrand.withUTF8Buffer {
      $0.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }
    // major_brand, minor_version, then compatible brands to the end of the box (as far as read).
    let first = header.headerSize
    let last = min(boxBytes, start.count)
    var brands: [String] = []
    var found = false
    var at = first
    while at + 4 <= last {
      // minor_version is a number, not a brand.
      if at != first + 4 {
        let brand = start.u32(at)
        if at != first && brand == mark { found = true }
        brands.append(MP4BoxHeader.name(of: brand))
      }
      at += 4
    }
    if !found { throw .notARecording(brands: brands) }
  }

  /// Throws unless the `moof` at `offset` opens with an `mfhd` whose sequence number is
  /// `expected` (checked when those bytes are in the file).
  private static func checkSequence(
    _ start: BoxStart, header: MP4BoxHeader, offset: Int64, expected: UInt32
  ) throws(MP4Error) {
    let child = header.headerSize
    guard start.count >= child + 8 else { return }
    guard start.u32(child + 4) == MP4BoxHeader.code("mfhd") else {
      throw .unexpectedBox(
        offset: offset + Int64(child), found: MP4BoxHeader.name(of: start.u32(child + 4)),
        expected: "mfhd")
    }
    guard start.count >= child + 16 else { return }
    let sequence = start.u32(child + 12)
    guard sequence == expected else {
      throw .fragmentSequence(offset: offset, found: sequence, expected: expected)
    }
  }
}
