import Synchronization

/// The capture-side entry point: timestamps, packaging, the send ring, the memory ledger and the
/// degradation ladder.
///
/// Threads: one capture thread calls `append`; one sender thread calls `beginSend` and
/// `completeSend`; a reporter reads `snapshot` and drains events. The capture thread never does
/// I/O, never allocates in steady state and holds the lock only to reserve a ring slot and to
/// commit it: the unit is packetized straight into the reserved slot between the two, the one
/// copy of its bytes from input to ring.
public final class Pipeline: @unchecked Sendable {
  public let configuration: PipelineConfiguration
  /// The tracks present and their formats.
  public let tracks: TrackFormats
  /// What the ring holds: TS packets or raw access units.
  public let payloadFormat: PayloadFormat
  /// The ledger, with every fixed buffer of the run reserved.
  public let budget: MemoryBudget
  private let clock: any PipelineClock

  // Capture thread only.
  private var timeline: Timeline
  private var packetizer: TSPacketizer?
  /// The formats in force: `tracks` as announced, updated by `changeFormat`.
  private var formats: TrackFormats
  /// A clock reset whose sample did not enter the ring: the next unit of the track carries it.
  private var pendingDiscontinuity = [Bool](repeating: false, count: SampleKind.allCases.count)
  /// No video keyframe arrived yet: a frame before it references nothing the output has.
  private var awaitingFirstKeyframe: Bool
  /// The newest video keyframe is a CRA or BLA picture: RASL pictures after it belong to it (an
  /// IDR has none; a RASL NAL type after one is not treated as leading).
  private var gopAdmitsRASL = false

  // Shared, under `lock`.
  private let lock = HandOverLock()
  private let ring: SendRing
  private var ladder: DegradationLadder
  private var counters = PipelineSnapshot()
  private var sinkCongestion = 0.0
  private var events = EventQueue(capacity: 64)
  /// Format changes not yet passed to the sender: each applies to the units of its track from
  /// ring sequence `from` on. Pruned as the sender asks (`format(for:)`).
  private var formatLog: [(kind: SampleKind, format: FormatDescription, from: Int64)] = []
  private let currentTier = Atomic<Int>(0)
  /// The run's shared ring ledger when other outputs share the budget, and this ring's bytes
  /// last entered in it.
  private let share: RingShare?
  private var sharedRingBytes = 0

  /// Sets up the ring and reserves the pipeline's own buffers in `budget`.
  /// - Parameters:
  ///   - budget: a ledger in which the caller already reserved its buffers (reader, sink).
  ///   - share: set when other outputs share `budget`: the caller reserved this ring's records
  ///     (`SendRing.recordTableBytes`) in it, and the ring gets `share.arenaBytes`; nil gives the
  ///     ring all that the budget leaves.
  /// - Throws: `BudgetError` when the buffers do not fit in the budget.
  public init(
    configuration: PipelineConfiguration, tracks: TrackFormats, payloadFormat: PayloadFormat,
    budget: MemoryBudget, clock: any PipelineClock, share: RingShare? = nil
  ) throws(BudgetError) {
    var budget = budget
    if share == nil {
      try budget.reserve(
        "ring records", bytes: SendRing.recordTableBytes(capacity: configuration.recordCapacity))
    }
    // The sender writes PAT/PMT/PCR packets in front of each TS unit, in its headroom.
    let headroom = payloadFormat == .transportStream ? TSOutputStream.maximumPrefixSize : 0
    let arena = share?.arenaBytes ?? budget.available
    guard arena > headroom + 188, arena <= budget.available else {
      throw .exceeded(name: "ring arena", bytes: headroom + 188, available: arena)
    }
    self.share = share
    self.configuration = configuration
    self.tracks = tracks
    formats = tracks
    self.payloadFormat = payloadFormat
    self.budget = budget
    self.clock = clock
    timeline = Timeline(configuration: configuration.timeline)
    for kind in SampleKind.allCases {
      if case .aac(let aac) = tracks.format(for: kind) {
        timeline.setAudioFrameDuration(samples: 1024, sampleRate: aac.sampleRate, for: kind)
      }
    }
    awaitingFirstKeyframe = tracks.format(for: .video) != nil
    packetizer = payloadFormat == .transportStream ? TSPacketizer(program: tracks) : nil
    ring = SendRing(
      arenaCapacity: arena, recordCapacity: configuration.recordCapacity,
      headroom: headroom, durationLimit: configuration.bufferTicks)
    ladder = DegradationLadder(configuration: configuration.ladder)
    counters.budget = budget.budget
    counters.ledger = budget.ledger(ringBytes: 0)
    counters.peakLedger = counters.ledger
  }

