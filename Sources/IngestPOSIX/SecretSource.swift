#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Where an output's secret (an SRT passphrase or stream id, an RTMP key) comes from when it is
/// not on the command line: a file or an environment variable, read as bytes. Each output checks
/// the bytes by its own rules; this only reads them.
public enum SecretSource {
  /// The content of the file at `path` without one trailing line end (`\n` or `\r\n`). At most
  /// `maximumBytes` + 3 bytes are read, so a wrong path (a device, a large file) costs nothing
  /// and a content one byte too long is still told from one that just fits.
  /// - Throws: the failed open or read, as the system's reason.
  public static func file(_ path: String, maximumBytes: Int) throws(Errno) -> [UInt8] {
    let fd = try FileDescriptor.open(path, O_RDONLY)
    defer { fd.close() }
    let limit = maximumBytes + 3
    var bytes = [UInt8](repeating: 0, count: limit)
    var count = 0
    while count < limit {
      let read = bytes.withUnsafeMutableBytes { buffer in
        Result { () throws(Errno) in
          try fd.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[count...]))
        }
      }
      let got = try read.get()
      if got == 0 { break }
      count += got
    }
    bytes.removeSubrange(count...)
    if bytes.last == 0x0A {
      bytes.removeLast()
      if bytes.last == 0x0D { bytes.removeLast() }
    }
    return bytes
  }

  /// The value of environment variable `name` in `variables` when given, else in the process's
  /// environment; nil when it is not set. As bytes: a variable need not be UTF-8, and repairing
  /// it would send another secret than the one set.
  public static func environment(_ name: String, in variables: [String: String]?) -> [UInt8]? {
    if let variables { return variables[name].map { Array($0.utf8) } }
    guard let value = getenv(name) else { return nil }
    return Array(UnsafeRawBufferPointer(start: value, count: strlen(value)))
  }
}
