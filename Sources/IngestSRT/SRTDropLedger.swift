import IngestCore

/// Which units cannot have been played on time at the receiver, so that the summary counts
/// them as undelivered rather than sent: the ones libsrt dropped as too late on the sending
/// side, and the ones still unacknowledged after their play-out deadline.
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
/// **Sender drops.** libsrt reports only how many packets it dropped (`pktSndDropTotal`). It
/// drops the oldest, and only inside a send call: so the packets dropped since the previous
/// reading are the ones just past the head of that reading, provided the sink reads the
/// counters right before every send that may drop (`SRTSink` does when the buffer's span nears
/// libsrt's drop threshold). Placing them at the new head instead would blame the units
/// acknowledged in between, when an acknowledgement lands together with the drop.
///
/// **Late units.** What the receiver drops itself (a retransmission still missing when a later
/// packet was due) is never reported to the sender, which sees it acknowledged. The receiver
/// plays a packet one latency after it was sent, and its acknowledgement reaches the sender
/// within half a round trip and one 10 ms acknowledgement period of its arrival. So a unit seen
/// still unacknowledged a latency, a round trip and 30 ms after it was handed over arrived
/// after its play time, and is counted as lost until it is acknowledged. Then it was either
/// dropped by the receiver, which acknowledges past the hole when the first packet after it is
/// due, or played late into a stream that had moved on (`mayHaveBeenDropped`). Only a late unit
/// that certainly arrived goes back to sent (`playedLate`): the summary may count a unit the
/// receiver played late as lost, never one it dropped as sent.
///
/// **Possibly lost.** A unit the receiver dropped is acknowledged when the packet after it is
/// due, a latency and a one-way trip after that one left, a round trip and the latency after
/// it was handed over: just when a retransmission (or a packet queued on the way) arriving at
/// the last moment would be, so no time the sender reads tells the two apart. A unit still
/// unacknowledged half a latency after it was handed over and first seen acknowledged that
/// late (the round trip the receiver's clock was set with at the handshake, see `observe`; less
/// 20 ms) is counted as sent but named possibly lost
/// (`possiblyLostUnits`). A unit acknowledged between two readings that straddle both times
/// (the sender not scheduled, or idle at the end of the stream) is not named: its
/// acknowledgement may have come early.
///
/// Video frames after a lost one, up to the next keyframe, are named possibly lost too: they
/// refer to it, directly or through the frames between. A decoder at its defaults may not show
/// them: after six frames lost in a blackout, FFmpeg's H.264 decoder showed none of the next
/// nine (ffprobe, the shaped-link benchmark's count), where the summary named five.
///
/// The units of the last `capacity` handed over are kept (preallocated), far more than the
/// buffer ever holds; counted per connection (`reset`), added up over the run.
struct SRTDropLedger {
  /// Units lost so far, by `SampleKind.rawValue`.
  private(set) var lostUnits: [Int]
  /// Of those, the units counted as lost because they were acknowledged too late.
  private(set) var lateUnits = 0
  /// Units acknowledged after their deadline that the receiver played late (not lost).
  private(set) var playedLate = 0
  /// Units counted as sent that the receiver may not have played, by `SampleKind.rawValue`:
  /// acknowledged at their play-out deadline (dropped, or played just in time), and video
  /// after a lost frame up to the next keyframe.
  private(set) var possiblyLostUnits: [Int]
  private var ends: [Int64]
  /// When the last byte of each unit was handed to libsrt.
  private var handedOver: [MonotonicInstant]
  private var kinds: [UInt8]
  private var states: [UnitState]
  /// Units recorded since the connection began; unit `i` is at `i % capacity`.
  private var recorded = 0
  /// The first unit still (partly) in the buffer, and where the one before it ended.
  private var judged = 0
  private var judgedEnd: Int64 = 0
  /// Units before this one were checked against their deadline (and counted if late).
  private var deadlineChecked = 0
  /// Units from this one on wait (their tails) in the chunker's carry: their hand-over time is
  /// that of the message that takes them.
  private var pendingTail = 0
  /// TS bytes of the units handed over so far (the end of the last one).
  private var unitBytes: Int64 = 0
  /// Messages handed to libsrt on this connection.
  private(set) var messages: Int64 = 0
  private var droppedPackets: Int64 = 0
  /// The head at the previous reading, in packets.
  private var head: Int64 = 0
  /// When the previous reading was taken (the clock's origin: none on this connection).
  private var lastObservation: MonotonicInstant = .origin
  private var keyframes: [Bool]
  /// A video frame judged since the last keyframe (or that keyframe) was lost: the frames
  /// after it refer to it.
  private var videoChainBroken = false
  private let capacity: Int

