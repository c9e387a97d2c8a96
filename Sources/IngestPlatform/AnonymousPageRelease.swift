import IngestCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `MemoryPageRelease` by `madvise`: `MADV_DONTNEED` on Linux, which drops the pages at once
/// (private anonymous memory reads as zeros after it), `MADV_FREE_REUSABLE` on Darwin, which
/// takes them out of the footprint.
public struct AnonymousPageRelease: MemoryPageRelease {
  private let pageSize: UInt

  public init() {
    pageSize = UInt(max(4096, sysconf(Int32(_SC_PAGESIZE))))
  }

  public func release(_ range: UnsafeMutableRawBufferPointer) {
    guard let base = range.baseAddress else { return }
    let first = (UInt(bitPattern: base) + pageSize - 1) & ~(pageSize - 1)
    let end = (UInt(bitPattern: base) + UInt(range.count)) & ~(pageSize - 1)
    guard end > first, let start = UnsafeMutableRawPointer(bitPattern: first) else { return }
    #if os(Linux)
      // Fails only for a range that is not mapped memory of ours, which a ring's arena is.
      _ = madvise(start, Int(end - first), MADV_DONTNEED)
    #elseif canImport(Darwin)
      _ = madvise(start, Int(end - first), MADV_FREE_REUSABLE)
    #endif
  }
}