  /// The degradation tier, readable from any thread without the lock.
  public var tier: Tier { Tier(rawValue: currentTier.load(ordering: .relaxed)) ?? .normal }

  // MARK: Capture thread

  /// Takes one encoded sample. Returns in microseconds; never blocks on I/O.
  /// - Returns: whether the sample entered the send ring (false: dropped or refused, and counted).
  @discardableResult
  public func append(_ sample: MediaSample) -> Bool {
    sample.payload.withUnsafeBytes {
      append(
        kind: sample.kind, pts: sample.pts, dts: sample.dts, isKeyframe: sample.isKeyframe,
        payload: $0)
    }
  }

  /// Takes one encoded sample given as raw memory (the zero-copy path for dump readers).
  /// - Parameter nalUnits: the video payload's `AVCCSummary` when the caller already walked it
  ///   (the dump reader does); without it the payload is walked here, once.
  @discardableResult
  public func append(
    kind: SampleKind, pts: MediaTime, dts: MediaTime?, isKeyframe: Bool,
    payload: UnsafeRawBufferPointer, nalUnits: AVCCSummary? = nil
  ) -> Bool {
    let now = clock.now()
    guard let format = formats.format(for: kind) else { return record(kind, .invalid) }
    // A refused video frame may be a reference: the frames after it must wait for a keyframe.
    let lost = kind == .video
    guard payload.count > 0, payload.count <= configuration.maximumSampleBytes else {
      return record(kind, .invalid, awaitKeyframe: lost)
    }
    let stamp: Timeline.Stamp
    do { stamp = try timeline.stamp(kind: kind, pts: pts, dts: dts) } catch {
      return record(kind, .invalid, awaitKeyframe: lost)
    }
    var summary: AVCCSummary?
    if let video = format.video {
      if let nalUnits, nalUnits.describes(payload, lengthSize: video.nalLengthSize) {
        summary = nalUnits
      } else {
        do { summary = try video.summarize(payload) } catch {
          return record(kind, .invalid, awaitKeyframe: lost)
        }
      }
    }
    let disposable = summary?.isDisposable ?? false
    if kind == .video && isKeyframe { gopAdmitsRASL = summary?.admitsRASL ?? false }
    if kind == .video && awaitingFirstKeyframe {
      // Video that starts mid-GOP: drop until the first keyframe, and ask for one.
      guard isKeyframe else {
        return record(kind, .awaitingKeyframe, awaitKeyframe: true, stamp: stamp)
      }
      awaitingFirstKeyframe = false
    }
    let track = Int(kind.rawValue)
    let discontinuity = stamp.isDiscontinuity || pendingDiscontinuity[track]
    pendingDiscontinuity[track] = discontinuity
    let tier = self.tier
    if kind == .audioMic && tier >= .noMic { return record(kind, .tierMic, stamp: stamp) }
    if kind == .video && !isKeyframe {
      if tier >= .keyframesOnly {
        return record(kind, .tierKeyframesOnly, awaitKeyframe: true, stamp: stamp)
      }
      if disposable && tier >= .reducedFrameRate {
        return record(kind, .tierDisposable, stamp: stamp)
      }
    }
    let info = SendRing.UnitInfo(
      kind: kind, pts: stamp.pts, dts: stamp.dts, isKeyframe: kind.isAudio || isKeyframe,
      isDisposable: disposable, isDiscontinuity: discontinuity,
      isRASL: !isKeyframe && gopAdmitsRASL && summary?.isRASL == true)
    var layout: TSPacketizer.Layout?
    if let packetizer {
      do {
        layout = try packetizer.layout(
          kind: kind, pts: stamp.pts, dts: stamp.dts, isKeyframe: info.isKeyframe, payload: payload,
          nalUnits: summary)
      } catch {
        return record(kind, .invalid, awaitKeyframe: lost, stamp: stamp)
      }
    }
    let byteCount = layout?.byteCount ?? payload.count
    let slot = lock.withLock {
      counters.appended[track] += 1
      note(kind, stamp)
      let slot = ring.reserve(info, byteCount: byteCount)
      if slot == nil { noteRingChange(now: now) }
      return slot
    }
    guard let slot else { return false }
    // Outside the lock: the sender never sees a reserved slot.
    var written = true
    if let packetizer, let layout {
      do { _ = try packetizer.write(layout, payload: payload, into: slot) } catch {
        written = false
      }
    } else {
      slot.copyMemory(from: payload)
    }
    let accepted = lock.withLock {
      var accepted = false
      if written {
        accepted = ring.commit()
      } else {
        ring.abort()
        ring.countDrop(kind, .invalid)
        if lost { ring.startAwaitingKeyframe() }
      }
      noteRingChange(now: now)
      return accepted
    }
    if accepted { pendingDiscontinuity[track] = false }
    return accepted
  }

