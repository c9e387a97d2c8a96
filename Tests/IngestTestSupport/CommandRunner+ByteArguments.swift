import Foundation
import Glibc

extension CommandRunner {
  /// Runs `executable` (a path) with arguments given as bytes, which need not be UTF-8 (a file
  /// name with byte 0xFF): Foundation's `Process` passes only strings. Output goes to files, the
  /// run is bounded by `timeout` and the child is killed by its pid after it, as for `run`.
  package static func run(
    _ executable: String, byteArguments: [[UInt8]], timeout: TimeInterval = 120
  ) throws -> Result {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let outPath = directory.appending(path: "stdout").path
    let errPath = directory.appending(path: "stderr").path
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    let created = O_WRONLY | O_CREAT | O_TRUNC
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, outPath, created, 0o644)
    posix_spawn_file_actions_addopen(&actions, 2, errPath, created, 0o644)
    let words: [UnsafeMutablePointer<CChar>?] = ([Array(executable.utf8)] + byteArguments).map {
      bytes in
      let word = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
      for (index, byte) in bytes.enumerated() { word[index] = CChar(bitPattern: byte) }
      word[bytes.count] = 0
      return word
    }
    defer { for word in words { word?.deallocate() } }
    var pid: pid_t = 0
    let spawned = (words + [nil]).withUnsafeBufferPointer { argv in
      posix_spawn(
        &pid, executable, &actions, nil, UnsafeMutablePointer(mutating: argv.baseAddress!), environ)
    }
    guard spawned == 0 else {
      throw LoopbackServers.Failure(
        "posix_spawn \(executable): \(String(cString: strerror(spawned)))")
    }
    // waitpid blocks, so it runs on a thread of its own and the timeout is the semaphore's.
    let child = pid
    let exit = ExitStatus()
    let done = DispatchSemaphore(value: 0)
    Thread {
      var raw: Int32 = 0
      while waitpid(child, &raw, 0) < 0 && errno == EINTR {}
      exit.raw = raw
      done.signal()
    }.start()
    var timedOut = false
    if done.wait(timeout: .now() + timeout) == .timedOut {
      timedOut = true
      kill(child, SIGKILL)
      done.wait()
    }
    let raw = exit.raw
    // As `Process.terminationStatus`: the exit code, or the signal that ended the child.
    let status = raw & 0x7F == 0 ? (raw >> 8) & 0xFF : raw & 0x7F
    let outData = FileManager.default.contents(atPath: outPath) ?? Data()
    let errData = FileManager.default.contents(atPath: errPath) ?? Data()
    return Result(
      status: status, stdout: String(decoding: outData, as: UTF8.self),
      stderr: String(decoding: errData, as: UTF8.self), timedOut: timedOut)
  }
}

/// The wait status the waiting thread stores before it signals, read after the signal.
private final class ExitStatus: @unchecked Sendable {
  var raw: Int32 = 0
}
