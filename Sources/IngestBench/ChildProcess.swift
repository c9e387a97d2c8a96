import IngestPOSIX

#if canImport(Glibc)
  import Glibc
#endif

/// Runs a program to completion with posix_spawn and reports what the kernel measured of it:
/// wall time, CPU time and peak resident memory (`wait4`'s rusage), plus its standard output.
public enum ChildProcess {
  /// How a child finished and what it cost.
  public struct Outcome: Sendable {
    /// The exit status, or 128 + signal number when killed.
    public var status: Int32
    public var stdout: String
    public var wallSeconds: Double
    /// User plus system CPU time.
    public var cpuSeconds: Double
    /// Peak resident memory from the kernel (ru_maxrss), bytes.
    public var peakResident: Int
  }

  /// Failure to start a child.
  public struct SpawnError: Error, Sendable, CustomStringConvertible {
    public var program: String
    public var code: Int32
    public var description: String { "cannot run \(program): \(String(cString: strerror(code)))" }
  }

  /// Where the child's standard streams go.
  public enum Output: Sendable {
    /// Read by the parent (standard output only).
    case capture
    /// Inherited from the parent.
    case inherit
    /// /dev/null.
    case discard
  }

  /// Runs `program` (a path, or a name searched on PATH) with `arguments`.
  /// - Parameters:
  ///   - environment: the child's environment; nil passes the parent's.
  public static func run(
    _ program: String, _ arguments: [String], stdout: Output = .discard, stderr: Output = .inherit,
    environment: [String]? = nil
  ) throws(SpawnError) -> Outcome {
    guard let path = resolve(program) else { throw SpawnError(program: program, code: ENOENT) }
    var pipeFDs: [Int32] = [-1, -1]
    if case .capture = stdout {
      guard pipe(&pipeFDs) == 0 else { throw SpawnError(program: program, code: errno) }
      // Neither end may leak into other children; dup2 onto fd 1 clears the flag in this child.
      for fd in pipeFDs { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    switch stdout {
    case .capture: posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 1)
    case .discard: posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    case .inherit: break
    }
    switch stderr {
    case .discard: posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    case .capture, .inherit: break
    }
    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    let envp = environment.map { $0.map { strdup($0) } + [nil] }
    defer { for pointer in envp ?? [] { free(pointer) } }
    var pid = pid_t()
    let began = SystemClock().now()
    let spawned: Int32
    if let envp {
      spawned = posix_spawn(&pid, path, &actions, nil, argv, envp)
    } else {
      spawned = posix_spawn(&pid, path, &actions, nil, argv, environ)
    }
    if pipeFDs[1] >= 0 { close(pipeFDs[1]) }
    guard spawned == 0 else {
      if pipeFDs[0] >= 0 { close(pipeFDs[0]) }
      throw SpawnError(program: program, code: spawned)
    }
    var output: [UInt8] = []
    if pipeFDs[0] >= 0 {
      var chunk = [UInt8](repeating: 0, count: 65536)
      while true {
        let count = chunk.withUnsafeMutableBytes { read(pipeFDs[0], $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        if count <= 0 { break }
        output.append(contentsOf: chunk[..<count])
      }
      close(pipeFDs[0])
    }
    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
    let wall = Double(SystemClock().now() - began) / 1e9
    let cpu =
      Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
      + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    let signal = status & 0x7F
    return Outcome(
      status: signal == 0 ? (status >> 8) & 0xFF : 128 + signal,
      stdout: String(decoding: output, as: UTF8.self), wallSeconds: wall, cpuSeconds: cpu,
      peakResident: Int(usage.ru_maxrss) * 1024)
  }

  /// The path of `program`: itself when it names a path, else the first match on PATH.
  public static func resolve(_ program: String) -> String? {
    if program.contains("/") { return access(program, X_OK) == 0 ? program : nil }
    let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
    for directory in path.split(separator: ":") where !directory.isEmpty {
      let candidate = directory + "/" + program
      if access(candidate, X_OK) == 0 { return candidate }
    }
    return nil
  }

  /// The parent's environment, without the variables named.
  public static func environment(removing names: Set<String>) -> [String] {
    var result: [String] = []
    var pointer = environ
    while let entry = pointer.pointee {
      let text = String(cString: entry)
      let name = text.split(separator: "=", maxSplits: 1).first.map(String.init) ?? text
      if !names.contains(name) { result.append(text) }
      pointer += 1
    }
    return result
  }
}
