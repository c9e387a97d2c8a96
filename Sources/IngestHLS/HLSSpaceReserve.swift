import IngestPlatform

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Disk space set aside in a recording directory for finishing it after the disk filled up.
///
/// The playlist is only ever replaced atomically (a temporary copy, then a rename), and the copy
/// needs room. A file of zeros, `space.tmp`, holds that room while the run writes; recovery
/// removes it (with every other `*.tmp`) before it writes anything, so the journal lines and the
/// playlist of a recording that stopped on a full disk still fit. It grows with the recording to
/// what a playlist listing every segment needs; a finished run removes it.
final class HLSSpaceReserve {
  /// The reserve's name in the recording directory.
  static let fileName = "space.tmp"
  /// Growth step, and the first size (room for about 100 listed segments).
  static let step = 16 << 10
  /// Generous bytes per listed segment (date, duration, name, discontinuity tag).
  static let bytesPerSegment = 160

  private let path: String
  private var bytes = 0

  init(directory: String) {
    path = HLSFileSystem.join(directory, Self.fileName)
  }

  /// Grows the reserve to what a playlist of `segments` entries needs, rounded up to `step`.
  /// Best effort: on a disk already full it keeps what it has (the write that fails next says so).
  func ensure(segments: Int) {
    let needed = (segments * Self.bytesPerSegment / Self.step + 1) * Self.step
    guard needed > bytes else { return }
    let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
    guard fd >= 0 else { return }
    defer { close(fd) }
    let zeros = [UInt8](repeating: 0, count: 4096)
    while bytes < needed {
      let offset = off_t(bytes)
      let written = zeros.withUnsafeBytes { raw in
        FileDescriptor.retryingOnInterrupt(
          { pwrite(fd, raw.baseAddress, raw.count, offset) }, failed: { $0 < 0 })
      }
      guard case .success(let n) = written, n > 0 else { return }
      bytes += n
    }
  }

  /// Gives the space back (at the end of a finished run).
  func remove() {
    _ = unlink(path)
    bytes = 0
  }
}