  /// A new format record for a track of the program, at a keyframe: the device rotated
  /// (720x1280 to 1280x720) or the encoder was reconfigured. Every IDR after it carries the new
  /// SPS/PPS, audio frames the new ADTS fields; the next unit of the track is marked as a
  /// discontinuity (PAT/PMT, discontinuity_indicator, an HLS discontinuity and new segment), video
  /// waits for its next keyframe, and a `formatChanged` event is queued. The same format again
  /// changes nothing.
  /// - Returns: false for a track the program does not have (the PMT cannot grow mid-stream).
  @discardableResult
  public func changeFormat(_ format: FormatDescription, for kind: SampleKind) -> Bool {
    guard let current = formats.format(for: kind) else { return false }
    guard current != format else { return true }
    formats.set(format, for: kind)
    packetizer?.update(format, for: kind)
    if case .aac(let aac) = format {
      timeline.setAudioFrameDuration(samples: 1024, sampleRate: aac.sampleRate, for: kind)
    }
    pendingDiscontinuity[Int(kind.rawValue)] = true
    if kind == .video { awaitingFirstKeyframe = true }
    lock.withLock {
      // The RASL pictures after the new format's first keyframe reference the old stream.
      if kind == .video { ring.blockRASL(ofGOP: ring.newestGOP + 1, reason: .awaitingKeyframe) }
      // Every unit committed from here on was appended after the change.
      formatLog.append((kind, format, ring.nextSequence))
      events.push(.formatChanged(kind: kind, format: format))
    }
    return true
  }

  /// A sample the input refused before it reached `append` (a corrupt record): a lost video
  /// frame may be a reference, so the video after it waits for the next keyframe (counted as
  /// `awaitingKeyframe`) and a keyframe is requested. Lost audio needs nothing.
  public func sampleLost(_ kind: SampleKind) {
    guard kind == .video else { return }
    let now = clock.now()
    lock.withLock {
      ring.startAwaitingKeyframe()
      noteRingChange(now: now)
    }
  }

  /// Counts a sample that does not enter the ring.
  private func record(
    _ kind: SampleKind, _ reason: DropReason, awaitKeyframe: Bool = false,
    stamp: Timeline.Stamp? = nil
  ) -> Bool {
    let now = clock.now()
    lock.withLock {
      counters.appended[Int(kind.rawValue)] += 1
      if let stamp { note(kind, stamp) }
      ring.countDrop(kind, reason)
      if awaitKeyframe { ring.startAwaitingKeyframe() }
      noteRingChange(now: now)
    }
    return false
  }

  /// Progress and clock resets of a stamped sample, whether or not it enters the ring. Called
  /// with the lock held.
  private func note(_ kind: SampleKind, _ stamp: Timeline.Stamp) {
    counters.newestDTS = max(counters.newestDTS, stamp.dts)
    if counters.firstDTS == 0 { counters.firstDTS = stamp.dts }
    if stamp.isDiscontinuity {
      counters.discontinuities += 1
      events.push(.clockReset(kind: kind, dts: stamp.dts))
    }
  }

  // MARK: Sender thread

