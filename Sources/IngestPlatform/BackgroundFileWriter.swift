import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A file written from a thread of its own, through a few fixed buffers (entered in the memory
/// ledger by the owner): the caller copies bytes into one buffer while the thread hands a full
/// one to write(2).
///
/// The `.ts` output writes hundreds of megabytes at `--speed max`; the kernel's copy into the
/// page cache is then about a quarter of a replay's time. Done here, it overlaps with reading,
/// checking and packetizing the next samples on the replay thread.
///
/// A failed write(2) (a full disk) is kept by the thread, and the next `write`, `flush` or
/// `close` that hands it a buffer throws it; the bytes after the failure are dropped.
/// `bytesStored` says what reached the file either way.
///
/// Not for several threads: one thread makes all calls (the sender's); the writing thread is
/// the object's own.
public final class BackgroundFileWriter {
  /// The path as given (for messages).
  public let path: String
  /// Bytes of each buffer.
  public let bufferCapacity: Int
  private let descriptor: FileDescriptor
  private let buffers: [UnsafeMutableRawBufferPointer]
  /// Bytes in each buffer, set before it is handed over.
  private var lengths: [Int]
  /// The buffer being filled and how much of it is.
  private var current = 0
  private var filled = 0
  private var closed = false
  private var thread: pthread_t?
  private let stored = Atomic<Int64>(0)
  /// Bytes handed to `write` so far.
  public private(set) var bytesWritten: Int64 = 0

  // Under `lock`: the buffers handed over (`queued` of them from `next`), the end request and
  // the thread's first error.
  private let lock = ConditionLock()
  private var next = 0
  private var queued = 0
  private var stopping = false
  private var failure: FileError?
  /// Asked every 100 ms while a write waits for a reader: true gives the write up.
  private let abandoned: @Sendable () -> Bool
  /// Whether the file is a pipe, FIFO, socket or terminal: its writes can wait forever for a
  /// reader, so they do not block (O_NONBLOCK on our own open description) but poll, and
  /// `abandoned` ends the wait.
  private let waitsForReader: Bool

  /// Creates or truncates `path` and starts the writing thread.
  /// - Parameters:
  ///   - bufferCapacity: bytes of each buffer.
  ///   - bufferCount: buffers (two or more): one is filled while the others wait or are written.
  /// - Throws: `FileError` naming the path and the system's reason.
  ///   - abandoned: asked while a write waits for a reader that takes nothing (a pipe nobody
  ///     reads): true makes it, and every later write, fail with EPIPE, dropping the rest. A
  ///     stopped run whose drain time is over says so, so that it ends.
  public init(
    path: String, bufferCapacity: Int = 256 << 10, bufferCount: Int = 2,
    abandoned: @escaping @Sendable () -> Bool = { false }
  ) throws(FileError) {
    precondition(bufferCapacity > 0 && bufferCount >= 2)
    self.path = path
    self.abandoned = abandoned
    self.bufferCapacity = bufferCapacity
    do {
      descriptor = try FileDescriptor.open(path, O_WRONLY | O_CREAT | O_TRUNC)
    } catch {
      throw FileError(operation: "create", path: path, errno: error.code)
    }
    var status = stat()
    waitsForReader =
      fstat(descriptor.rawValue, &status) == 0 && status.st_mode & S_IFMT != S_IFREG
    if waitsForReader {
      let flags = fcntl(descriptor.rawValue, F_GETFL)
      if flags >= 0 { _ = fcntl(descriptor.rawValue, F_SETFL, flags | O_NONBLOCK) }
    }
    buffers = (0..<bufferCount).map { _ in
      .allocate(byteCount: bufferCapacity, alignment: 4096)
    }
    lengths = [Int](repeating: 0, count: bufferCount)
    // Unretained: `close` (also from `deinit`) joins the thread before the writer goes.
    thread = SystemThread.start { [unowned(unsafe) self] in self.run() }
    if thread == nil {
      // No thread to write with: the calls write themselves (see `hand`).
      stopping = true
    }
  }

  deinit {
    if !closed { try? close() }
    for buffer in buffers { buffer.deallocate() }
  }

  /// Bytes the file took (write(2) accepted them); less than `bytesWritten` while some wait in
  /// the buffers, or after a failed write such as a full disk. Readable at any time.
  public var bytesStored: Int64 { stored.load(ordering: .acquiring) }

  /// Appends bytes; they reach the file when their buffer fills, on `flush` or on `close`.
  /// - Throws: the error of an earlier write(2), once a full buffer is handed over.
  public func write(_ bytes: UnsafeRawBufferPointer) throws(FileError) {
    guard !closed else { throw FileError(operation: "write", path: path, errno: EBADF) }
    bytesWritten += Int64(bytes.count)
    var offset = 0
    while offset < bytes.count {
      let count = min(bufferCapacity - filled, bytes.count - offset)
      UnsafeMutableRawBufferPointer(rebasing: buffers[current][filled..<filled + count])
        .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count]))
      filled += count
      offset += count
      if filled == bufferCapacity { try hand(waitForAll: false) }
    }
  }

  /// Writes what the buffers hold and waits until the file took it.
  public func flush() throws(FileError) {
    guard !closed else { return }
    try hand(waitForAll: true)
  }

  /// Flushes and asks the kernel to put the data on stable storage.
  public func sync() throws(FileError) {
    try flush()
    do { try descriptor.sync() } catch {
      throw FileError(operation: "sync", path: path, errno: error.code)
    }
  }

  /// Flushes, ends the thread and closes the file; later writes fail.
  public func close() throws(FileError) {
    guard !closed else { return }
    defer {
      closed = true
      lock.withLock {
        stopping = true
        lock.broadcast()
      }
      if let thread { pthread_join(thread, nil) }
      thread = nil
      descriptor.close()
    }
    try hand(waitForAll: true)
  }

  /// Hands the buffer being filled (if it holds anything) to the thread and waits until a buffer
  /// is free to fill, or, with `waitForAll`, until every one was written.
  /// - Throws: the thread's first write error.
  private func hand(waitForAll: Bool) throws(FileError) {
    if thread == nil {
      // Without a thread, write here.
      if filled > 0 { writeOut(UnsafeRawBufferPointer(rebasing: buffers[current][..<filled])) }
      filled = 0
      if let failure { throw failure }
      return
    }
    lock.lock()
    defer { lock.unlock() }
    if filled > 0 {
      lengths[current] = filled
      queued += 1
      lock.broadcast()
      current = (current + 1) % buffers.count
      filled = 0
    }
    let most = waitForAll ? 0 : buffers.count - 1
    while queued > most { lock.wait() }
    if let failure { throw failure }
  }

  /// The thread: writes each buffer handed over, in order, until `close`.
  private func run() {
    lock.lock()
    while true {
      while queued == 0 && !stopping { lock.wait() }
      if queued == 0 { break }
      let bytes = UnsafeRawBufferPointer(rebasing: buffers[next][..<lengths[next]])
      let failed = failure != nil
      lock.unlock()
      // After a failure the rest is dropped: the file would have a hole.
      if !failed { writeOut(bytes) }
      lock.lock()
      next = (next + 1) % buffers.count
      queued -= 1
      lock.broadcast()
    }
    lock.unlock()
  }

  /// Writes `bytes` whole, counting what the file took; keeps the first error.
  private func writeOut(_ bytes: UnsafeRawBufferPointer) {
    var offset = 0
    while offset < bytes.count {
      let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
      let count: Int
      do { count = try descriptor.write(rest) } catch {
        if waitsForReader && error.code == EAGAIN && awaitReader() { continue }
        let code = error.code == EAGAIN ? EPIPE : error.code
        lock.withLock {
          if failure == nil { failure = FileError(operation: "write", path: path, errno: code) }
        }
        return
      }
      offset += count
      stored.add(Int64(count), ordering: .releasing)
    }
  }

  /// Waits until the reader takes bytes again, asking `abandoned` every 100 ms.
  /// - Returns: false when abandoned.
  private func awaitReader() -> Bool {
    var wait = pollfd(fd: descriptor.rawValue, events: Int16(POLLOUT), revents: 0)
    while !abandoned() {
      // POLLERR or POLLHUP (the reader went) come back too: the write then says EPIPE.
      if poll(&wait, 1, 100) != 0 { return true }
    }
    return false
  }
}
