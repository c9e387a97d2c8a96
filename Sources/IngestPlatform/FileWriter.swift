import IngestCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A file written through one fixed buffer (entered in the memory ledger by its owner): `.ts`
/// outputs, HLS segments and dumps (as the dump writer's `ByteSink`).
public final class FileWriter: ByteSink {
  /// The path as given (for messages).
  public let path: String
  /// Bytes of the write buffer.
  public let bufferCapacity: Int
  private var fd: Int32
  private let buffer: UnsafeMutableRawBufferPointer
  private var buffered = 0
  /// Bytes handed to `write` so far.
  public private(set) var bytesWritten: Int64 = 0
  /// Bytes the file took (write(2) accepted them); less than `bytesWritten` while some wait in
  /// the buffer, or after a failed write such as a full disk.
  public private(set) var bytesStored: Int64 = 0

  /// Creates or truncates `path`.
  /// - Parameters:
  ///   - truncate: empties the file; false appends to it.
  ///   - exclusive: takes an exclusive advisory lock (`flock`) on the file, held until it is
  ///     closed, before truncating anything: a second writer (or `ingest recover`) is refused
  ///     with the file as it was. The kernel drops the lock when the process ends in any way,
  ///     so a killed run leaves none behind.
  /// - Throws: `FileError` naming the path and the system's reason; `isLockedByAnother` when
  ///   another open file holds the lock.
  public init(
    path: String, bufferCapacity: Int = 64 << 10, truncate: Bool = true, exclusive: Bool = false
  ) throws(FileError) {
    self.path = path
    self.bufferCapacity = bufferCapacity
    // With the lock, the file is truncated only once it is held: O_TRUNC would empty the file
    // another run is writing.
    let truncation = truncate && !exclusive ? O_TRUNC : truncate ? 0 : O_APPEND
    let flags = O_WRONLY | O_CREAT | O_CLOEXEC | truncation
    let fd = SystemPath.withCString(path) { open($0, flags, 0o644) }
    guard fd >= 0 else { throw FileError(operation: "create", path: path, errno: errno) }
    if exclusive {
      let locked = FileDescriptor.retryingOnInterrupt(
        { flock(fd, LOCK_EX | LOCK_NB) }, failed: { $0 != 0 })
      if case .failure(let error) = locked {
        _ = systemClose(fd)
        throw FileError(operation: "lock", path: path, errno: error.code)
      }
      if truncate && ftruncate(fd, 0) != 0 {
        let code = errno
        _ = systemClose(fd)
        throw FileError(operation: "truncate", path: path, errno: code)
      }
    }
    self.fd = fd
    buffer = .allocate(byteCount: bufferCapacity, alignment: 16)
  }

  deinit {
    if fd >= 0 { _ = systemClose(fd) }
    buffer.deallocate()
  }

  /// Appends bytes; they reach the file when the buffer fills, on `flush` or on `close`.
  public func write(_ bytes: UnsafeRawBufferPointer) throws(FileError) {
    guard fd >= 0 else { throw FileError(operation: "write", path: path, errno: EBADF) }
    bytesWritten += Int64(bytes.count)
    if buffered + bytes.count > bufferCapacity { try flush() }
    if bytes.count >= bufferCapacity {
      try writeFully(bytes)
      return
    }
    UnsafeMutableRawBufferPointer(rebasing: buffer[buffered..<buffered + bytes.count]).copyMemory(
      from: bytes)
    buffered += bytes.count
  }

  /// Writes the buffer to the file.
  public func flush() throws(FileError) {
    guard buffered > 0 else { return }
    let pending = UnsafeRawBufferPointer(rebasing: buffer[..<buffered])
    buffered = 0
    try writeFully(pending)
  }

  /// Flushes and asks the kernel to put the data on stable storage.
  public func sync() throws(FileError) {
    try flush()
    guard fsync(fd) == 0 else { throw FileError(operation: "sync", path: path, errno: errno) }
  }

  /// Flushes and closes; later writes fail.
  public func close() throws(FileError) {
    guard fd >= 0 else { return }
    defer {
      _ = systemClose(fd)
      fd = -1
    }
    try flush()
  }

  private func writeFully(_ bytes: UnsafeRawBufferPointer) throws(FileError) {
    var offset = 0
    while offset < bytes.count {
      let n: Int
      do {
        n = try FileDescriptor(rawValue: fd).write(
          UnsafeRawBufferPointer(rebasing: bytes[offset...]))
      } catch {
        throw FileError(operation: "write", path: path, errno: error.code)
      }
      offset += n
      bytesStored += Int64(n)
    }
  }
}

private func systemClose(_ fd: Int32) -> Int32 { close(fd) }

/// A failed file operation: which, on what path, and the system's reason.
public struct FileError: Error, Equatable, Sendable, CustomStringConvertible {
  public var operation: String
  public var path: String
  public var errno: Int32

  public init(operation: String, path: String, errno: Int32) {
    self.operation = operation
    self.path = path
    self.errno = errno
  }

  /// Whether the device is full (a case callers may treat specially).
  public var isDiskFull: Bool { errno == ENOSPC || errno == EDQUOT }

  /// Whether an exclusive lock was refused because another open file holds it (a run writing
  /// the file).
  public var isLockedByAnother: Bool { operation == "lock" && errno == EWOULDBLOCK }

  public var description: String {
    "cannot \(operation) \(SystemPath.display(path)): \(String(cString: strerror(errno)))"
  }
}
