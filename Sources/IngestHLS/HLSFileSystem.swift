import IngestPlatform

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The few file operations the HLS writer and recovery need, with errors naming the path.
enum HLSFileSystem {
  /// `directory/name`.
  static func join(_ directory: String, _ name: String) -> String {
    directory.hasSuffix("/") ? directory + name : directory + "/" + name
  }

  /// Creates `path` and any missing parents; an existing directory is fine.
  static func makeDirectories(_ path: String) throws(FileError) {
    var stats = stat()
    if stat(path, &stats) == 0 {
      guard stats.st_mode & S_IFMT == S_IFDIR else {
        throw FileError(operation: "use directory", path: path, errno: ENOTDIR)
      }
      return
    }
    if let slash = path.dropLast().lastIndex(of: "/"), slash != path.startIndex {
      try makeDirectories(String(path[..<slash]))
    }
    guard mkdir(path, 0o755) == 0 || errno == EEXIST else {
      throw FileError(operation: "create directory", path: path, errno: errno)
    }
  }

  /// Names in `directory` (without `.` and `..`).
  static func entries(of directory: String) throws(FileError) -> [String] {
    guard let handle = opendir(directory) else {
      throw FileError(operation: "list", path: directory, errno: errno)
    }
    defer { closedir(handle) }
    var names: [String] = []
    while let entry = readdir(handle) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
      }
      if name != "." && name != ".." { names.append(name) }
    }
    return names
  }

  /// Throws when `path` is a symbolic link: recovery writes only the directory's own files, so a
  /// link planted in it cannot make it cut or append to a file elsewhere. A missing path is fine.
  static func refuseSymbolicLink(_ path: String) throws(FileError) {
    var stats = stat()
    guard lstat(path, &stats) == 0, stats.st_mode & S_IFMT == S_IFLNK else { return }
    throw FileError(operation: "follow the symbolic link", path: path, errno: ELOOP)
  }

  /// Size of a regular file, or nil when there is none.
  static func size(of path: String) -> Int64? {
    var stats = stat()
    guard stat(path, &stats) == 0, stats.st_mode & S_IFMT == S_IFREG else { return nil }
    return Int64(stats.st_size)
  }

  static func rename(_ from: String, to: String) throws(FileError) {
    guard systemRename(from, to) == 0 else {
      throw FileError(operation: "rename", path: from, errno: errno)
    }
  }

  /// Removes a file; a missing one is fine.
  static func remove(_ path: String) throws(FileError) {
    guard unlink(path) == 0 || errno == ENOENT else {
      throw FileError(operation: "remove", path: path, errno: errno)
    }
  }

  /// Cuts a file to `length` bytes and syncs it; a symbolic link is refused (`ELOOP`), so that
  /// only the directory's own file is cut, never one it points to.
  static func truncate(_ path: String, to length: Int64) throws(FileError) {
    let fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
    guard fd >= 0 else { throw FileError(operation: "open", path: path, errno: errno) }
    defer { close(fd) }
    guard ftruncate(fd, off_t(length)) == 0 else {
      throw FileError(operation: "truncate", path: path, errno: errno)
    }
    guard fsync(fd) == 0 else { throw FileError(operation: "sync", path: path, errno: errno) }
  }

  /// Makes renames and new names inside `directory` durable.
  static func syncDirectory(_ directory: String) throws(FileError) {
    let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard fd >= 0 else { throw FileError(operation: "open", path: directory, errno: errno) }
    defer { close(fd) }
    guard fsync(fd) == 0 else { throw FileError(operation: "sync", path: directory, errno: errno) }
  }

  /// Replaces `path` atomically: writes `path.tmp`, syncs it and renames it over `path`, so a
  /// reader sees the old or the new text, never a mix. When the copy cannot be made (a full
  /// disk), the old file is left untouched and the temporary one removed.
  static func replace(_ path: String, with text: String) throws(FileError) {
    try replace(path, with: Array(text.utf8))
  }

  /// Replaces `path` atomically with `bytes` (an fMP4 initialization section), as above.
  static func replace(_ path: String, with bytes: [UInt8]) throws(FileError) {
    let temporary = path + ".tmp"
    do throws(FileError) {
      let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
      guard fd >= 0 else { throw FileError(operation: "create", path: temporary, errno: errno) }
      defer { _ = systemClose(fd) }
      do {
        try bytes.withUnsafeBytes { buffer in
          Result { () throws(Errno) in try FileDescriptor(rawValue: fd).writeAll(buffer) }
        }.get()
      } catch {
        throw FileError(operation: "write", path: temporary, errno: error.code)
      }
      guard fsync(fd) == 0 else {
        throw FileError(operation: "sync", path: temporary, errno: errno)
      }
      try rename(temporary, to: path)
    } catch {
      _ = unlink(temporary)
      throw error
    }
  }

  /// Writes all of `text` to `fd`.
  static func writeAll(_ fd: Int32, _ text: String, path: String) throws(FileError) {
    do { try FileDescriptor(rawValue: fd).writeAll(text) } catch {
      throw FileError(operation: "write", path: path, errno: error.code)
    }
  }

  /// Reads and parses a journal in fixed chunks; nil when there is no journal.
  static func readJournal(_ path: String) throws(FileError) -> HLSJournal? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    if fd < 0 {
      if errno == ENOENT { return nil }
      throw FileError(operation: "open", path: path, errno: errno)
    }
    defer { close(fd) }
    var journal = HLSJournal()
    var line: [UInt8] = []
    line.reserveCapacity(HLSJournal.maximumLineLength)
    var overlong = false
    var number = 0
    let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 1)
    defer { chunk.deallocate() }
    while true {
      let n: Int
      do { n = try FileDescriptor(rawValue: fd).read(into: chunk) } catch {
        throw FileError(operation: "read", path: path, errno: error.code)
      }
      if n == 0 { break }
      for byte in chunk[..<n] {
        if byte == 0x0A {
          number += 1
          if overlong {
            journal.issues.append(.init(line: number, reason: "line too long"))
          } else {
            journal.apply(line: Substring(String(decoding: line, as: UTF8.self)), number: number)
          }
          line.removeAll(keepingCapacity: true)
          overlong = false
        } else if line.count < HLSJournal.maximumLineLength {
          if !HLSJournal.isJournalByte(byte) { journal.hasForeignBytes = true }
          line.append(byte)
        } else {
          overlong = true
        }
      }
    }
    if !line.isEmpty || overlong {
      journal.issues.append(.init(line: number + 1, reason: "torn line (no newline)"))
      journal.endsWithTornLine = true
    }
    return journal
  }
}