  init(capacity: Int = 8192) {
    self.capacity = capacity
    lostUnits = Array(repeating: 0, count: SampleKind.allCases.count)
    possiblyLostUnits = lostUnits
    ends = Array(repeating: 0, count: capacity)
    handedOver = Array(repeating: .origin, count: capacity)
    kinds = Array(repeating: 0, count: capacity)
    keyframes = Array(repeating: false, count: capacity)
    states = Array(repeating: .onTime, count: capacity)
  }

  /// A new connection: libsrt's counters and the byte stream start again. Losses are kept, and
  /// what the last connection had not had acknowledged is lost with it: libsrt discards its
  /// send buffer when the connection breaks. (They counted as sent: after a 10 s outage broke
  /// the connection with 54 KB in that buffer, the summary said 8 frames more than the
  /// receiver had, 5 of them named possibly lost.)
  mutating func reset() {
    while judged < recorded {
      mark(judged % capacity, .dropped)
      judged += 1
    }
    recorded = 0
    judged = 0
    judgedEnd = 0
    deadlineChecked = 0
    pendingTail = 0
    unitBytes = 0
    messages = 0
    droppedPackets = 0
    head = 0
    lastObservation = .origin
    videoChainBroken = false
  }

  /// A message of the stream was handed to libsrt at `now`.
  mutating func messageSent(now: MonotonicInstant) {
    messages += 1
    while pendingTail < recorded && ends[pendingTail % capacity] <= handedBytes {
      handedOver[pendingTail % capacity] = now
      pendingTail += 1
    }
  }

  /// A whole unit of `bytes` TS bytes was handed over at `now` (its last bytes may still wait in
  /// the chunker's carry); `keyframe` for a video keyframe.
  mutating func unitWritten(
    kind: SampleKind, keyframe: Bool = false, bytes: Int, now: MonotonicInstant
  ) {
    unitBytes += Int64(bytes)
    if recorded - judged == capacity {
      // The oldest was long acknowledged: it leaves the table as it is.
      judgedEnd = ends[judged % capacity]
      judged += 1
      deadlineChecked = max(deadlineChecked, judged)
      pendingTail = max(pendingTail, judged)
    }
    let slot = recorded % capacity
    ends[slot] = unitBytes
    handedOver[slot] = now
    kinds[slot] = kind.rawValue
    keyframes[slot] = keyframe
    states[slot] = .onTime
    recorded += 1
    if unitBytes <= handedBytes && pendingTail == recorded - 1 { pendingTail = recorded }
  }

