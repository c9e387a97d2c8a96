#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Whether two paths reach the same file, by device and inode: a hard link, a symbolic link or
/// another spelling of the path is the same file too. Used to refuse an output that would
/// overwrite an input.
public enum SameFileCheck {
  /// Whether `a` and `b` both exist and are the same file.
  public static func isSameFile(_ a: String, _ b: String) -> Bool {
    guard let first = identity(a), let second = identity(b) else { return false }
    return first == second
  }

  /// Whether `path` is an entry of `directory`, or the same file as one of its entries.
  public static func isInDirectory(_ path: String, _ directory: String) -> Bool {
    guard let file = identity(path), let folder = identity(directory) else { return false }
    let slash = path.lastIndex(of: "/")
    let parent = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
    if identity(parent) == folder { return true }
    guard let handle = SystemPath.withCString(directory, { opendir($0) }) else { return false }
    defer { closedir(handle) }
    while let entry = readdir(handle) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        SystemPath.string(decoding: raw.prefix(while: { $0 != 0 }))
      }
      if name != "." && name != "..",
        identity(directory + "/" + name) == file
      {
        return true
      }
    }
    return false
  }

  private struct Identity: Equatable {
    var device: UInt64
    var inode: UInt64
  }

  private static func identity(_ path: String) -> Identity? {
    var stats = stat()
    guard SystemPath.withCString(path, { stat($0, &stats) }) == 0 else { return nil }
    return Identity(device: UInt64(stats.st_dev), inode: UInt64(stats.st_ino))
  }
}
