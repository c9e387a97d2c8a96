import IngestCore
import IngestPOSIX

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The few file operations the uploader needs, with errors naming the path.
enum UploadFiles {
  /// `directory/name`.
  static func join(_ directory: String, _ name: String) -> String {
    directory.hasSuffix("/") ? directory + name : directory + "/" + name
  }

  /// Size and modification time: what tells that a file changed.
  struct Stamp: Equatable {
    var size: Int64
    var modified: Int64
  }

  /// The stamp of a regular file (not followed through a symbolic link), or nil when there is
  /// none.
  static func stamp(of path: String) -> Stamp? {
    var stats = stat()
    guard lstat(path, &stats) == 0, stats.st_mode & S_IFMT == S_IFREG else { return nil }
    return Stamp(
      size: Int64(stats.st_size),
      modified: stats.st_mtim.span.nanoseconds)
  }

  /// The stamp of a file of the recording, nil when there is none.
  /// - Throws: `UploadError.symbolicLink` when `path` is a symbolic link.
  static func ownStamp(of path: String) throws(UploadError) -> Stamp? {
    var stats = stat()
    if lstat(path, &stats) == 0 && stats.st_mode & S_IFMT == S_IFLNK {
      throw .symbolicLink(path: path)
    }
    return stamp(of: path)
  }

  /// Opens a file for reading without following a symbolic link.
  /// - Throws: `UploadError.symbolicLink` for a link, `.file` for another failure.
  static func openForReading(_ path: String) throws(UploadError) -> FileDescriptor {
    do { return try FileDescriptor.open(path, O_RDONLY | O_NOFOLLOW) } catch {
      if error.code == ELOOP { throw .symbolicLink(path: path) }
      throw .file(FileError(operation: "open", path: path, errno: error.code))
    }
  }

  /// The whole file as bytes, or nil when it does not exist; a symbolic link is refused.
  static func read(_ path: String) throws(UploadError) -> [UInt8]? {
    let fd: FileDescriptor
    do { fd = try FileDescriptor.open(path, O_RDONLY | O_NOFOLLOW) } catch {
      if error.code == ENOENT { return nil }
      if error.code == ELOOP { throw .symbolicLink(path: path) }
      throw .file(FileError(operation: "open", path: path, errno: error.code))
    }
    defer { fd.close() }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 << 10)
    while true {
      let result = chunk.withUnsafeMutableBytes { buffer in
        FileDescriptor.retryingOnInterrupt(
          { systemRead(fd.rawValue, buffer.baseAddress, buffer.count) }, failed: { $0 < 0 })
      }
      let n: Int
      switch result {
      case .success(let count): n = count
      case .failure(let error):
        throw .file(FileError(operation: "read", path: path, errno: error.code))
      }
      if n == 0 { return bytes }
      bytes += chunk[..<n]
    }
  }

  /// Removes a file; one that is already gone is fine.
  static func remove(_ path: String) throws(UploadError) {
    guard unlink(path) == 0 || errno == ENOENT else {
      throw .file(FileError(operation: "remove", path: path, errno: errno))
    }
  }

  /// Syncs a directory, so that a file created in it survives a crash.
  static func syncDirectory(_ path: String) throws(UploadError) {
    let fd: FileDescriptor
    do {
      fd = try FileDescriptor.open(path, O_RDONLY | O_DIRECTORY)
      defer { fd.close() }
      try fd.sync()
    } catch {
      throw .file(FileError(operation: "sync", path: path, errno: error.code))
    }
  }
}

private func systemRead(_ fd: Int32, _ base: UnsafeMutableRawPointer?, _ count: Int) -> Int {
  read(fd, base, count)
}
