#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Installs the process's stop-signal handlers, the one way the executables do it.
public enum SignalHandlers {
  /// Installs `handler` for each of `signals`, for the whole process: restarted system calls
  /// (`SA_RESTART`) keep the code that runs meanwhile unaware of signals. Installed even over an
  /// inherited `SIG_IGN` or blocked mask, and unblocked in the calling thread (threads started
  /// later inherit its mask): a host app or test runner that spawned the process with the
  /// signals ignored or blocked still needs a way to stop it cleanly.
  /// - Parameter handler: must be async-signal-safe.
  public static func install(_ signals: [Int32], handler: @convention(c) (Int32) -> Void) {
    var action = sigaction()
    #if canImport(Glibc)
      action.__sigaction_handler.sa_handler = handler
    #else
      action.__sigaction_u.__sa_handler = handler
    #endif
    sigemptyset(&action.sa_mask)
    action.sa_flags = SA_RESTART
    var set = sigset_t()
    sigemptyset(&set)
    for signal in signals {
      sigaction(signal, &action, nil)
      sigaddset(&set, signal)
    }
    pthread_sigmask(SIG_UNBLOCK, &set, nil)
  }
}
