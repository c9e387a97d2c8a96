#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The one way this package starts a POSIX thread (a sender, a file writer, a child's standard
/// error reader): a closure on a new thread, and the handle to join.
public enum SystemThread {
  /// Starts a thread running `body`; nil when the system would not start one.
  ///
  /// The closure, and what it captures, is kept until the thread ends. The caller joins the
  /// handle before it lets go of what the thread uses.
  public static func start(_ body: @escaping () -> Void) -> pthread_t? {
    let box = Unmanaged.passRetained(ThreadBody(body))
    // Darwin's pthread_t is a pointer that pthread_create fills in; glibc's is an integer.
    #if canImport(Darwin)
      var handle: pthread_t?
    #else
      var handle = pthread_t()
    #endif
    let result = pthread_create(&handle, nil, { ThreadBody.run($0) }, box.toOpaque())
    guard result == 0 else {
      box.release()
      return nil
    }
    return handle
  }
}

/// The closure a new thread runs, passed through pthread_create's one pointer argument.
private final class ThreadBody {
  let body: () -> Void
  init(_ body: @escaping () -> Void) { self.body = body }

  /// The thread's entry: takes back the reference `start` passed and runs the closure.
  /// (The argument is optional on glibc and not on Darwin; this signature takes both.)
  static func run(_ argument: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    Unmanaged<ThreadBody>.fromOpaque(argument!).takeRetainedValue().body()
    return nil
  }
}
