import IngestCore
import IngestPOSIX

#if canImport(Glibc)
  import Glibc
#endif

/// The live encoder (`ingest-encode`) as a child process: its standard output is the dump stream
/// the run reads, its standard input takes the pipeline's requests as JSON lines, and its
/// standard error (JSON lines) is read on a thread of its own.
///
/// The child is outside the pipeline's memory, as VideoToolbox is outside the extension's: its
/// peak resident size is reported apart (`wait()`).
///
/// `@unchecked`: the stderr reader thread touches only `lines` (behind its lock) and the line
/// handler; the descriptors and the reader's handle are used by the owning thread alone.
public final class EncoderProcess: @unchecked Sendable {
  /// How the child ended.
  public struct Exit: Sendable, Equatable, CustomStringConvertible {
    /// The exit status, when it exited.
    public var status: Int32?
    /// The signal that ended it, when one did.
    public var signal: Int32?
    /// Its peak resident size (ru_maxrss), in bytes.
    public var peakResidentBytes: Int

    public var succeeded: Bool { status == 0 }

    public var description: String {
      if let status { return "exited with status \(status)" }
      if let signal { return "was killed by signal \(signal)" }
      return "ended"
    }
  }

  public let pid: pid_t
  /// The dump stream the child writes.
  public let output: FileByteSource
  private let requests: FileDescriptor
  private let errors: FileDescriptor
  private var reader: pthread_t?
  private let lines = HandOverLock<[String]>([])
  /// Called on the reader thread with each line the child writes to standard error.
  private let onLine: @Sendable (String) -> Void

  /// Where `ingest-encode` is: `INGEST_ENCODE_BIN`, else beside the running `ingest`.
  public static func locate() -> String {
    Executable.sibling("ingest-encode", overriddenBy: "INGEST_ENCODE_BIN")
  }

  /// Environment variables that carry an output's secret (`docs/secrets.md`).
  static let secretVariables = ["INGEST_SRT_PASSPHRASE", "INGEST_SRT_STREAMID", "INGEST_RTMP_KEY"]

  /// This process's environment entries (`NAME=value`, as they are: a value need not be
  /// UTF-8), the secret variables left out.
  static func environmentWithoutSecrets() -> [UnsafeMutablePointer<CChar>?] {
    let prefixes = secretVariables.map { Array(($0 + "=").utf8CString.dropLast()) }
    var entries: [UnsafeMutablePointer<CChar>?] = []
    var cursor: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?> = environ
    while let entry = cursor.pointee {
      let isSecret = prefixes.contains { prefix in strncmp(entry, prefix, prefix.count) == 0 }
      if !isSecret { entries.append(entry) }
      cursor += 1
    }
    return entries + [nil]
  }

  /// Starts `executable` with `arguments`.
  /// - Parameter onLine: each standard-error line of the child, on a reader thread.
  public init(
    executable: String, arguments: [String], onLine: @escaping @Sendable (String) -> Void
  ) throws(Errno) {
    var input: [Int32] = [-1, -1]
    var stdout: [Int32] = [-1, -1]
    var stderr: [Int32] = [-1, -1]
    guard pipe(&input) == 0 else { throw Errno(errno) }
    guard pipe(&stdout) == 0 else { throw Errno(errno) }
    guard pipe(&stderr) == 0 else { throw Errno(errno) }
    // Only the copies dup2'ed onto the child's 0, 1 and 2 may reach it.
    for fd in input + stdout + stderr { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, input[0], 0)
    posix_spawn_file_actions_adddup2(&actions, stdout[1], 1)
    posix_spawn_file_actions_adddup2(&actions, stderr[1], 2)
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    // The outputs' secrets stay in this process: the encoder needs none, and its
    // /proc/PID/environ would show them.
    let environment = Self.environmentWithoutSecrets()
    var child = pid_t()
    let spawned = posix_spawn(&child, executable, &actions, nil, argv, environment)
    for fd in [input[0], stdout[1], stderr[1]] { close(fd) }
    guard spawned == 0 else {
      for fd in [input[1], stdout[0], stderr[0]] { close(fd) }
      throw Errno(spawned)
    }
    pid = child
    // A child that stops reading requests must never block the sender thread.
    _ = fcntl(input[1], F_SETFL, fcntl(input[1], F_GETFL) | O_NONBLOCK)
    requests = FileDescriptor(rawValue: input[1])
    output = FileByteSource(descriptor: FileDescriptor(rawValue: stdout[0]), name: "encoder")
    errors = FileDescriptor(rawValue: stderr[0])
    self.onLine = onLine
    startReader()
  }

  deinit {
    requests.close()
    errors.close()
  }

  /// Sends one request as its line (`EncoderRequest.line`); dropped (and false) when the
  /// child's input pipe is full or gone.
  @discardableResult
  public func send(_ request: EncoderRequest) -> Bool {
    (try? requests.writeAll(request.line + "\n")) != nil
  }

  /// The last standard-error lines of the child (at most 20), for error messages.
  public var lastLines: [String] { lines.withLock { $0 } }

  /// Asks the child to stop (SIGTERM); it ends its stream cleanly.
  public func terminate() { kill(pid, SIGTERM) }

  /// Waits for the child to end and for its standard error to be read to the end.
  public func wait() -> Exit {
    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
    if let reader { pthread_join(reader, nil) }
    reader = nil
    let code = status & 0x7F
    return Exit(
      status: code == 0 ? (status >> 8) & 0xFF : nil, signal: code == 0 ? nil : code,
      peakResidentBytes: Int(usage.ru_maxrss) * 1024)
  }

  private func startReader() {
    reader = SystemThread.start { self.readErrors() }
  }

  private func readErrors() {
    var pending: [UInt8] = []
    let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
    defer { chunk.deallocate() }
    while let count = try? errors.read(into: chunk), count > 0 {
      for byte in chunk[..<count] {
        guard byte == 0x0A else {
          if pending.count < 64 << 10 { pending.append(byte) }
          continue
        }
        let line = String(decoding: pending, as: UTF8.self)
        pending.removeAll(keepingCapacity: true)
        lines.withLock { kept in
          if kept.count == 20 { kept.removeFirst() }
          kept.append(line)
        }
        onLine(line)
      }
    }
  }
}
