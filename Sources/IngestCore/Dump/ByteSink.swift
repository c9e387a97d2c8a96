/// A destination the dump writer pushes bytes to.
public protocol ByteSink {
  /// Writes all of `bytes` or throws; a short write is the conformer's to retry.
  mutating func write(_ bytes: UnsafeRawBufferPointer) throws
}