  /// Takes the oldest waiting unit; nil when the ring is empty.
  public func beginSend() -> SendRing.InFlightUnit? {
    lock.withLock { ring.beginSend() }
  }

  /// The format record a `changeFormat` before `unit` set for its track, in force when the unit
  /// was appended; nil when the announced one (`tracks`) is. Asked in the order units are sent,
  /// so the changes older units needed are forgotten.
  public func format(for unit: SendRing.InFlightUnit) -> FormatDescription? {
    lock.withLock {
      // The common case, a run without a format change: nothing to look up or compare.
      guard !formatLog.isEmpty else { return nil }
      let kind = unit.info.kind
      var newest: Int?
      for index in formatLog.indices
      where formatLog[index].kind == kind && formatLog[index].from <= unit.sequence {
        newest = index
      }
      guard let newest else { return nil }
      let (format, from) = (formatLog[newest].format, formatLog[newest].from)
      // Later units are as new as this one: older changes of the track no longer apply.
      formatLog.removeAll { $0.kind == kind && $0.from < from }
      return format
    }
  }

  /// The unit from `beginSend` was delivered (`bytes` on the wire, prefix included).
  public func completeSend(_ unit: SendRing.InFlightUnit, bytes: Int) {
    let now = clock.now()
    lock.withLock {
      ring.completeSend()
      counters.sent[Int(unit.info.kind.rawValue)] += 1
      counters.sentBytes += Int64(bytes)
      noteRingChange(now: now)
    }
  }

  /// The sink took the unit from `beginSend` without sending it (see `SinkWriteResult.discarded`):
  /// it leaves the ring and is counted as dropped for `reason`, not as sent.
  public func discardSend(_ unit: SendRing.InFlightUnit, reason: DropReason) {
    let now = clock.now()
    lock.withLock {
      ring.completeSend()
      ring.countDrop(unit.info.kind, reason)
      noteRingChange(now: now)
    }
  }

  /// After a reconnect: drops what is older than the newest waiting keyframe (the unit in flight
  /// included), so the new connection starts at a keyframe.
  public func skipToNewestKeyframe() {
    let now = clock.now()
    lock.withLock {
      ring.skipToNewestKeyframe()
      noteRingChange(now: now)
    }
  }

  // MARK: Reporter

  /// Enters a resident-memory reading (taken about once a second by the reporter).
  public func updateResident(_ bytes: Int?) {
    let now = clock.now()
    lock.withLock {
      counters.resident = bytes
      if let bytes { counters.peakResident = max(counters.peakResident ?? 0, bytes) }
      noteRingChange(now: now)
    }
  }

  /// Enters the sink's congestion signal (0...1).
  public func updateSinkCongestion(_ value: Double) {
    lock.withLock { sinkCongestion = max(0, min(1, value)) }
  }

  /// The DTS span of the units waiting in the ring (90 kHz ticks): the backlog the output has
  /// not taken yet. Cheaper than a `snapshot`.
  public var waitingTicks: Int64 { lock.withLock { ring.waitingDuration } }

  /// A copy of the counters.
  public func snapshot() -> PipelineSnapshot {
    lock.withLock {
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
  }

  /// Removes and returns the oldest queued event.
  public func nextEvent() -> PipelineEvent? {
    lock.withLock { events.pop() }
  }

  // MARK: Pressure

  /// Recomputes the ledger and the pressure, and moves the ladder. Called with the lock held.
  private func noteRingChange(now: Int64) {
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
    var pressure = Double(ledger) / budgetBytes
    var source = PressureSource.ledger
    func consider(_ value: Double, _ candidate: PressureSource) {
      if value > pressure {
        pressure = value
        source = candidate
      }
    }
    if let resident = counters.resident { consider(Double(resident) / budgetBytes, .resident) }
    consider(Double(ring.waitingDuration) / Double(ring.durationLimit), .ringDuration)
    consider(Double(ring.liveBytes) / Double(ring.byteLimit), .ringBytes)
    consider(sinkCongestion, .sinkCongestion)
    counters.pressure = pressure
    if let change = ladder.update(pressure: pressure, now: now) {
      currentTier.store(change.to.rawValue, ordering: .relaxed)
      events.push(
        .tierChanged(from: change.from, to: change.to, pressure: pressure, source: source))
    }
  }
}
