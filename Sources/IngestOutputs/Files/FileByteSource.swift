import IngestCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A file failed to open, read, write or sync; names the path and the system's reason.
public struct FileIOError: Error, Equatable, Sendable, CustomStringConvertible {
  /// What was attempted.
  public enum Operation: String, Sendable {
    case open, read, write, sync, close
  }
  /// What was attempted.
  public var operation: Operation
  /// The file concerned.
  public var path: String
  /// The errno value.
  public var code: Int32

  public init(_ operation: Operation, path: String, code: Int32) {
    self.operation = operation
    self.path = path
    self.code = code
  }

  public var description: String {
    "cannot \(operation.rawValue) \(path): \(String(cString: strerror(code)))"
  }
}

/// Reads a file with read(2): no buffering of its own, since `DumpReader` keeps the only buffer.
public final class FileByteSource: ByteSource {
  /// The path the file was opened with.
  public let path: String
  private var descriptor: Int32

  /// Opens `path` read-only.
  public init(path: String) throws(FileIOError) {
    self.path = path
    descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { throw FileIOError(.open, path: path, code: errno) }
  }

  deinit { close() }

  /// Reads up to `buffer.count` bytes; 0 at end of file.
  public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
    guard let base = buffer.baseAddress, !buffer.isEmpty else { return 0 }
    guard descriptor >= 0 else { throw FileIOError(.read, path: path, code: EBADF) }
    while true {
      #if canImport(Glibc)
        let count = Glibc.read(descriptor, base, buffer.count)
      #else
        let count = Darwin.read(descriptor, base, buffer.count)
      #endif
      if count >= 0 { return count }
      if errno == EINTR { continue }
      throw FileIOError(.read, path: path, code: errno)
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
