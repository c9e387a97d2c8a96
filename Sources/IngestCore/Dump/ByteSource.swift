/// A stream of bytes the dump reader pulls from (a file, a socket, memory).
public protocol ByteSource {
  /// Reads up to `buffer.count` bytes into `buffer`.
  ///
  /// - Returns: the number of bytes read, from 1 to `buffer.count`; 0 only at the end of input.
  mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}
