#if os(Linux)
  import CProcessControl
  import Glibc
#endif

/// Keeps an output's secret (an SRT passphrase, an RTMP key, a WHIP token) out of core files:
/// a crash of a process holding one would otherwise write it to disk, for a crash reporter or
/// whoever reads the core. Marking the process not dumpable (`PR_SET_DUMPABLE` 0) also keeps the
/// user's other processes from reading its memory (`/proc/PID/mem`, ptrace).
public enum CoreDumpGuard {
  /// Forbids core dumps of this process from now on (Linux; nothing elsewhere).
  /// - Returns: whether the process is now not dumpable.
  @discardableResult
  public static func forbidCoreDumps() -> Bool {
    #if os(Linux)
      return ingest_set_dumpable(0) == 0
    #else
      return false
    #endif
  }

  /// Whether this process may dump core (Linux; always true elsewhere, where it is not checked).
  public static var mayDumpCore: Bool {
    #if os(Linux)
      return ingest_get_dumpable() != 0
    #else
      return true
    #endif
  }
}
