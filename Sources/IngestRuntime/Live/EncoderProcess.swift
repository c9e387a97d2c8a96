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

  private let process: Subprocess
  public var pid: pid_t { process.pid }
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

  /// Environment variables that carry an output's secret (`docs/secrets.md`): every one, the
  /// WHIP token included; the encoder needs none of them.
  static let secretVariables = OutputSecrets.variables

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
    // The outputs' secrets stay in this process: the encoder needs none, and its
    // /proc/PID/environ would show them.
    do {
      process = try Subprocess.spawn(
        executable, arguments: arguments, environment: Self.environmentWithoutSecrets(),
        standardInput: .descriptor(FileDescriptor(rawValue: input[0])),
        standardOutput: .descriptor(FileDescriptor(rawValue: stdout[1])),
        standardError: .descriptor(FileDescriptor(rawValue: stderr[1])))
    } catch {
      for fd in input + stdout + stderr { close(fd) }
      throw error
    }
    for fd in [input[0], stdout[1], stderr[1]] { close(fd) }
    // A child that stops reading requests must never block the sender thread.
    _ = fcntl(input[1], F_SETFL, fcntl(input[1], F_GETFL) | O_NONBLOCK)
    requests = FileDescriptor(rawValue: input[1])
    output = FileByteSource(descriptor: FileDescriptor(rawValue: stdout[0]), name: "encoder")
    // A stopped (or hung) encoder writes nothing: the run's stop must still end the read.
    output.interrupted = { StopSignal.requested != nil }
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

  /// Asks the child to stop (SIGTERM; it ends its stream cleanly) and closes the read end of
  /// its stream, for when the run reads no more of it. A child blocked writing into the full
  /// pipe would never see the SIGTERM (the write is restarted after the handler); with the read
  /// end closed the write fails with EPIPE, which the encoder takes as the end of its run, not
  /// a failure.
  public func stop() {
    process.kill(SIGTERM)
    output.close()
  }

  /// How long the child may take to end after `stop` before it is killed: ending its stream
  /// takes it well under a second; a stopped (SIGSTOP) or hung one never would.
  public static let endTimeout: TimeSpan = .seconds(5)

  /// Waits for the child to end (killing it after `endTimeout`) and for its standard error
  /// to be read to the end.
  public func wait() -> Exit {
    let (ended, killed) = process.wait(killingAfter: Self.endTimeout)
    if killed {
      lines.withLock { kept in
        kept.append("ingest: the encoder did not end within 5 s of being asked to; killed")
      }
    }
    if let reader { pthread_join(reader, nil) }
    reader = nil
    return Exit(
      status: ended.status, signal: ended.signal, peakResidentBytes: ended.peakResidentBytes)
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