  /// Takes libsrt's counters at `now`: packets dropped as too late since the connection was
  /// made, and packets in the send buffer; `latency` is the receiver's, `roundTrip` libsrt's
  /// smoothed one.
  mutating func observe(
    droppedPackets total: Int64, bufferedPackets: Int, now: MonotonicInstant, latency: TimeSpan,
    roundTrip: TimeSpan, clockRoundTrip: TimeSpan? = nil
  ) {
    let previous = lastObservation
    lastObservation = now
    // A dropped unit's acknowledgement: the next packet's play time (a latency and the way
    // there after it left), then the way back. The way there is the one the receiver's clock
    // was set with, at the handshake: a packet queued longer than that by the latency is
    // dropped. libsrt's drift tracking follows a queue that stands, but by a few milliseconds
    // over many seconds. So the smoothed round trip (queue included) only when less than
    // `clockRoundTrip`, the connection's (or the path's least since). At 25 % of the nominal
    // rate the start filled the bottleneck's 400 ms queue and the receiver dropped what waited
    // longer than the latency, 14 packets; with the smoothed round trip (340 ms) as the way
    // there, none was named. Less 20 ms for the readings' spacing.
    let played = clockRoundTrip.map { min($0, roundTrip) } ?? roundTrip
    let possiblyLostAfter = latency + played - .milliseconds(20)
    let size = Int64(SRTMessageChunker.messageSize)
    let newHead = max(head, messages - Int64(bufferedPackets))
    if total > droppedPackets {
      // The packets dropped since the last reading were the oldest then: just past its head.
      let firstByte = head * size
      let lastByte = min(head + (total - droppedPackets), newHead) * size
      droppedPackets = total
      var index = judged
      var start = judgedEnd
      while index < recorded && start < lastByte {
        let slot = index % capacity
        if ends[slot] > firstByte { mark(slot, .dropped) }
        start = ends[slot]
        index += 1
      }
    }
    head = newHead
    let headByte = head * size
    // Units wholly behind the head left the buffer: a late one among them was played late or
    // dropped by the receiver, which the first unit on time after it may tell apart.
    var onTime = judged
    while judged < recorded && ends[judged % capacity] <= headByte {
      let slot = judged % capacity
      if states[slot] == .late {
        if onTime <= judged { onTime = nextOnTime(after: judged) }
        if !mayHaveBeenDropped(before: onTime, headByte: headByte) {
          mark(slot, .onTime)
          playedLate += 1
        }
      }
      let isVideo = kinds[slot] == SampleKind.video.rawValue
      if states[slot] == .onTime {
        let atDeadline =
          judged < pendingTail && now - handedOver[slot] >= possiblyLostAfter
          && previous - handedOver[slot] >= latency / 2
        if atDeadline || (isVideo && videoChainBroken && !keyframes[slot]) {
          possiblyLostUnits[Int(kinds[slot])] += 1
        }
      }
      if isVideo {
        let lost = states[slot] != .onTime
        videoChainBroken = keyframes[slot] ? lost : videoChainBroken || lost
      }
      judgedEnd = ends[slot]
      judged += 1
    }
    // Units still in the buffer past their deadline, oldest first (hand-over times only grow).
    let lateAfter = latency + roundTrip + .milliseconds(30)
    deadlineChecked = max(deadlineChecked, judged)
    while deadlineChecked < recorded {
      let slot = deadlineChecked % capacity
      guard deadlineChecked < pendingTail, now - handedOver[slot] > lateAfter else { break }
      if states[slot] == .onTime { mark(slot, .late) }
      deadlineChecked += 1
    }
  }

  /// The first unit after `index` neither late nor dropped (`recorded` when there is none).
  private func nextOnTime(after index: Int) -> Int {
    var next = index + 1
    while next < recorded && states[next % capacity] != .onTime { next += 1 }
    return next
  }

  /// Whether the receiver may have dropped the late units acknowledged just before unit `next`
  /// (the first one after them neither late nor dropped).
  ///
  /// The receiver drops a missing packet only when a later one it holds is due, and then
  /// acknowledges past both. So late units acknowledged while `next` is not were not dropped:
  /// they arrived, and were played late. Acknowledged together with `next`, they may have been
  /// either; the time of the acknowledgement cannot tell, as the sender reads it tens of
  /// milliseconds apart and `next` may have been late itself between two readings.
  private func mayHaveBeenDropped(before next: Int, headByte: Int64) -> Bool {
    next < recorded && ends[(next - 1) % capacity] < headByte
  }

  private var handedBytes: Int64 { messages * Int64(SRTMessageChunker.messageSize) }

  /// Moves a unit to `state`, keeping the counts: a dropped unit stays dropped.
  private mutating func mark(_ slot: Int, _ state: UnitState) {
    let old = states[slot]
    guard old != state, old != .dropped else { return }
    let kind = Int(kinds[slot])
    if old == .late { lateUnits -= 1 }
    if state == .late { lateUnits += 1 }
    lostUnits[kind] += (state == .onTime ? -1 : 0) + (old == .onTime ? 1 : 0)
    states[slot] = state
  }

  /// What is known of a unit handed over.
  enum UnitState: UInt8 {
    /// Acknowledged in time, or not yet due.
    case onTime
    /// Seen unacknowledged past its deadline: counted as lost unless it turns out to have been
    /// played late.
    case late
    /// Dropped by libsrt before it was acknowledged.
    case dropped
  }
}
