import IngestCore
import IngestPOSIX

#if canImport(Glibc)
  import Glibc
#endif

/// `ingest-whip` as a child process: its standard input takes the dump stream (non-blocking:
/// a full pipe is the link's congestion, and the sender's ring absorbs it), its standard
/// output's JSON lines are read on a thread of its own, its standard error is the run's.
///
/// The reader thread touches only the line handler and `ended`; the input descriptor is used by
/// the sender's thread alone.
final class WHIPChild: Sendable {
  /// What the reader thread and the sender's thread share.
  private struct State {
    /// Whether the child closed its output.
    var ended = false
    /// Whether our end of the child's input was closed.
    var inputClosed = false
    /// The reader thread, until it is joined.
    var reader: pthread_t?
    /// How the child ended, once waited for.
    var waited: Subprocess.Exit?
  }

  private let process: Subprocess
  private let input: FileDescriptor
  private let output: FileDescriptor
  private let state = ConditionLock(State())

  /// Held from creating the pipes to closing the child's ends after the spawn.
  private static let spawnLock = ConditionLock()

  /// Where `ingest-whip` is: `INGEST_WHIP_BIN`, else beside the running `ingest`.
  static func locate() -> String {
    Executable.sibling("ingest-whip", overriddenBy: "INGEST_WHIP_BIN")
  }

  /// Environment variables that carry an output's secret (`docs/secrets.md`): none of them
  /// reaches the child but its own token.
  static let secretVariables = [
    "INGEST_SRT_PASSPHRASE", "INGEST_SRT_STREAMID", "INGEST_RTMP_KEY", WHIPTarget.tokenVariable,
  ]

  /// Starts `executable` for `endpoint`; the token, if any, goes into the child's environment
  /// (never its arguments, which `ps` shows to every user).
  /// - Parameter onLine: each standard-output line of the child, on the reader thread.
  init(
    executable: String, arguments: [String], token: String?,
    onLine: @escaping @Sendable (String) -> Void
  ) throws(Errno) {
    var stdin: [Int32] = [-1, -1]
    var stdout: [Int32] = [-1, -1]
    // Close-on-exec is set before any WHIP child is spawned: two outputs opening at once must
    // not hand each other's pipe ends to their children, or an end of input (or of output)
    // would never be seen. (Glibc's module has no pipe2.)
    Self.spawnLock.lock()
    defer { Self.spawnLock.unlock() }
    guard pipe(&stdin) == 0 else { throw Errno(errno) }
    guard pipe(&stdout) == 0 else {
      for fd in stdin { close(fd) }
      throw Errno(errno)
    }
    for fd in stdin + stdout { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    var environment = Self.environmentWithoutSecrets()
    var owned: UnsafeMutablePointer<CChar>?
    if let token {
      owned = strdup(WHIPTarget.tokenVariable + "=" + token)
      environment.insert(owned, at: 0)
    }
    defer {
      if let owned {
        // The token's copy is wiped before it is freed.
        memset(owned, 0, strlen(owned))
        free(owned)
      }
    }
    do {
      process = try Subprocess.spawn(
        executable, arguments: arguments, environment: environment + [nil],
        standardInput: .descriptor(FileDescriptor(rawValue: stdin[0])),
        standardOutput: .descriptor(FileDescriptor(rawValue: stdout[1])))
    } catch {
      for fd in stdin + stdout { close(fd) }
      throw error
    }
    close(stdin[0])
    close(stdout[1])
    _ = fcntl(stdin[1], F_SETFL, fcntl(stdin[1], F_GETFL) | O_NONBLOCK)
    input = FileDescriptor(rawValue: stdin[1])
    output = FileDescriptor(rawValue: stdout[0])
    let reader = SystemThread.start { [output, state] in
      Self.readLines(output, onLine: onLine)
      state.withLock { $0.ended = true }
      state.broadcast()
    }
    state.withLock { $0.reader = reader }
  }

  deinit {
    closeInput()
    output.close()
  }

  /// This process's environment entries without the secret variables.
  static func environmentWithoutSecrets() -> [UnsafeMutablePointer<CChar>?] {
    let prefixes = secretVariables.map { Array(($0 + "=").utf8CString.dropLast()) }
    var entries: [UnsafeMutablePointer<CChar>?] = []
    var cursor: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?> = environ
    while let entry = cursor.pointee {
      if !prefixes.contains(where: { strncmp(entry, $0, $0.count) == 0 }) { entries.append(entry) }
      cursor += 1
    }
    return entries
  }

  /// Writes what the pipe takes now of `bytes`, without blocking; the count taken.
  /// - Throws: the write's error (EPIPE: the child is gone).
  func writeSome(_ bytes: UnsafeRawBufferPointer) throws(Errno) -> Int {
    do { return try input.write(bytes) } catch {
      if error.code == EAGAIN || error.code == EWOULDBLOCK { return 0 }
      throw error
    }
  }

  /// Ends the child's input: it sends what it holds, deletes the session and exits.
  ///
  /// Once only: after the first close the number is free, and another thread (another output,
  /// a file being written) may already hold it. `deinit` closed it again after `finish`, which
  /// closes whatever was given that number in between: in the unit tests, which run side by
  /// side, another stand-in child's input.
  func closeInput() {
    let first = state.withLock { state in
      defer { state.inputClosed = true }
      return !state.inputClosed
    }
    if first { input.close() }
  }

  /// Whether the child closed its output (it exited, or is about to).
  var hasEnded: Bool { state.withLock { $0.ended } }

  /// Waits until the child's output ends or `deadline` (on `SystemClock`) passes.
  func waitForEnd(until deadline: MonotonicInstant) -> Bool {
    state.withConditions { locked in
      while !locked.state.ended { if !locked.wait(until: deadline) { return locked.state.ended } }
      return true
    }
  }

  func terminate() { process.kill(SIGTERM) }
  func kill() { process.kill(SIGKILL) }

  /// Waits for the child (once; later calls return the same exit).
  func wait() -> Subprocess.Exit {
    if let waited = state.withLock({ $0.waited }) { return waited }
    let exit = process.wait()
    if let reader = state.withLock({ $0.reader }) { pthread_join(reader, nil) }
    state.withLock {
      $0.reader = nil
      $0.waited = exit
    }
    return exit
  }

  private static func readLines(_ fd: FileDescriptor, onLine: (String) -> Void) {
    var pending: [UInt8] = []
    let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
    defer { chunk.deallocate() }
    while let count = try? fd.read(into: chunk), count > 0 {
      for byte in chunk[..<count] {
        guard byte == 0x0A else {
          if pending.count < 64 << 10 { pending.append(byte) }
          continue
        }
        onLine(String(decoding: pending, as: UTF8.self))
        pending.removeAll(keepingCapacity: true)
      }
    }
  }
}
