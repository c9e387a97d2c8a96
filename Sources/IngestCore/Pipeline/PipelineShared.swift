import Synchronization

/// What the pipeline's threads share: the send ring, the counters, the degradation ladder, the
/// event queue and the format log.
///
/// `Pipeline` keeps it in a `HandOverLock`, so every method here runs with that lock held. The
/// capture thread takes the lock to reserve a ring slot and to commit it, the sender to take and
/// complete units, the reporter to read counters and events.
struct PipelineShared {
  let ring: SendRing
  var ladder: DegradationLadder
  var counters = PipelineSnapshot()
  var sinkCongestion = 0.0
  var events = EventQueue(capacity: 64)
  /// Format changes not yet passed to the sender: each applies to the units of its track from
  /// ring sequence `from` on. Pruned as the sender asks (`format(for:)`).
  var formatLog: [(kind: SampleKind, format: FormatDescription, from: Int64)] = []
  /// The run's shared ring ledger when other outputs share the budget, and this ring's bytes
  /// last entered in it.
  let share: RingShare?
  var sharedRingBytes = 0

  init(ring: SendRing, ladder: DegradationLadder, share: RingShare?, budget: MemoryBudget) {
    self.ring = ring
    self.ladder = ladder
    self.share = share
    counters.budget = budget.budget
    counters.ledger = budget.ledger(ringBytes: 0)
    counters.peakLedger = counters.ledger
  }

  // MARK: Capture thread

  /// Counts an appended sample and reserves `byteCount` bytes of the ring for it; nil when the
  /// ring refused it (dropped and counted, the ledger and the ladder updated).
  mutating func reserve(
    _ info: SendRing.UnitInfo, byteCount: Int, stamp: Timeline.Stamp, now: MonotonicInstant,
    budget: MemoryBudget, tier: borrowing Atomic<Int>
  ) -> UnsafeMutableRawBufferPointer? {
    counters.appended[Int(info.kind.rawValue)] += 1
    note(info.kind, stamp)
    let slot = ring.reserve(info, byteCount: byteCount)
    if slot == nil { noteRingChange(now: now, budget: budget, tier: tier) }
    return slot
  }

  /// Ends the reservation `reserve` made: commits the slot when it was `written`, or gives it
  /// back and counts the unit as invalid. Returns whether the unit entered the ring.
  mutating func finishReservation(
    of kind: SampleKind, written: Bool, awaitKeyframe: Bool, now: MonotonicInstant,
    budget: MemoryBudget,
    tier: borrowing Atomic<Int>
  ) -> Bool {
    var accepted = false
    if written {
      accepted = ring.commit()
    } else {
      ring.abort()
      ring.countDrop(kind, .invalid)
      if awaitKeyframe { ring.startAwaitingKeyframe() }
    }
    noteRingChange(now: now, budget: budget, tier: tier)
    return accepted
  }

  /// Counts a sample that does not enter the ring, dropped for `reason`.
  mutating func refuse(
    _ kind: SampleKind, _ reason: DropReason, awaitKeyframe: Bool, stamp: Timeline.Stamp?,
    now: MonotonicInstant, budget: MemoryBudget, tier: borrowing Atomic<Int>
  ) {
    counters.appended[Int(kind.rawValue)] += 1
    if let stamp { note(kind, stamp) }
    ring.countDrop(kind, reason)
    if awaitKeyframe { ring.startAwaitingKeyframe() }
    noteRingChange(now: now, budget: budget, tier: tier)
  }

  /// Enters a format change: every unit committed from here on was appended after it.
  mutating func noteFormatChange(_ format: FormatDescription, for kind: SampleKind) {
    // The leading pictures after the new format's first keyframe reference the old stream.
    if kind == .video { ring.blockLeading(ofGOP: ring.newestGOP + 1, reason: .awaitingKeyframe) }
    formatLog.append((kind, format, ring.nextSequence))
    events.push(.formatChanged(kind: kind, format: format))
  }

