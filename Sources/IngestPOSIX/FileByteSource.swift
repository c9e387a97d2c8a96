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
  /// Asked while a read of a pipe, FIFO or terminal waits, at least every `pollMilliseconds`:
  /// true ends the wait as the end of the input. A run's stop signal must end a run whose input
  /// never comes (a stalled producer, a FIFO without a writer), and the handlers restart the
  /// system calls they interrupt.
  public var interrupted: (() -> Bool)?
  /// How long one wait of `interrupted`'s polling lasts.
  public static let pollMilliseconds: Int32 = 100

  /// Opens `path` read-only; `-` is standard input. A FIFO is opened without waiting for its
  /// writer (the wait is a read's, which `interrupted` ends).
  public init(path: String) throws(FileError) {
    self.path = path
    if path == "-" {
      descriptor = .standardInput
      owned = false
      return
    }
    do {
      let opened = try FileDescriptor.open(path, O_RDONLY | O_NONBLOCK)
      // Blocking again, so that the reads wait as reads of a file do; the open description is
      // ours alone.
      let flags = fcntl(opened.rawValue, F_GETFL)
      if flags >= 0 { _ = fcntl(opened.rawValue, F_SETFL, flags & ~O_NONBLOCK) }
      descriptor = opened
    } catch {
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

  /// Reads up to `buffer.count` bytes; 0 at end of file, or when `interrupted` says so while a
  /// read waits for input.
  public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
    guard let descriptor else { throw FileError(operation: "read", path: path, errno: EBADF) }
    if let interrupted, !readsRegularFile {
      var wait = pollfd(fd: descriptor.rawValue, events: Int16(POLLIN), revents: 0)
      while true {
        if interrupted() { return 0 }
        let ready = poll(&wait, 1, Self.pollMilliseconds)
        if ready > 0 { break }
        if ready < 0 && errno != EINTR {
          throw FileError(operation: "poll", path: path, errno: errno)
        }
      }
    }
    do { return try descriptor.read(into: buffer) } catch {
      throw FileError(operation: "read", path: path, errno: error.code)
    }
  }

  /// `isRegularFile`, found once.
  private lazy var readsRegularFile = isRegularFile

  /// Closes the file; later reads fail with EBADF.
  public func close() {
    if owned { descriptor?.close() }
    descriptor = nil
  }
}
