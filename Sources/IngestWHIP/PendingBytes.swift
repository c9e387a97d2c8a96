import IngestCore
import IngestPOSIX

/// The dump bytes written for the child and not yet taken by its pipe: at most the stream's
/// header and formats and one sample record, since a unit is only taken when this is empty.
final class PendingBytes: ByteSink {
  private(set) var bytes: [UInt8] = []
  private var start = 0

  var count: Int { bytes.count - start }
  var isEmpty: Bool { count == 0 }

  func write(_ data: UnsafeRawBufferPointer) {
    if isEmpty { discard() }
    bytes.append(contentsOf: data)
  }

  /// Drops what is pending: the rest of a record for a child that ended, which the next child
  /// must not get before its stream's header.
  func discard() {
    bytes.removeAll(keepingCapacity: true)
    start = 0
  }

  /// Hands what is pending to `take`, which returns how many bytes it took.
  func drain(_ take: (UnsafeRawBufferPointer) throws(Errno) -> Int) throws(Errno) {
    while !isEmpty {
      // Array's closures rethrow untyped errors; Result keeps the typed one.
      let taken = try bytes.withUnsafeBytes { raw in
        Result { () throws(Errno) in try take(UnsafeRawBufferPointer(rebasing: raw[start...])) }
      }.get()
      if taken == 0 { return }
      start += taken
    }
  }
}
