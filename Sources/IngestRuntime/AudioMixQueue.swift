/// A bounded FIFO of records, each with a payload copied into one fixed byte arena: the
/// hand-off between the capture thread and the mix's thread (`AudioMixWorker`). Everything is
/// allocated in `init`; `push` and `removeFirst` allocate nothing.
///
/// Not thread-safe by itself: its owner calls every method with its lock held. The payload of
/// `first` stays where it is, unwritten, until `removeFirst`, so the consumer may read it after
/// letting go of the lock; `push` writes only free bytes.
///
/// ```
///  arena (capacity bytes), payloads kept contiguous; a payload that does not fit before the
///  end starts again at 0, the tail left unused until the reader passes it
///  ┌────────────┬───────────────────────────┬──────────────┐
///  │ free       │ first … last (in order)   │ free         │
///  └────────────┴───────────────────────────┴──────────────┘
///  0         read (first's offset)        write         capacity
///  (wrapped: last … free … first, write < read)
///
///  records (a ring of `recordCapacity`): record, payload offset, payload count
/// ```
final class AudioMixQueue<Record> {
  private struct Entry {
    var record: Record
    var offset: Int
    var count: Int
  }

  private let arena: UnsafeMutableRawBufferPointer
  private var entries: [Entry?]
  private var head = 0
  /// Records waiting.
  private(set) var count = 0
  /// Where the next payload goes.
  private var write = 0

  /// - Parameters:
  ///   - arenaBytes: the payload bytes the queue holds at most.
  ///   - recordCapacity: the records it holds at most.
  init(arenaBytes: Int, recordCapacity: Int) {
    precondition(arenaBytes > 0 && recordCapacity > 0)
    arena = .allocate(byteCount: arenaBytes, alignment: 16)
    entries = Array(repeating: nil, count: recordCapacity)
  }

  deinit { arena.deallocate() }

  /// Bytes one record takes in the table, for the ledger's `AudioMixHandOff.recordBytes`.
  static var recordBytes: Int { MemoryLayout<Entry?>.stride }

  var isEmpty: Bool { count == 0 }

  /// The largest payload the queue takes (when empty).
  var byteCapacity: Int { arena.count }

  /// Appends `record` with a copy of `payload`.
  /// - Returns: false, and nothing changed, when the records or the arena are full.
  /// - Complexity: O(`payload.count`).
  func push(_ record: Record, payload: UnsafeRawBufferPointer) -> Bool {
    guard count < entries.count, let offset = place(payload.count) else { return false }
    if payload.count > 0 {
      (arena.baseAddress! + offset).copyMemory(from: payload.baseAddress!, byteCount: payload.count)
    }
    entries[(head + count) % entries.count] = Entry(
      record: record, offset: offset, count: payload.count)
    count += 1
    write = offset + payload.count
    return true
  }

  /// The oldest record and its payload (valid until `removeFirst`); nil when empty.
  var first: (record: Record, payload: UnsafeRawBufferPointer)? {
    guard count > 0, let entry = entries[head] else { return nil }
    return (
      entry.record,
      UnsafeRawBufferPointer(
        start: arena.baseAddress! + entry.offset, count: entry.count)
    )
  }

  /// Drops the oldest record, freeing its payload's bytes.
  func removeFirst() {
    precondition(count > 0)
    entries[head] = nil
    head = (head + 1) % entries.count
    count -= 1
    // Empty: the next payload starts at 0, however the arena was used.
    if count == 0 { write = 0 }
  }

  /// Where `bytes` fit, contiguous, without reaching the oldest payload; nil when they do not.
  /// The inequalities are strict where `write` could otherwise meet `read` with records
  /// waiting, which would read as an empty arena.
  private func place(_ bytes: Int) -> Int? {
    guard count > 0, let oldest = entries[head] else {
      return bytes <= arena.count ? 0 : nil
    }
    let read = oldest.offset
    if write >= read {
      if write + bytes <= arena.count { return write }
      return bytes < read ? 0 : nil
    }
    return write + bytes < read ? write : nil
  }
}
