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
    final class Body {
      let run: () -> Void
      init(_ run: @escaping () -> Void) { self.run = run }
    }
    let box = Unmanaged.passRetained(Body(body))
    var handle = pthread_t()
    let result = pthread_create(
      &handle, nil,
      { argument in
        Unmanaged<Body>.fromOpaque(argument!).takeRetainedValue().run()
        return nil
      }, box.toOpaque())
    guard result == 0 else {
      box.release()
      return nil
    }
    return handle
  }
}
