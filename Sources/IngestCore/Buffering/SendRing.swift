/// The bounded buffer between the capture thread and the sender: a preallocated byte arena plus a
/// ring of access-unit records.
///
/// ```
/// records (fixed capacity, FIFO; dropped records stay as tombstones until they reach the head)
///   head                                              tail
///    v                                                 v
///   [A0 sent?][V1 key][a2][V2 dropped][V3][a4] ... [free slots]
///
/// arena (one allocation; each record owns one contiguous slot, in record order)
///   0         wrap point                 head slot                     tail slot end       capacity
///   |[V7][a8]  |.......... free ..........|[A0][V1][a2][V2x][V3][a4]...|.... unused ....|
///   a slot = headroom (PSI/PCR packets written at send time) + the unit's bytes
/// ```
///
/// The arena's head is the slot of the oldest record and its tail the end of the newest slot, so
/// arena space comes back in FIFO order as records are sent or trimmed. When the ring empties,
/// allocation restarts at offset 0, so a sender that keeps up touches only the first pages; the
/// pages a backlog touched beyond `residentArenaBytes` are given back to the system once it has
/// drained (`MemoryPageRelease`), so that one stall does not keep the process's resident memory
/// up for the rest of the run. A backlog that stands (a link slower than the stream) never
/// drains, and its tail sweeps the whole arena: the pages behind its head are given back as the
/// head moves on (`releaseStep` at a time), so that what is resident stays near the live bytes
/// the ledger counts, not the arena's size.
///
/// Bounded by buffered duration (the DTS span of waiting units), by live bytes, by the arena and
/// by the record capacity. The drop policy in `SendRing+DropPolicy.swift` makes room on enqueue.
///
/// A unit is written in place: `reserve` makes room and hands out its slot (counted in
/// `liveBytes` at once, so the ledger covers it), the producer writes the unit there, and
/// `commit` makes it a waiting record, or `abort` gives the slot back. The sender never sees a
/// reserved slot, so a unit is in the ring whole or not at all.
///
/// Not thread-safe: the pipeline serialises access. No method allocates after `init`.
public final class SendRing {
  /// What the ring knows of one access unit.
  public struct UnitInfo: Equatable, Sendable {
    public var kind: SampleKind
    public var pts: Int64
    public var dts: Int64
    public var isKeyframe: Bool
    /// Video whose NAL units all have nal_ref_idc 0: nothing references it.
    public var isDisposable: Bool
    public var isDiscontinuity: Bool
    /// A leading picture of an open GOP (HEVC RASL, or H.264 before a non-IDR keyframe in output
    /// order): it may reference pictures from before the keyframe it follows (the previous GOP),
    /// so it goes whenever one of those did not reach the output.
    public var isLeading: Bool
    /// An H.264 picture the producer flagged as a keyframe that is no IDR (an open GOP's
    /// recovery point): not a keyframe here, so no place to cut a segment.
    public var isRecoveryPoint: Bool

    public init(
      kind: SampleKind, pts: Int64, dts: Int64, isKeyframe: Bool, isDisposable: Bool = false,
      isDiscontinuity: Bool = false, isLeading: Bool = false, isRecoveryPoint: Bool = false
    ) {
      self.kind = kind
      self.pts = pts
      self.dts = dts
      self.isKeyframe = isKeyframe
      self.isDisposable = isDisposable
      self.isDiscontinuity = isDiscontinuity
      self.isLeading = isLeading
      self.isRecoveryPoint = isRecoveryPoint
    }
  }

  /// The unit the sender is working on. Its memory stays valid until `completeSend` or
  /// `abortSend`; the sender may modify it in place (continuity counters, PCR).
  public struct InFlightUnit {
    public var info: UnitInfo
    /// Headroom followed by the unit's bytes.
    public var slot: UnsafeMutableRawBufferPointer
    /// Where the unit's own bytes start in `slot`.
    public var headroom: Int
    /// The sequence number of the unit (counts every enqueued unit).
    public var sequence: Int64
  }

