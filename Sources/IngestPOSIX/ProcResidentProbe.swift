import IngestCore

#if canImport(Glibc)
  import Glibc
#endif

/// Resident memory of this process from the kernel: `/proc/self/statm` (second field, in pages).
public struct ProcResidentProbe: ResidentMemoryProbe {
  public init() {}

  public func residentBytes() -> Int? {
    #if os(Linux)
      guard let fields = Self.readFile("/proc/self/statm")?.split(separator: " "), fields.count > 1,
        let pages = Int(fields[1])
      else { return nil }
      return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    #else
      return nil
    #endif
  }

  /// Peak resident memory (VmHWM of `/proc/self/status`), in bytes.
  public func peakResidentBytes() -> Int? {
    #if os(Linux)
      guard let text = Self.readFile("/proc/self/status") else { return nil }
      for line in text.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        let digits = line.dropFirst(6).filter(\.isNumber)
        return Int(digits).map { $0 * 1024 }
      }
      return nil
    #else
      return nil
    #endif
  }

  /// Reads a small file with a fixed stack-sized buffer (no Foundation).
  static func readFile(_ path: String) -> String? {
    #if os(Linux)
      let fd = open(path, O_RDONLY)
      guard fd >= 0 else { return nil }
      defer { close(fd) }
      var bytes = [UInt8](repeating: 0, count: 4096)
      let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      guard count > 0 else { return nil }
      return String(decoding: bytes[..<count], as: UTF8.self)
    #else
      return nil
    #endif
  }
}
