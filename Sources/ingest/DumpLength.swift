import IngestCore
import IngestPOSIX

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The length of a dump for the progress line's percent: known for a regular file, which is read
/// through once (bounded memory) before the replay; unknown for a pipe or FIFO.
enum DumpLength {
  /// The longest track's presentation span in 90 kHz ticks, or nil when it cannot be known.
  static func duration(of path: String) -> Int64? {
    var stats = stat()
    guard SystemPath.withCString(path, { stat($0, &stats) }) == 0,
      stats.st_mode & S_IFMT == S_IFREG,
      let source = try? FileByteSource(path: path)
    else { return nil }
    let inspection = DumpInspection(reading: source)
    let longest = inspection.tracks.map(\.duration).max() ?? 0
    return longest > 0 ? longest : nil
  }
}
