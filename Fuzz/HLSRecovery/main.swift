import IngestCore

#if canImport(Glibc)
  import Glibc
#endif

/// Recovers a fuzzed HLS recording directory: a journal, a complete segment and a `.part`
/// segment left by a killed run. Checks that recovery ends with a VOD playlist whose every
/// segment exists with the size it lists, and that recovering again changes nothing.
///
/// Input: journal text up to the first NUL byte, a layout byte (bit 0: also write the first half
/// of the rest as `seg00000.ts`), then the bytes of `seg00001.ts.part`.
/// Compiled with `Sources/IngestHLS/*.swift` (but the sink), against IngestCore and IngestPOSIX.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHLSRecovery(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  let bytes = UnsafeRawBufferPointer(start: data, count: size)
  let separator = bytes.firstIndex(of: 0) ?? bytes.count
  let journalBytes = UnsafeRawBufferPointer(rebasing: bytes[..<separator])
  var input = FuzzInput(UnsafeRawBufferPointer(rebasing: bytes[min(separator + 1, size)...]))
  let layout = input.byte()
  let rest = input.rest()

  // Parsing alone: bounded, every line accounted for.
  let text = String(decoding: journalBytes, as: UTF8.self)
  let parsed = HLSJournal.parse(text)
  let lines = text.utf8.count { $0 == 0x0A } + 1
  require(parsed.issues.count <= lines, "more issues than lines")
  require(parsed.segments.count <= lines, "more segments than lines")

  let directory = FuzzDirectory.fresh()
  FuzzDirectory.write(directory + "/journal", journalBytes)
  var part = rest
  if layout & 1 != 0 {
    let half = rest.count / 2
    FuzzDirectory.write(directory + "/seg00000.ts", UnsafeRawBufferPointer(rebasing: rest[..<half]))
    part = UnsafeRawBufferPointer(rebasing: rest[half...])
  }
  FuzzDirectory.write(directory + "/seg00001.ts.part", part)

  _ = try? HLSSegmentScanner.scan(path: directory + "/seg00001.ts.part")
  _ = try? HLSRecovery.needsRecovery(directory: directory)
  let report: HLSRecoveryReport
  do {
    report = try HLSRecovery.recover(directory: directory, now: 1_700_000_000_000)
  } catch {
    return 0
  }
  _ = report.description
  // The playlist lists only files that exist, each with its journal size.
  let playlist = FuzzDirectory.read(report.playlistPath)
  require(playlist.hasPrefix("#EXTM3U"), "no playlist after recovery")
  require(playlist.contains("#EXT-X-ENDLIST"), "recovered playlist not ended")
  var listed = 0
  for line in playlist.split(separator: "\n") where !line.hasPrefix("#") {
    listed += 1
    require(FuzzDirectory.size(directory + "/" + line) != nil, "playlist lists missing \(line)")
  }
  require(listed == report.segments, "playlist lists \(listed) of \(report.segments) segments")
  require(FuzzDirectory.size(directory + "/seg00001.ts.part") == nil, ".part left behind")

  // A second recovery finds a finished recording and changes nothing.
  do {
    let again = try HLSRecovery.recover(directory: directory, now: 1_700_000_000_000)
    // Segments the journal lists but the directory lost are reported again each time.
    require(again.wasFinished || !again.lost.isEmpty, "second recovery did work again: \(again)")
    require(
      FuzzDirectory.read(report.playlistPath) == playlist, "second recovery changed the playlist")
  } catch {
    require(false, "second recovery failed: \(error)")
  }
  return 0
}

/// A scratch directory per process in memory-backed /dev/shm, emptied for every input.
enum FuzzDirectory {
  nonisolated(unsafe) static var path: String?

  static func fresh() -> String {
    let directory = path ?? "/dev/shm/ingest-fuzz-hls-\(getpid())"
    path = directory
    if let handle = opendir(directory) {
      var names: [String] = []
      while let entry = readdir(handle) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
          String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        if name != "." && name != ".." { names.append(name) }
      }
      closedir(handle)
      for name in names { unlink(directory + "/" + name) }
    } else {
      mkdir(directory, 0o700)
    }
    return directory
  }

  static func write(_ path: String, _ bytes: UnsafeRawBufferPointer) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard fd >= 0 else { return }
    if bytes.count > 0 { _ = Glibc.write(fd, bytes.baseAddress, bytes.count) }
    close(fd)
  }

  static func read(_ path: String) -> String {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return "" }
    defer { close(fd) }
    var result: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
      let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
      if n <= 0 { break }
      result.append(contentsOf: chunk[..<n])
    }
    return String(decoding: result, as: UTF8.self)
  }

  static func size(_ path: String) -> Int? {
    var info = stat()
    return stat(path, &info) == 0 ? Int(info.st_size) : nil
  }
}