/// An append-only text file whose every line is synced before `append` returns (the journal).
final class HLSAppendFile {
  let path: String
  private var fd: Int32

  /// Opens (or creates) `path` for appending.
  /// - Parameter refusingSymbolicLinks: fail with `ELOOP` when `path` is a symbolic link
  ///   (recovery, which must not append to a file outside the directory).
  init(path: String, refusingSymbolicLinks: Bool = false) throws(FileError) {
    self.path = path
    let noFollow = refusingSymbolicLinks ? O_NOFOLLOW : 0
    fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | noFollow, 0o644)
    guard fd >= 0 else { throw FileError(operation: "create", path: path, errno: errno) }
  }

  deinit { if fd >= 0 { _ = systemClose(fd) } }

  /// Appends `text` with one `write` (lines are short, so a kill cannot split them) and syncs.
  func append(_ text: String) throws(FileError) {
    guard fd >= 0 else { throw FileError(operation: "write", path: path, errno: EBADF) }
    try HLSFileSystem.writeAll(fd, text, path: path)
    guard fsync(fd) == 0 else { throw FileError(operation: "sync", path: path, errno: errno) }
  }

  func close() {
    if fd >= 0 { _ = systemClose(fd) }
    fd = -1
  }
}

private func systemRename(_ from: String, _ to: String) -> Int32 { rename(from, to) }
private func systemClose(_ fd: Int32) -> Int32 { close(fd) }
