#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Where the running program is, and the package's other programs installed beside it.
public enum Executable {
  /// The running executable's path (`/proc/self/exe`), nil when it cannot be read. Linux only:
  /// the sibling programs are run on Linux; an iOS extension starts none.
  public static func current() -> String? {
    #if os(Linux)
      var buffer = [CChar](repeating: 0, count: 4096)
      let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
      guard count > 0 else { return nil }
      return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    #else
      return nil
    #endif
  }

  /// The program `name`: the path in environment variable `variable` when set, else `name` in
  /// the running executable's directory, else `name` alone (looked up on PATH by the caller).
  public static func sibling(_ name: String, overriddenBy variable: String) -> String {
    if let path = getenv(variable).map({ String(cString: $0) }), !path.isEmpty { return path }
    guard let me = current(), let slash = me.lastIndex(of: "/") else { return name }
    return String(me[..<slash]) + "/" + name
  }
}
