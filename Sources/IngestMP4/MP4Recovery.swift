import Glibc
import IngestCore
import IngestPlatform

/// Makes a recording of ours whose writer was killed whole again: cuts it to the end of its last
/// complete fragment (`MP4FileScan`), so every player reads it to there.
///
/// Only a file that `MP4FileScan` proves ours is cut (our brand in `ftyp`, then only our
/// fragments in sequence); any other file, an ffmpeg MP4 for one, is refused and left as it
/// was, byte for byte. So is a recording that a run is still writing: it holds the file's lock
/// (`MP4FileSink`), which recovery takes without waiting.
///
/// The file is opened with `O_NOFOLLOW`: recovery cuts a file, and must never cut one that a
/// symbolic link points to. A file that is already whole is left as it is.
public enum MP4Recovery {
  /// What recovery found and did.
  public struct Report: Equatable, Sendable, CustomStringConvertible {
    public var path: String
    /// The file's size before recovery.
    public var fileBytes: Int64
    /// Its size after: the head and the whole fragments.
    public var keptBytes: Int64
    /// Whole fragments kept.
    public var fragments: Int

    /// Whether bytes were cut.
    public var wasCut: Bool { keptBytes < fileBytes }

    public var description: String {
      wasCut
        ? "\(path): cut the torn last fragment (\(fileBytes - keptBytes) bytes); "
          + "\(fragments) whole fragments, \(keptBytes) bytes kept"
        : "\(path): already whole, \(fragments) fragments, \(keptBytes) bytes"
    }
  }

  /// A recording that cannot be recovered: the file's error, or what is wrong with its boxes.
  public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
    case file(FileError)
    /// The file is not a recording of ours (or not a fragmented MP4 at all); it was not changed.
    case format(path: String, MP4Error)
    /// A run is writing the recording (it holds the file's lock); it was not changed.
    case inUse(path: String)
    /// The path is not a regular file (a directory is an HLS recording, see `HLSRecovery`).
    case notRegularFile(path: String)

    public var description: String {
      switch self {
      case .file(let error): error.description
      case .format(let path, let error): "\(path): \(error); nothing was changed"
      case .inUse(let path):
        "\(path): another ingest process is writing this recording (it holds the file's lock);"
          + " recover it once that run has ended; nothing was changed"
      case .notRegularFile(let path): "\(path): not a regular file; nothing was changed"
      }
    }
  }

  /// Cuts `path` to its last whole fragment and syncs it.
  /// - Throws: `Failure.file` naming the operation and path, `Failure.format` when the file is
  ///   not a recording of ours, `.inUse` while a run writes it, `.notRegularFile` (nothing is
  ///   changed in any of these cases).
  public static func recover(path: String) throws(Failure) -> Report {
    // O_NONBLOCK: a FIFO at the path must not hang the open; it is refused below.
    let fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
    guard fd >= 0 else { throw .file(FileError(operation: "open", path: path, errno: errno)) }
    defer { Glibc.close(fd) }
    var status = stat()
    guard fstat(fd, &status) == 0 else {
      throw .file(FileError(operation: "stat", path: path, errno: errno))
    }
    guard status.st_mode & S_IFMT == S_IFREG else { throw .notRegularFile(path: path) }
    // Held until the descriptor is closed: no run can start writing the file while it is cut.
    let locked = FileDescriptor.retryingOnInterrupt(
      { flock(fd, LOCK_EX | LOCK_NB) }, failed: { $0 != 0 })
    if case .failure(let error) = locked {
      if error.code == EWOULDBLOCK { throw .inUse(path: path) }
      throw .file(FileError(operation: "lock", path: path, errno: error.code))
    }
    let scan: MP4FileScan
    do {
      scan = try MP4FileScan.scan(fileBytes: Int64(status.st_size)) { offset, buffer in
        let count = pread(fd, buffer.baseAddress, buffer.count, off_t(offset))
        guard count >= 0 else { throw FileError(operation: "read", path: path, errno: errno) }
        return count
      }
    } catch let error as MP4Error {
      throw .format(path: path, error)
    } catch let error as FileError {
      throw .file(error)
    } catch {
      throw .file(FileError(operation: "read", path: path, errno: EIO))
    }
    if scan.isTorn {
      guard ftruncate(fd, off_t(scan.wholeBytes)) == 0 else {
        throw .file(FileError(operation: "truncate", path: path, errno: errno))
      }
      guard fsync(fd) == 0 else {
        throw .file(FileError(operation: "sync", path: path, errno: errno))
      }
    }
    return Report(
      path: path, fileBytes: scan.fileBytes, keptBytes: scan.wholeBytes,
      fragments: scan.fragments)
  }
}