  enum State: UInt8 { case waiting, inFlight, dropped }

  struct Record {
    var info: UnitInfo
    var state: State
    var gop: Int64
    var offset: Int
    var slotLength: Int
    var sequence: Int64
  }

  /// Bytes of the arena.
  public let arenaCapacity: Int
  /// Maximum number of records, tombstones included.
  public let recordCapacity: Int
  /// Bytes reserved in front of every unit for packets the sender writes.
  public let headroom: Int
  /// Maximum DTS span of waiting units, in 90 kHz ticks.
  public var durationLimit: Int64
  /// Maximum live bytes (units waiting or in flight, headroom included).
  public var byteLimit: Int

  let arena: UnsafeMutableRawBufferPointer
  let records: UnsafeMutablePointer<Record>
  private let pageRelease: (any MemoryPageRelease)?
  /// The end of the arena space handed out since pages were last given back.
  private var touchedEnd = 0
  /// The end of the last range behind a standing backlog's head that was given back.
  private var releasedEnd = 0
  var head = 0
  var count = 0
  var nextSequence: Int64 = 0
  /// The slot handed out by `reserve` and not yet committed or aborted.
  private var reservation: (info: UnitInfo, offset: Int, slotLength: Int)?
  var newestGOP: Int64 = 0
  var newestDTS: Int64 = .min

  /// Live bytes: slots of waiting and in-flight units.
  public private(set) var liveBytes = 0
  /// Units waiting to be sent.
  public private(set) var waitingCount = 0
  /// Video keyframes waiting to be sent.
  var waitingKeyframes = 0
  /// Video is dropped on arrival until the next keyframe (after a GOP was cut short).
  public internal(set) var awaitingKeyframe = false
  /// Set when the ring started waiting for a keyframe; the pipeline turns it into a keyframe request.
  public var keyframeWanted = false
  /// The GOP whose leading pictures cannot be decoded, because a picture of the GOP before it did
  /// not reach the output (or there was none: the stream starts at GOP 1), and the reason its
  /// leading pictures are counted under when they are dropped. See `SendRing+LeadingPictures`.
  var leadingBlock: (gop: Int64, reason: DropReason)? = (1, .awaitingKeyframe)
  /// The newest GOP a leading picture entered the ring in: a drop need not look for leading
  /// pictures of a later GOP (closed GOPs never have any).
  var newestLeadingGOP: Int64 = .min
  /// Every drop and refusal, by track and reason.
  public internal(set) var drops = DropCounts()

  /// Allocates the arena and the record table; nothing is allocated afterwards.
  /// - Parameters:
  ///   - arenaCapacity: bytes of the arena (the ring's share of the memory budget).
  ///   - recordCapacity: maximum units held, tombstones included.
  ///   - headroom: bytes reserved in front of each unit (0 for access-unit sinks).
  ///   - durationLimit: maximum buffered DTS span in 90 kHz ticks.
  ///   - pageRelease: gives back the arena pages a drained backlog touched; nil keeps them.
  public init(
    arenaCapacity: Int, recordCapacity: Int, headroom: Int, durationLimit: Int64,
    pageRelease: (any MemoryPageRelease)? = nil
  ) {
    precondition(arenaCapacity > 0 && recordCapacity > 0 && headroom >= 0)
    self.arenaCapacity = arenaCapacity
    self.recordCapacity = recordCapacity
    self.headroom = headroom
    self.durationLimit = durationLimit
    self.byteLimit = arenaCapacity
    self.pageRelease = pageRelease
    arena = .allocate(byteCount: arenaCapacity, alignment: 16)
    records = .allocate(capacity: recordCapacity)
  }

  deinit {
    arena.deallocate()
    records.deallocate()
  }

  /// Bytes of a record table of `capacity` records, for the memory ledger.
  public static func recordTableBytes(capacity: Int) -> Int {
    capacity * MemoryLayout<Record>.stride
  }

