import IngestCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Reads a file, a FIFO or a pipe with read(2): no buffering of its own, since `DumpReader`
/// keeps the only buffer.
public final class FileByteSource: ByteSource {
  /// The path the file was opened with (`-` for standard input).
  public let path: String
  private var descriptor: FileDescriptor?
  private let owned: Bool

  /// Opens `path` read-only; `-` is standard input.
  public init(path: String) throws(FileError) {
    self.path = path
    if path == "-" {
      descriptor = .standardInput
      owned = false
      return
    }
    do { descriptor = try FileDescriptor.open(path, O_RDONLY) } catch {
      throw FileError(operation: "open", path: path, errno: error.code)
    }
    owned = true
  }

  /// Reads from an open descriptor (a pipe from a child process); `closes` says whether
  /// `close()` and deinit close it.
  public init(descriptor: FileDescriptor, name: String, closes: Bool = true) {
    path = name
    self.descriptor = descriptor
    owned = closes
  }

  deinit { close() }

  /// Whether the input is a regular file, which can be opened and read a second time (a FIFO,
  /// a pipe or a terminal is read once).
  public var isRegularFile: Bool {
    guard let descriptor else { return false }
    var status = stat()
    return fstat(descriptor.rawValue, &status) == 0 && status.st_mode & S_IFMT == S_IFREG
  }

  /// Reads up to `buffer.count` bytes; 0 at end of file.
  public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
    guard let descriptor else { throw FileError(operation: "read", path: path, errno: EBADF) }
    do { return try descriptor.read(into: buffer) } catch {
      throw FileError(operation: "read", path: path, errno: error.code)
    }
  }

  /// Closes the file; later reads fail with EBADF.
  public func close() {
    if owned { descriptor?.close() }
    descriptor = nil
  }
}