  /// Progress and clock resets of a stamped sample, whether or not it enters the ring.
  private mutating func note(_ kind: SampleKind, _ stamp: Timeline.Stamp) {
    counters.newestDTS = max(counters.newestDTS, stamp.dts)
    if counters.firstDTS == 0 { counters.firstDTS = stamp.dts }
    if stamp.isDiscontinuity {
      counters.discontinuities += 1
      events.push(.clockReset(kind: kind, dts: stamp.dts))
    }
  }

  // MARK: Sender thread

  /// The format record a format change before ring sequence `sequence` set for track `kind`;
  /// nil when the announced one is in force. Forgets the changes older units needed (units are
  /// asked for in order).
  mutating func format(of kind: SampleKind, at sequence: Int64) -> FormatDescription? {
    // The common case, a run without a format change: nothing to look up or compare.
    guard !formatLog.isEmpty else { return nil }
    var newest: Int?
    for index in formatLog.indices
    where formatLog[index].kind == kind && formatLog[index].from <= sequence {
      newest = index
    }
    guard let newest else { return nil }
    let (format, from) = (formatLog[newest].format, formatLog[newest].from)
    // Later units are as new as this one: older changes of the track no longer apply.
    formatLog.removeAll { $0.kind == kind && $0.from < from }
    return format
  }

  // MARK: Reporter

  /// A copy of the counters, with the ring's figures and the tier filled in.
  func snapshot() -> PipelineSnapshot {
    // Fresh storage for the arrays, so the capture thread's next count does not copy them.
    var copy = counters
    copy.appended = counters.appended.map { $0 }
    copy.sent = counters.sent.map { $0 }
    copy.drops = ring.drops.detached()
    copy.ringUnits = ring.waitingCount
    copy.ringDuration = ring.waitingDuration
    copy.ringBytes = ring.liveBytes
    copy.tier = ladder.tier
    return copy
  }

  // MARK: Pressure

  /// Recomputes the ledger and the pressure, and moves the ladder; a tier change is stored in
  /// `tier` (read without the lock) and queued as an event.
  mutating func noteRingChange(
    now: MonotonicInstant, budget: MemoryBudget, tier: borrowing Atomic<Int>
  ) {
    var ringBytes = ring.liveBytes
    if let share {
      ringBytes = share.ledger.add(ringBytes - sharedRingBytes)
      sharedRingBytes = ring.liveBytes
    }
    let ledger = budget.ledger(ringBytes: ringBytes)
    counters.ledger = ledger
    counters.peakLedger = max(counters.peakLedger, ledger)
    if ring.keyframeWanted {
      ring.keyframeWanted = false
      events.push(.keyframeRequested)
    }
    let budgetBytes = Double(budget.budget)
    // Memory against the budget, and the link's backlog and congestion: the ladder grades the
    // second (see `DegradationLadder`).
    var memory = Double(ledger) / budgetBytes
    var memorySource = PressureSource.ledger
    if let resident = counters.resident, Double(resident) / budgetBytes > memory {
      memory = Double(resident) / budgetBytes
      memorySource = .resident
    }
    if Double(ring.liveBytes) / Double(ring.byteLimit) > memory {
      memory = Double(ring.liveBytes) / Double(ring.byteLimit)
      memorySource = .ringBytes
    }
    let backlog = Double(ring.waitingDuration) / Double(ring.durationLimit)
    let link = max(backlog, sinkCongestion)
    let linkSource: PressureSource = backlog >= sinkCongestion ? .ringDuration : .sinkCongestion
    let pressure = max(memory, link)
    counters.pressure = pressure
    if let change = ladder.update(pressure: memory, linkPressure: link, now: now) {
      tier.store(change.to.rawValue, ordering: .relaxed)
      events.push(
        .tierChanged(
          from: change.from, to: change.to, pressure: pressure,
          source: memory >= link ? memorySource : linkSource))
    }
  }
}