  /// The DTS span of the waiting units in 90 kHz ticks (0 when none wait).
  public var waitingDuration: Int64 {
    guard let oldest = oldestWaitingIndex() else { return 0 }
    return max(0, newestDTS - records[oldest].info.dts)
  }

  /// Whether nothing waits to be sent.
  public var isEmpty: Bool { waitingCount == 0 }

  // MARK: Capture side

  /// Copies one unit into the ring: `reserve`, copy, `commit`.
  /// - Returns: false when the unit was not taken (dropped on arrival or refused; counted in `drops`).
  /// - Complexity: O(1) when no drop is needed; drops scan the records.
  @discardableResult
  public func enqueue(_ info: UnitInfo, bytes: UnsafeRawBufferPointer) -> Bool {
    guard let slot = reserve(info, byteCount: bytes.count) else { return false }
    slot.copyMemory(from: bytes)
    return commit()
  }

  /// Makes room for one unit of `byteCount` bytes by the drop policy and hands out the memory to
  /// write it into. The slot's headroom is in front of the returned buffer.
  ///
  /// The caller writes the unit, then calls `commit` (or `abort`) before the next `reserve`. The
  /// slot counts in `liveBytes` from now on. The sender may run meanwhile: it never touches a
  /// reserved slot.
  /// - Returns: `byteCount` bytes of the arena, or nil when the unit is not taken (dropped on
  ///   arrival or refused; counted in `drops`).
  /// - Complexity: O(1) when no drop is needed; drops scan the records.
  public func reserve(_ info: UnitInfo, byteCount: Int) -> UnsafeMutableRawBufferPointer? {
    precondition(reservation == nil, "reserve before the previous slot was committed or aborted")
    if info.kind == .video {
      if info.isKeyframe {
        awaitingKeyframe = false
      } else if awaitingKeyframe {
        drops[.video, .awaitingKeyframe] += 1
        return nil
      }
      if let reason = leadingDropReason(info) {
        drops[.video, reason] += 1
        return nil
      }
    }
    let slotLength = headroom + byteCount
    guard slotLength <= byteLimit, slotLength <= arenaCapacity, byteCount > 0 else {
      drops[info.kind, .ringFull] += 1
      if info.kind == .video { startAwaitingKeyframe() }
      return nil
    }
    var offset: Int?
    while true {
      offset = count < recordCapacity ? freeSlot(length: slotLength) : nil
      let span =
        max(newestDTS, info.dts) - (oldestWaitingIndex().map { records[$0].info.dts } ?? info.dts)
      let bytesFit = offset != nil && liveBytes + slotLength <= byteLimit
      if bytesFit && span <= durationLimit { break }
      let dropped = bytesFit ? dropForDuration() : dropForSpace()
      if !dropped {
        if bytesFit { break }  // nothing older left to drop: a lone unit may exceed the span
        drops[info.kind, .ringFull] += 1
        if info.kind == .video { startAwaitingKeyframe() }
        return nil
      }
    }
    guard let offset else { return nil }
    // Making room may have cut the newest GOP: a non-key frame of it cannot follow the hole.
    if info.kind == .video && !info.isKeyframe && awaitingKeyframe {
      drops[.video, .awaitingKeyframe] += 1
      return nil
    }
    reservation = (info, offset, slotLength)
    liveBytes += slotLength
    touchedEnd = max(touchedEnd, offset + slotLength)
    return UnsafeMutableRawBufferPointer(
      rebasing: arena[offset + headroom..<offset + slotLength])
  }

