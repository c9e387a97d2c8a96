import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A directory of generated fixtures for one test process, `<tmp>/<prefix>-<pid>`.
///
/// The suites that make their media once per process cannot remove it at the end (Swift Testing
/// has no process teardown), so each new process removes the directories of the earlier ones
/// whose process has ended; a directory of a process that still runs (a sanitizer run beside a
/// plain one) stays.
package enum ProcessFixtureDirectory {
  /// Creates this process's directory, after removing those of ended processes.
  package static func make(prefix: String) -> String {
    let temporary = NSTemporaryDirectory()
    let names = (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? []
    for name in names where name.hasPrefix(prefix + "-") {
      guard let pid = pid_t(name.dropFirst(prefix.count + 1)), pid != getpid() else { continue }
      if kill(pid, 0) != 0 && errno == ESRCH {
        try? FileManager.default.removeItem(atPath: temporary + name)
      }
    }
    let directory = temporary + "\(prefix)-\(getpid())"
    try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    return directory
  }
}
