import IngestCore
import IngestPOSIX

#if canImport(Glibc)
  import Glibc
#endif

/// Runs a program to completion (`Subprocess`) and reports what the kernel measured of it:
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
    func stream(_ output: Output, pipeEnd: Int32) -> Subprocess.Stream {
      switch output {
      case .capture: .descriptor(FileDescriptor(rawValue: pipeEnd))
      case .discard: .null
      case .inherit: .inherit
      }
    }
    let envp = environment.map { $0.map { strdup($0) } + [nil] }
    defer { for pointer in envp ?? [] { free(pointer) } }
    let began = SystemClock().now()
    let child: Subprocess
    do {
      // Standard error is never captured: `.capture` of it inherits, as documented on `Output`.
      child = try Subprocess.spawn(
        path, arguments: arguments, environment: envp, standardInput: .null,
        standardOutput: stream(stdout, pipeEnd: pipeFDs[1]),
        standardError: stderr == .discard ? .null : .inherit)
    } catch {
      for fd in pipeFDs where fd >= 0 { close(fd) }
      throw SpawnError(program: program, code: error.code)
    }
    if pipeFDs[1] >= 0 { close(pipeFDs[1]) }
    var output: [UInt8] = []
    if pipeFDs[0] >= 0 {
      let reader = FileDescriptor(rawValue: pipeFDs[0])
      var chunk = [UInt8](repeating: 0, count: 65536)
      while true {
        let count = chunk.withUnsafeMutableBytes { (try? reader.read(into: $0)) ?? 0 }
        if count == 0 { break }
        output.append(contentsOf: chunk[..<count])
      }
      reader.close()
    }
    let ended = child.wait()
    let wall = (SystemClock().now() - began).inSeconds
    return Outcome(
      status: ended.status ?? 128 + (ended.signal ?? 0),
      stdout: String(decoding: output, as: UTF8.self), wallSeconds: wall,
      cpuSeconds: ended.cpuSeconds, peakResident: ended.peakResidentBytes)
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
