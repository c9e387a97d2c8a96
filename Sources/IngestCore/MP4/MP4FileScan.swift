/// Where a fragmented MP4 stops being whole: walks its top-level boxes, reading only their
/// headers, and finds the end of its last complete `moof` + `mdat` pair.
///
/// ```
/// ftyp moov | moof mdat | moof mdat | ... | moof md.....   <- killed while writing
///           |<------ whole fragments ---->|<- torn: cut ->
///                                         wholeBytes
/// ```
///
/// A file written by `MP4Fragmenter` and stopped at any byte (SIGKILL, power loss) is a playable
/// file again once cut to `wholeBytes`: everything before it is the head and whole fragments.
public struct MP4FileScan: Equatable, Sendable {
  /// Bytes from the start of the file to the end of its last whole fragment (or of `moov`).
  public var wholeBytes: Int64
  /// Whole `moof` + `mdat` fragments.
  public var fragments: Int
  /// The file's size as scanned.
  public var fileBytes: Int64

  /// Whether the file ends with a torn fragment (or other bytes) that a cut removes.
  public var isTorn: Bool { wholeBytes < fileBytes }

  /// Scans a file of `fileBytes` bytes.
  /// - Parameter read: fills the buffer from the given file offset and returns the bytes read
  ///   (fewer at the end of the file).
  /// - Throws: `MP4Error.notFragmentedMP4` when the file does not start with whole `ftyp` and
  ///   `moov` boxes, `MP4Error.boxSize` for a malformed header, or what `read` throws.
  /// - Complexity: one read of at most 16 bytes per top-level box; no allocation.
  public static func scan(
    fileBytes: Int64, read: (Int64, UnsafeMutableRawBufferPointer) throws -> Int
  ) throws -> MP4FileScan {
    var offset: Int64 = 0
    var whole: Int64 = 0
    var fragments = 0
    var pendingFragment = false
    var index = 0
    var storage: (UInt64, UInt64) = (0, 0)
    while offset < fileBytes {
      let header = try withUnsafeMutableBytes(of: &storage) { buffer -> MP4BoxHeader? in
        let count = try read(offset, buffer)
        return try MP4BoxHeader(UnsafeRawBufferPointer(rebasing: buffer[..<count]), offset: offset)
      }
      guard let header, let size = header.size, offset + size <= fileBytes else { break }
      let expected: UInt32? =
        index == 0 ? MP4BoxHeader.code("ftyp") : index == 1 ? MP4BoxHeader.code("moov") : nil
      if let expected, header.type != expected {
        throw MP4Error.notFragmentedMP4(offset: offset, found: header.typeName)
      }
      offset += size
      index += 1
      switch header.type {
      case MP4BoxHeader.code("moov"): whole = offset
      case MP4BoxHeader.code("moof"): pendingFragment = true
      case MP4BoxHeader.code("mdat") where pendingFragment:
        pendingFragment = false
        fragments += 1
        whole = offset
      default: break
      }
    }
    if index < 2 {
      throw MP4Error.notFragmentedMP4(offset: offset, found: index == 0 ? "end of file" : "no moov")
    }
    return MP4FileScan(wholeBytes: whole, fragments: fragments, fileBytes: fileBytes)
  }
}
