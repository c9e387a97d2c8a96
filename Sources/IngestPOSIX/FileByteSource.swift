import IngestCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Reads a file with read(2): no buffering of its own, since `DumpReader` keeps the only buffer.
public final class FileByteSource: ByteSource {
  /// The path the file was opened with.
  public let path: String
  private var descriptor: Int32

  /// Opens `path` read-only.
  public init(path: String) throws(FileError) {
    self.path = path
    descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { throw FileError(operation: "open", path: path, errno: errno) }
  }

  deinit { close() }

  /// Reads up to `buffer.count` bytes; 0 at end of file.
  public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
    guard let base = buffer.baseAddress, !buffer.isEmpty else { return 0 }
    guard descriptor >= 0 else { throw FileError(operation: "read", path: path, errno: EBADF) }
    while true {
      #if canImport(Glibc)
        let count = Glibc.read(descriptor, base, buffer.count)
      #else
        let count = Darwin.read(descriptor, base, buffer.count)
      #endif
      if count >= 0 { return count }
      if errno == EINTR { continue }
      throw FileError(operation: "read", path: path, errno: errno)
    }
  }

  /// Closes the file; later reads fail with EBADF.
  public func close() {
    guard descriptor >= 0 else { return }
    #if canImport(Glibc)
      _ = Glibc.close(descriptor)
    #else
      _ = Darwin.close(descriptor)
    #endif
    descriptor = -1
  }
}
