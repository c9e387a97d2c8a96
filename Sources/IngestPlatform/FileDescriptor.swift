#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// An open file descriptor, and the one place where system calls are retried after EINTR.
///
/// A value type over the number: the owner decides when to `close` (files, pipes, a child's
/// standard streams). Every call returns the system's `errno` on failure, never -1.
public struct FileDescriptor: Hashable, Sendable {
  /// The descriptor number.
  public let rawValue: Int32

  public init(rawValue: Int32) { self.rawValue = rawValue }

  public static let standardInput = FileDescriptor(rawValue: 0)
  public static let standardOutput = FileDescriptor(rawValue: 1)
  public static let standardError = FileDescriptor(rawValue: 2)

  /// Runs `call` again while it fails with EINTR; `failed` says which results are failures.
  /// - Returns: the first result that is not a failure, or the failure's errno.
  @inlinable
  public static func retryingOnInterrupt<Result>(
    _ call: () -> Result, failed: (Result) -> Bool
  ) -> Swift.Result<Result, Errno> {
    while true {
      let result = call()
      guard failed(result) else { return .success(result) }
      let code = errno
      if code != EINTR { return .failure(Errno(code)) }
    }
  }

  /// Runs `call`, which returns an error number instead of setting `errno` (`clock_nanosleep`,
  /// the pthread calls), again while it returns EINTR.
  /// - Returns: nil on success, else the error number the call returned.
  @inlinable
  public static func retryingOnInterrupt(returningError call: () -> Int32) -> Errno? {
    while true {
      let code = call()
      if code == 0 { return nil }
      if code != EINTR { return Errno(code) }
    }
  }

  /// Opens `path` (`O_CLOEXEC` is always added; a `SystemPath` string opens its own bytes).
  public static func open(_ path: String, _ flags: Int32, permissions: mode_t = 0o644) throws(Errno)
    -> FileDescriptor
  {
    let opened = retryingOnInterrupt(
      { systemOpen(path, flags | O_CLOEXEC, permissions) }, failed: { $0 < 0 })
    return FileDescriptor(rawValue: try opened.get())
  }

  /// Reads up to `buffer.count` bytes; 0 at end of file.
  public func read(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
    guard let base = buffer.baseAddress, !buffer.isEmpty else { return 0 }
    return try Self.retryingOnInterrupt(
      { systemRead(rawValue, base, buffer.count) }, failed: { $0 < 0 }
    ).get()
  }

  /// Writes what one write(2) takes; may be less than `bytes.count`.
  public func write(_ bytes: UnsafeRawBufferPointer) throws(Errno) -> Int {
    guard let base = bytes.baseAddress, !bytes.isEmpty else { return 0 }
    return try Self.retryingOnInterrupt(
      { systemWrite(rawValue, base, bytes.count) }, failed: { $0 < 0 }
    ).get()
  }

  /// Writes every byte, across short writes.
  public func writeAll(_ bytes: UnsafeRawBufferPointer) throws(Errno) {
    var offset = 0
    while offset < bytes.count {
      offset += try write(UnsafeRawBufferPointer(rebasing: bytes[offset...]))
    }
  }

  /// Writes every byte of `text`'s UTF-8.
  public func writeAll(_ text: String) throws(Errno) {
    var failure: Errno?
    Array(text.utf8).withUnsafeBytes { raw in
      do throws(Errno) { try writeAll(raw) } catch { failure = error }
    }
    if let failure { throw failure }
  }

  /// Asks the kernel to put the file's data on stable storage.
  public func sync() throws(Errno) {
    _ = try Self.retryingOnInterrupt({ fsync(rawValue) }, failed: { $0 != 0 }).get()
  }

  /// Closes the descriptor. Not retried after EINTR: on Linux the descriptor is gone either way,
  /// and a retry could close one that another thread has just been given.
  public func close() {
    _ = systemClose(rawValue)
  }
}

/// A system error number, with the system's text for it.
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
  public let code: Int32

  public init(_ code: Int32) { self.code = code }

  public var description: String { String(cString: strerror(code)) }
}

// The C calls under other names, so the methods above can have the natural ones.
private func systemOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
  SystemPath.withCString(path) { open($0, flags, mode) }
}
private func systemRead(_ fd: Int32, _ base: UnsafeMutableRawPointer, _ count: Int) -> Int {
  read(fd, base, count)
}
private func systemWrite(_ fd: Int32, _ base: UnsafeRawPointer, _ count: Int) -> Int {
  write(fd, base, count)
}
private func systemClose(_ fd: Int32) -> Int32 { close(fd) }
