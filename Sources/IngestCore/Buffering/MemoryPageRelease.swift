/// Gives the system back the pages of memory whose contents are no longer needed: they leave
/// the process's resident set (and an iOS extension's footprint) and read as zeros once written
/// again. The send ring's arena uses it when a backlog has drained.
public protocol MemoryPageRelease: Sendable {
  /// Releases the whole pages inside `range`; the partial pages at its ends are kept.
  func release(_ range: UnsafeMutableRawBufferPointer)
}
