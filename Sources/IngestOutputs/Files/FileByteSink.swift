import IngestCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Writes a file with write(2), collecting small writes (record headers, CRCs) in a fixed buffer so
/// each record costs about one system call.
public final class FileByteSink: ByteSink {
  /// The path the file was created at.
  public let path: String
  /// Whether `close()` calls fsync(2) before closing.
  public let syncOnClose: Bool
  private var descriptor: Int32
  private let buffer: UnsafeMutableRawBufferPointer
  private var buffered = 0

  /// Creates or truncates `path` (mode 0644).
  /// - Parameters:
  ///   - bufferSize: bytes collected before a write(2); larger writes bypass the buffer.
  ///   - syncOnClose: fsync the file in `close()` so it survives a power loss.
  public init(path: String, bufferSize: Int = 64 * 1024, syncOnClose: Bool = false)
    throws(FileIOError)
  {
    self.path = path
    self.syncOnClose = syncOnClose
    descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else { throw FileIOError(.open, path: path, code: errno) }
    buffer = .allocate(byteCount: max(bufferSize, 1), alignment: 16)
  }

  deinit {
    try? close()
    buffer.deallocate()
  }

  /// Appends `bytes` to the file (through the buffer when they fit in it).
  public func write(_ bytes: UnsafeRawBufferPointer) throws {
    try append(bytes)
  }

  private func append(_ bytes: UnsafeRawBufferPointer) throws(FileIOError) {
    guard descriptor >= 0 else { throw FileIOError(.write, path: path, code: EBADF) }
    if buffered + bytes.count > buffer.count { try flush() }
    if bytes.count >= buffer.count {
      try writeFully(bytes)
    } else if !bytes.isEmpty {
      UnsafeMutableRawBufferPointer(rebasing: buffer[buffered..<buffered + bytes.count])
        .copyMemory(from: bytes)
      buffered += bytes.count
    }
  }

  /// Writes buffered bytes to the file.
  public func flush() throws(FileIOError) {
    guard buffered > 0 else { return }
    let count = buffered
    buffered = 0
    try writeFully(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
  }

  /// Flushes, optionally fsyncs, and closes. Safe to call twice.
  public func close() throws(FileIOError) {
    guard descriptor >= 0 else { return }
    defer {
      #if canImport(Glibc)
        _ = Glibc.close(descriptor)
      #else
        _ = Darwin.close(descriptor)
      #endif
      descriptor = -1
    }
    try flush()
    if syncOnClose, fsync(descriptor) != 0 { throw FileIOError(.sync, path: path, code: errno) }
  }

  private func writeFully(_ bytes: UnsafeRawBufferPointer) throws(FileIOError) {
    guard let base = bytes.baseAddress else { return }
    var offset = 0
    while offset < bytes.count {
      #if canImport(Glibc)
        let count = Glibc.write(descriptor, base + offset, bytes.count - offset)
      #else
        let count = Darwin.write(descriptor, base + offset, bytes.count - offset)
      #endif
      if count < 0 {
        if errno == EINTR { continue }
        throw FileIOError(.write, path: path, code: errno)
      }
      offset += count
    }
  }
}
