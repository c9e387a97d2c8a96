#if canImport(Glibc)
  import Glibc
#endif

/// Reads the per-thread heap allocation count of `Scripts/bench-support/alloccount.c` when that
/// library is preloaded (`LD_PRELOAD`); otherwise counting is unavailable and figures are left
/// out rather than guessed.
public struct AllocationCounter: Sendable {
  private typealias Reader = @convention(c) () -> UInt

  private let reader: Reader?

  /// Looks the counter up in the running process.
  public init() {
    #if os(Linux)
      let handle = dlopen(nil, RTLD_NOW)
      if let symbol = dlsym(handle, "ingest_alloc_count_thread") {
        reader = unsafeBitCast(symbol, to: Reader.self)
      } else {
        reader = nil
      }
    #else
      reader = nil
    #endif
  }

  /// Whether allocations can be counted in this process.
  public var isAvailable: Bool { reader != nil }

  /// Allocations made by the calling thread so far (0 when unavailable).
  @inline(__always) public func threadCount() -> UInt { reader?() ?? 0 }
}
