import IngestCore

/// Which units libsrt dropped as too late on the sending side (packets a second or more old
/// when a link stalls), so that the summary counts them as undelivered rather than sent.
///
/// libsrt's send buffer holds exactly the packets not yet acknowledged, in the order they were
/// handed over, and every message is 1316 bytes of the TS stream. So with every message
/// counted as it is handed over, `messages - packets in the buffer` is the first byte not yet
/// acknowledged, and a unit's bytes say where it is:
///
/// ```
///  units     |  u1  | u2 |    u3    | u4 |  u5  |
///  bytes     0 ─────────────────────────────────► handed over
///                        ▲ head: acknowledged up to here (or dropped)
///            judged ─────┘  u3.. still in the buffer
/// ```
///
/// libsrt reports only how many packets it dropped (`pktSndDropTotal`), and it drops the
/// oldest: the packets dropped between two readings are the ones just ahead of the head.
///
/// What the receiver drops itself (a retransmission that came after the packets behind it
/// were due) is never reported to the sender, which sees it acknowledged; a packet that is
/// merely late is still played, late. So a unit unacknowledged for longer than the latency
/// is not counted as lost: after a 2 s blackout most such units still reached the receiver.
///
/// The units of the last `capacity` handed over are kept (preallocated), far more than the
/// buffer ever holds; counted per connection (`reset`), added up over the run.
struct SRTDropLedger {
  /// Units lost so far, by `SampleKind.rawValue`.
  private(set) var lostUnits: [Int]
  private var ends: [Int64]
  private var kinds: [UInt8]
  private var lost: [Bool]
  /// Units recorded since the connection began; unit `i` is at `i % capacity`.
  private var recorded = 0
  /// The first unit still (partly) in the buffer, and where the one before it ended.
  private var judged = 0
  private var judgedEnd: Int64 = 0
  /// TS bytes of the units handed over so far (the end of the last one).
  private var unitBytes: Int64 = 0
  /// Messages handed to libsrt on this connection.
  private(set) var messages: Int64 = 0
  private var droppedPackets: Int64 = 0
  private let capacity: Int

  init(capacity: Int = 8192) {
    self.capacity = capacity
    lostUnits = Array(repeating: 0, count: SampleKind.allCases.count)
    ends = Array(repeating: 0, count: capacity)
    kinds = Array(repeating: 0, count: capacity)
    lost = Array(repeating: false, count: capacity)
  }

  /// A new connection: libsrt's counters and the byte stream start again. Losses are kept.
  mutating func reset() {
    recorded = 0
    judged = 0
    judgedEnd = 0
    unitBytes = 0
    messages = 0
    droppedPackets = 0
  }

  /// A message of the stream was handed to libsrt.
  mutating func messageSent() { messages += 1 }

  /// A whole unit of `bytes` TS bytes was handed over (its last bytes may still wait in the
  /// chunker's carry).
  mutating func unitWritten(kind: SampleKind, bytes: Int) {
    unitBytes += Int64(bytes)
    if recorded - judged == capacity {
      // The oldest was long acknowledged: it leaves the table as it is.
      judgedEnd = ends[judged % capacity]
      judged += 1
    }
    let slot = recorded % capacity
    ends[slot] = unitBytes
    kinds[slot] = kind.rawValue
    lost[slot] = false
    recorded += 1
  }

  /// Takes libsrt's counters: packets dropped as too late since the connection was made, and
  /// packets in the send buffer now.
  mutating func observe(droppedPackets total: Int64, bufferedPackets: Int) {
    let size = Int64(SRTMessageChunker.messageSize)
    let head = max(0, messages - Int64(bufferedPackets))
    let headByte = head * size
    if total > droppedPackets {
      // The packets dropped since the last reading lie just ahead of the head.
      let firstByte = max(0, head - (total - droppedPackets)) * size
      droppedPackets = total
      var index = judged
      var start = judgedEnd
      while index < recorded && start < headByte {
        let slot = index % capacity
        if ends[slot] > firstByte { markLost(slot) }
        start = ends[slot]
        index += 1
      }
    }
    // Units wholly behind the head left the buffer: nothing more to judge about them.
    while judged < recorded && ends[judged % capacity] <= headByte {
      judgedEnd = ends[judged % capacity]
      judged += 1
    }
  }

  private mutating func markLost(_ slot: Int) {
    guard !lost[slot] else { return }
    lost[slot] = true
    lostUnits[Int(kinds[slot])] += 1
  }
}