  /// Makes the reserved unit a waiting record.
  /// - Returns: false when it was dropped instead: a non-key video frame after the sender started
  ///   waiting for a keyframe (a reconnect) while the unit was written (counted in `drops`).
  @discardableResult
  public func commit() -> Bool {
    guard let (info, offset, slotLength) = reservation else {
      preconditionFailure("commit without a reserved slot")
    }
    reservation = nil
    if info.kind == .video {
      if info.isKeyframe {
        awaitingKeyframe = false
      } else if awaitingKeyframe {
        liveBytes -= slotLength
        drops[.video, .awaitingKeyframe] += 1
        return false
      }
      // A drop on the sender's side while the unit was written may have cut its references.
      if let reason = leadingDropReason(info) {
        liveBytes -= slotLength
        drops[.video, reason] += 1
        return false
      }
    }
    if info.kind == .video && info.isKeyframe { newestGOP += 1 }
    let index = (head + count) % recordCapacity
    (records + index).initialize(
      to: Record(
        info: info, state: .waiting, gop: info.kind == .video ? newestGOP : -1, offset: offset,
        slotLength: slotLength, sequence: nextSequence))
    nextSequence += 1
    if info.isLeading { newestLeadingGOP = newestGOP }
    count += 1
    waitingCount += 1
    if info.kind == .video && info.isKeyframe { waitingKeyframes += 1 }
    newestDTS = max(newestDTS, info.dts)
    return true
  }

  /// Gives the reserved slot back (the unit could not be written); nothing is counted.
  public func abort() {
    guard let reservation else { preconditionFailure("abort without a reserved slot") }
    liveBytes -= reservation.slotLength
    self.reservation = nil
  }

  /// Counts a unit that never reached the ring (tier filters, invalid input).
  public func countDrop(_ kind: SampleKind, _ reason: DropReason) {
    drops[kind, reason] += 1
  }

  /// Drops video on arrival until the next keyframe (tier 4 drops a non-key frame).
  public func startAwaitingKeyframe() {
    if !awaitingKeyframe { keyframeWanted = true }
    awaitingKeyframe = true
    // The GOP the next keyframe opens follows video that was not sent.
    blockLeading(ofGOP: newestGOP + 1, reason: .awaitingKeyframe)
  }

  // MARK: Sender side

  /// Takes the oldest waiting unit for sending, or nil when none waits.
  public func beginSend() -> InFlightUnit? {
    trimHead()
    guard count > 0 else { return nil }
    let record = records + head
    if record.pointee.state == .inFlight { return inFlight(record.pointee) }
    record.pointee.state = .inFlight
    waitingCount -= 1
    if record.pointee.info.kind == .video && record.pointee.info.isKeyframe {
      waitingKeyframes -= 1
    }
    return inFlight(record.pointee)
  }

  /// The unit taken by `beginSend` was delivered: its space is released.
  public func completeSend() {
    guard count > 0, records[head].state == .inFlight else { return }
    liveBytes -= records[head].slotLength
    (records + head).deinitialize(count: 1)
    head = (head + 1) % recordCapacity
    count -= 1
    trimHead()
    if count == 0 {
      releasedEnd = 0
      releaseDrainedPages()
    } else {
      releaseBehindHead()
    }
  }

  /// Arena bytes that stay resident when the ring empties: what a sender that keeps up uses.
  public static let residentArenaBytes = 512 << 10

  /// The ring is empty, so nothing lives in the arena beyond `residentArenaBytes` (but a slot
  /// the capture thread is writing) and new units start at offset 0: the pages a backlog made
  /// resident there are given back. Only when at least as much again is to be given back, so a
  /// stream whose keyframes reach just past the mark does not fault pages in and out each GOP;
  /// a backlog is rare, so the system call (on the sender thread, under the pipeline's lock)
  /// is too.
  private func releaseDrainedPages() {
    let keep = Self.residentArenaBytes
    guard let pageRelease, reservation == nil, touchedEnd >= 2 * keep else { return }
    pageRelease.release(UnsafeMutableRawBufferPointer(rebasing: arena[keep..<touchedEnd]))
    touchedEnd = keep
  }

  /// The least arena space behind a standing backlog's head that is given back at once: a
  /// system call every megabyte the sender gets through, not every unit.
  public static let releaseStep = 1 << 20

