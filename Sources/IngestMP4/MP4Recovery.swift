import Glibc
import IngestCore
import IngestPOSIX

/// Makes a fragmented MP4 whose writer was killed whole again: cuts it to the end of its last
/// complete fragment (`MP4FileScan`), so every player reads it to there.
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
    case format(path: String, MP4Error)

    public var description: String {
      switch self {
      case .file(let error): error.description
      case .format(let path, let error): "\(path): \(error)"
      }
    }
  }

  /// Cuts `path` to its last whole fragment and syncs it.
  /// - Throws: `Failure.file` naming the operation and path, `Failure.format` when the file is
  ///   no fragmented MP4 (nothing is changed then).
  public static func recover(path: String) throws(Failure) -> Report {
    let fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
    guard fd >= 0 else { throw .file(FileError(operation: "open", path: path, errno: errno)) }
    defer { Glibc.close(fd) }
    var status = stat()
    guard fstat(fd, &status) == 0 else {
      throw .file(FileError(operation: "stat", path: path, errno: errno))
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
