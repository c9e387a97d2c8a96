import IngestCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The one way this package starts a program (the live encoder, a benchmark's tools): posix_spawn
/// with the child's standard streams set, and `wait4` for how it ended and what it cost.
public struct Subprocess: Sendable {
  /// Where one of the child's standard streams goes.
  public enum Stream: Sendable {
    /// The parent's.
    case inherit
    /// /dev/null.
    case null
    /// A descriptor of the parent's (a pipe's end), duplicated onto the stream in the child.
    case descriptor(FileDescriptor)
  }

  /// How a child ended and what the kernel measured of it.
  public struct Exit: Sendable, Equatable {
    /// The exit status, when it exited.
    public var status: Int32?
    /// The signal that ended it, when one did.
    public var signal: Int32?
    /// Its peak resident size (ru_maxrss), in bytes.
    public var peakResidentBytes: Int
    /// User plus system CPU time, in seconds.
    public var cpuSeconds: Double
  }

  /// The child's process id.
  public let pid: pid_t

  /// Starts `path` with `arguments` (`argv[0]` is `path`).
  /// - Parameters:
  ///   - environment: the child's `NAME=value` entries, nil-terminated, as raw C strings (a
  ///     value need not be UTF-8); nil passes the parent's environment.
  /// - Throws: the error posix_spawn returned.
  public static func spawn(
    _ path: String, arguments: [String],
    environment: [UnsafeMutablePointer<CChar>?]? = nil,
    standardInput: Stream = .inherit, standardOutput: Stream = .inherit,
    standardError: Stream = .inherit
  ) throws(Errno) -> Subprocess {
    // Darwin's posix_spawn_file_actions_t is a pointer that the init call fills in.
    #if canImport(Darwin)
      var actions: posix_spawn_file_actions_t?
    #else
      var actions = posix_spawn_file_actions_t()
    #endif
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    for (target, stream) in [(0, standardInput), (1, standardOutput), (2, standardError)] {
      switch stream {
      case .inherit: break
      case .null:
        posix_spawn_file_actions_addopen(
          &actions, Int32(target), "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
      case .descriptor(let descriptor):
        posix_spawn_file_actions_adddup2(&actions, descriptor.rawValue, Int32(target))
      }
    }
    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid = pid_t()
    let spawned: Int32
    if let environment {
      spawned = posix_spawn(&pid, path, &actions, nil, argv, environment)
    } else {
      spawned = posix_spawn(&pid, path, &actions, nil, argv, environ)
    }
    guard spawned == 0 else { throw Errno(spawned) }
    return Subprocess(pid: pid)
  }

  /// Sends `signal` to the child.
  public func kill(_ signal: Int32) { _ = systemKill(pid, signal) }

  /// Waits for the child to end (reaping it).
  public func wait() -> Exit {
    var status: Int32 = 0
    var usage = rusage()
    _ = FileDescriptor.retryingOnInterrupt({ wait4(pid, &status, 0, &usage) }, failed: { $0 < 0 })
    return Self.exit(status: status, usage: usage)
  }

  /// Waits for the child to end, at most `timeout`; then kills it (SIGKILL, which also
  /// ends a stopped child, one that a SIGTERM waits for) and reaps it. `killed` says whether
  /// it had to be.
  public func wait(killingAfter timeout: TimeSpan) -> (exit: Exit, killed: Bool) {
    let deadline = SystemClock().now() + timeout
    var status: Int32 = 0
    var usage = rusage()
    while SystemClock().now() < deadline {
      let ended = wait4(pid, &status, WNOHANG, &usage)
      if ended == pid { return (Self.exit(status: status, usage: usage), false) }
      if ended < 0 && errno != EINTR { return (wait(), false) }
      var pause = timespec(TimeSpan.milliseconds(20))
      nanosleep(&pause, nil)
    }
    kill(SIGKILL)
    return (wait(), true)
  }

  private static func exit(status: Int32, usage: rusage) -> Exit {
    let signal = status & 0x7F
    let cpu =
      Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
      + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    // ru_maxrss is in kilobytes on Linux and in bytes on Darwin.
    #if canImport(Darwin)
      let peak = Int(usage.ru_maxrss)
    #else
      let peak = Int(usage.ru_maxrss) * 1024
    #endif
    return Exit(
      status: signal == 0 ? (status >> 8) & 0xFF : nil, signal: signal == 0 ? nil : signal,
      peakResidentBytes: peak, cpuSeconds: cpu)
  }
}

private func systemKill(_ pid: pid_t, _ signal: Int32) -> Int32 { kill(pid, signal) }