  /// The ring holds a backlog, and the free space directly behind its head (down to the tail's
  /// end when the ring is wrapped, to the arena's start when not, above a slot being written and
  /// above the part that stays resident) is a `releaseStep` larger than what was given back last:
  /// the head left those pages, and the tail comes back to them only after it went round the
  /// arena, so they are given back now rather than kept resident for the rest of a slow link.
  private func releaseBehindHead() {
    guard let pageRelease else { return }
    let start = records[head].offset
    let last = records[(head + count - 1) % recordCapacity]
    let end = last.offset + last.slotLength
    var low = end > start ? 0 : end
    if let reservation, reservation.offset < start {
      low = max(low, reservation.offset + reservation.slotLength)
    }
    // A mark past the head is from the last time round the arena.
    low = max(low, Self.residentArenaBytes, releasedEnd <= start ? releasedEnd : 0)
    guard start - low >= Self.releaseStep else { return }
    pageRelease.release(UnsafeMutableRawBufferPointer(rebasing: arena[low..<start]))
    releasedEnd = start
  }

  /// Drops everything older than the newest waiting video keyframe (reason `.reconnect`), the
  /// in-flight unit included, so a new connection starts at a keyframe. Without a waiting keyframe,
  /// all waiting video goes and video waits for the next keyframe.
  public func skipToNewestKeyframe() {
    var newestKey: Int?
    for step in 0..<count {
      let index = (head + step) % recordCapacity
      let record = records[index]
      if record.state == .waiting && record.info.kind == .video && record.info.isKeyframe {
        newestKey = step
      }
    }
    for step in 0..<count {
      let index = (head + step) % recordCapacity
      guard records[index].state != .dropped else { continue }
      if let newestKey, step >= newestKey { break }
      if newestKey == nil && records[index].info.kind != .video { continue }
      drop(index, .reconnect)
    }
    if newestKey == nil && hasVideo { startAwaitingKeyframe() }
    trimHead()
  }

  var hasVideo: Bool { newestGOP > 0 }

  // MARK: Internals

  private func inFlight(_ record: Record) -> InFlightUnit {
    InFlightUnit(
      info: record.info,
      slot: UnsafeMutableRawBufferPointer(
        rebasing: arena[record.offset..<record.offset + record.slotLength]),
      headroom: headroom, sequence: record.sequence)
  }

  /// Marks a record dropped and counts it.
  func drop(_ index: Int, _ reason: DropReason) {
    let record = records + index
    if record.pointee.state == .waiting {
      waitingCount -= 1
      if record.pointee.info.kind == .video && record.pointee.info.isKeyframe {
        waitingKeyframes -= 1
      }
    }
    record.pointee.state = .dropped
    liveBytes -= record.pointee.slotLength
    drops[record.pointee.info.kind, reason] += 1
    let info = record.pointee.info
    // A disposable picture is referenced by none, a leading one by no picture that is not leading.
    if info.kind == .video && !info.isDisposable && !info.isLeading {
      referencesLost(inGOP: record.pointee.gop, reason: reason)
    }
  }

  /// Removes tombstones from the head so their arena space comes back.
  func trimHead() {
    while count > 0 && records[head].state == .dropped {
      (records + head).deinitialize(count: 1)
      head = (head + 1) % recordCapacity
      count -= 1
    }
    if count == 0 { newestDTS = .min }
  }

  func oldestWaitingIndex() -> Int? {
    for step in 0..<count {
      let index = (head + step) % recordCapacity
      if records[index].state == .waiting { return index }
    }
    return nil
  }

  /// Where a slot of `length` bytes fits, following the FIFO order of slots.
  private func freeSlot(length: Int) -> Int? {
    guard count > 0 else { return length <= arenaCapacity ? 0 : nil }
    let first = records[head]
    let last = records[(head + count - 1) % recordCapacity]
    let start = first.offset
    let end = last.offset + last.slotLength
    if end > start {
      // Used: [start, end). Free: [end, capacity) then [0, start).
      if arenaCapacity - end >= length { return end }
      return length <= start ? 0 : nil
    }
    // Wrapped. Used: [start, capacity) and [0, end). Free: [end, start).
    return start - end >= length ? end : nil
  }
}
