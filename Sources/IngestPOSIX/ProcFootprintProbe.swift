import IngestCore

/// The memory this process is charged for, the way an iOS extension is: dirty pages (anonymous
/// memory and written pages of mapped files) and swapped-out pages, from
/// `/proc/self/smaps_rollup`.
///
/// Clean file-backed pages are left out. They are the code and read-only data of shared
/// libraries: shared with the page cache, dropped by the kernel under pressure, and not part of
/// iOS's `phys_footprint` (the figure the extension's memory limit applies to). VmRSS counts
/// them, and loading libavformat for RTMP maps about 150 libraries, some 21 MB of clean pages,
/// which alone put a healthy RTMP run at degradation tier 1.
public struct ProcFootprintProbe: ResidentMemoryProbe {
  public init() {}

  public func residentBytes() -> Int? {
    #if os(Linux)
      guard let text = ProcResidentProbe.readFile("/proc/self/smaps_rollup") else { return nil }
      return Self.footprint(rollup: text)
    #else
      return nil
    #endif
  }

  /// Private_Dirty + Shared_Dirty + Swap of an smaps_rollup text, in bytes.
  static func footprint(rollup text: String) -> Int? {
    var kilobytes = 0
    var found = 0
    for line in text.split(separator: "\n") {
      let fields = line.split(separator: " ", omittingEmptySubsequences: true)
      guard fields.count >= 2, ["Private_Dirty:", "Shared_Dirty:", "Swap:"].contains(fields[0]),
        let value = Int(fields[1])
      else { continue }
      kilobytes += value
      found += 1
    }
    return found > 0 ? kilobytes * 1024 : nil
  }
}
