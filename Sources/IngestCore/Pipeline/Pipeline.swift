import Synchronization

/// The capture-side entry point: timestamps, packaging, the send ring, the memory ledger and the
/// degradation ladder.
///
/// Threads: one capture thread calls `append`; one sender thread calls `nextSend` (or
/// `beginSend` and `completeSend`); a reporter reads `snapshot` and drains events. What they share (the ring, the
/// counters, the ladder, the events: `PipelineShared`) is held by one lock; what only the capture
/// thread uses (the timeline and packetizer: `PipelineCapture`) by a second lock that only the
/// capture thread takes, so it never waits on it. The capture thread never does I/O, never
/// allocates in steady state and holds the shared lock only to reserve a ring slot and to commit
/// it: the unit is packetized straight into the reserved slot between the two, the one copy of
/// its bytes from input to ring.
public final class Pipeline: Sendable {
  public let configuration: PipelineConfiguration
  /// The tracks present and their formats.
  public let tracks: TrackFormats
  /// What the ring holds: TS packets or raw access units.
  public let payloadFormat: PayloadFormat
  /// The ledger, with every fixed buffer of the run reserved.
  public let budget: MemoryBudget
  private let clock: any PipelineClock
  /// Taken only on the capture thread; taken before `shared` when both are held.
  private let capture: HandOverLock<PipelineCapture>
  private let shared: HandOverLock<PipelineShared>
  /// The largest sample payload `append` takes: `configuration.maximumSampleBytes`, lowered to
  /// what the ring holds once the sample is packaged (`SampleSizeLimit`).
  public let maximumSampleBytes: Int
  /// The ladder's tier, stored under `shared` and read without it.
  private let currentTier = Atomic<Int>(0)
  /// Audio samples whose ADTS header was removed, app and mic: counted without the shared
  /// lock, which `append` takes only to reserve and to commit.
  private let adtsRemovedApp = Atomic<Int>(0)
  private let adtsRemovedMic = Atomic<Int>(0)

  /// Sets up the ring and reserves the pipeline's own buffers in `budget`.
  /// - Parameters:
  ///   - budget: a ledger in which the caller already reserved its buffers (reader, sink).
  ///   - share: set when other outputs share `budget`: the caller reserved this ring's records
  ///     (`SendRing.recordTableBytes`) in it, and the ring gets `share.arenaBytes`; nil gives the
  ///     ring all that the budget leaves.
  ///   - pageRelease: gives back the ring's arena pages a drained backlog made resident.
  /// - Throws: `BudgetError` when the buffers do not fit in the budget.
  public init(
    configuration: PipelineConfiguration, tracks: TrackFormats, payloadFormat: PayloadFormat,
    budget: MemoryBudget, clock: any PipelineClock, share: RingShare? = nil,
    pageRelease: (any MemoryPageRelease)? = nil
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
    self.configuration = configuration
    self.tracks = tracks
    self.payloadFormat = payloadFormat
    self.budget = budget
    self.clock = clock
    maximumSampleBytes = SampleSizeLimit.largest(
      cap: configuration.maximumSampleBytes, arenaBytes: arena, headroom: headroom,
      tracks: tracks, payloadFormat: payloadFormat)
    capture = HandOverLock(
      PipelineCapture(configuration: configuration, tracks: tracks, payloadFormat: payloadFormat))
    let ring = SendRing(
      arenaCapacity: arena, recordCapacity: configuration.recordCapacity,
      headroom: headroom, durationLimit: configuration.bufferTicks, pageRelease: pageRelease)
    shared = HandOverLock(
      PipelineShared(
        ring: ring, ladder: DegradationLadder(configuration: configuration.ladder), share: share,
        budget: budget))
    shared.withLock { [maximumSampleBytes] in
      $0.counters.maximumSampleBytes = maximumSampleBytes
    }
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
  ///
  /// An AAC sample that opens with an ADTS header matching the track's configuration loses the
  /// header (a slice of `payload`, nothing copied): the packetizer writes its own. One that
  /// contradicts the configuration is refused as `invalid`. A sample above
  /// `maximumSampleBytes` is refused as `tooLarge`.
  /// - Parameter nalUnits: the video payload's `AVCCSummary` when the caller already walked it
  ///   (the dump reader does); without it the payload is walked here, once.
  @discardableResult
  public func append(
    kind: SampleKind, pts: MediaTime, dts: MediaTime?, isKeyframe: Bool,
    payload: UnsafeRawBufferPointer, nalUnits: AVCCSummary? = nil
  ) -> Bool {
    guard
      let reservation = reserve(
        kind: kind, pts: pts, dts: dts, isKeyframe: isKeyframe, payload: payload,
        nalUnits: nalUnits)
    else { return false }
    return finish(reservation, written: fill(reservation, payload: payload))
  }

  /// Appends one sample to each of `pipelines` (as `append` does) and packages it once for all
  /// that carry the same transport stream: the first of them packetizes it into its ring slot,
  /// and the others copy those packets into theirs before any is committed. Each pipeline keeps
  /// its own timeline, checks, ring and drop policy; a pipeline whose program or stamps differ
  /// from the first one's (another set of tracks, access units) packages the sample itself.
  /// TS packets leave the packetizer with continuity counters and PCR still to be stamped (the
  /// sender's `TSOutputStream` does that per output), so the copies are exact.
  ///
  /// What this saves per extra output: the PES/TS writing of the sample (Annex B conversion,
  /// ADTS headers, packet headers), replaced by one copy of its packets.
  public static func append(
    to pipelines: some Sequence<Pipeline>, kind: SampleKind, pts: MediaTime, dts: MediaTime?,
    isKeyframe: Bool, payload: UnsafeRawBufferPointer, nalUnits: AVCCSummary? = nil
  ) {
    // The first pipeline that packetized the sample: its slot stays reserved (so its sender
    // cannot touch the packets) until every other pipeline has copied them.
    var first: (pipeline: Pipeline, reservation: Reservation, written: Bool)?
    for pipeline in pipelines {
      guard
        let reservation = pipeline.reserve(
          kind: kind, pts: pts, dts: dts, isKeyframe: isKeyframe, payload: payload,
          nalUnits: nalUnits)
      else { continue }
      guard let packaged = first else {
        if reservation.layout == nil {
          // Access units: nothing to share, the copy is the whole of the packaging.
          _ = pipeline.finish(reservation, written: pipeline.fill(reservation, payload: payload))
        } else {
          first = (pipeline, reservation, pipeline.fill(reservation, payload: payload))
        }
        continue
      }
      if packaged.written, reservation.packages(like: packaged.reservation),
        pipeline.tracks == packaged.pipeline.tracks
      {
        reservation.slot.copyMemory(
          from: UnsafeRawBufferPointer(packaged.reservation.slot))
        _ = pipeline.finish(reservation, written: true)
      } else {
        _ = pipeline.finish(reservation, written: pipeline.fill(reservation, payload: payload))
      }
    }
    if let first { _ = first.pipeline.finish(first.reservation, written: first.written) }
  }

  /// A sample that passed every check of `append` and holds a reserved ring slot, between
  /// `reserve` and `finish`.
  struct Reservation {
    let kind: SampleKind
    let stamp: Timeline.Stamp
    let isKeyframe: Bool
    /// Whether the frames after it must wait for a keyframe should it not enter the ring.
    let lost: Bool
    /// The PES/TS layout; nil when the ring holds access units.
    let layout: TSPacketizer.Layout?
    /// Bytes of the payload's ADTS header (removed).
    let headerBytes: Int
    /// The reserved slot, `layout.byteCount` (or the payload's) bytes.
    let slot: UnsafeMutableRawBufferPointer
    let now: MonotonicInstant

    /// Whether a packetizer with the same program writes the same packets for both.
    func packages(like other: Reservation) -> Bool {
      kind == other.kind && stamp.pts == other.stamp.pts && stamp.dts == other.stamp.dts
        && isKeyframe == other.isKeyframe && slot.count == other.slot.count
        && headerBytes == other.headerBytes
    }
  }

  /// Checks, stamps and lays out the sample, and reserves its ring slot; nil when it was
  /// refused or dropped (counted).
  private func reserve(
    kind: SampleKind, pts: MediaTime, dts: MediaTime?, isKeyframe: Bool,
    payload: UnsafeRawBufferPointer, nalUnits: AVCCSummary?
  ) -> Reservation? {
    let now = clock.now()
    return capture.withLock { capture -> Reservation? in
      guard let format = capture.formats.format(for: kind) else {
        _ = refuse(kind, .invalid)
        return nil
      }
      // A refused video frame may be a reference: the frames after it must wait for a keyframe.
      let lost = kind == .video
      guard payload.count > 0 else {
        _ = refuse(kind, .invalid, awaitKeyframe: lost)
        return nil
      }
      guard payload.count <= maximumSampleBytes else {
        _ = refuse(
          kind, .tooLarge, awaitKeyframe: lost,
          event: .sampleTooLarge(kind: kind, bytes: payload.count, limit: maximumSampleBytes))
        return nil
      }
      var payload = payload
      var headerBytes = 0
      if case .aac(let aac) = format, let adts = ADTSPrefix(parsing: payload) {
        let track = Int(kind.rawValue)
        do throws(FormatError) { try adts.validate(against: aac) } catch {
          let first = !capture.reportedADTSRefusal[track]
          capture.reportedADTSRefusal[track] = true
          _ = refuse(kind, .invalid, event: first ? .sampleRefused(kind: kind, error: error) : nil)
          return nil
        }
        headerBytes = adts.headerSize
        payload = UnsafeRawBufferPointer(rebasing: payload[adts.headerSize...])
        if kind == .audioMic {
          adtsRemovedMic.add(1, ordering: .relaxed)
        } else {
          adtsRemovedApp.add(1, ordering: .relaxed)
        }
        if !capture.reportedADTS[track] {
          capture.reportedADTS[track] = true
          shared.withLock { $0.events.push(.adtsHeadersRemoved(kind: kind)) }
        }
      }
      let stamp: Timeline.Stamp
      do throws(TimelineError) {
        stamp = try capture.timeline.stamp(kind: kind, pts: pts, dts: dts)
      } catch .awaitingSharedClock {
        _ = refuse(kind, .awaitingClock)
        return nil
      } catch .behindPlacedFrames {
        _ = refuse(kind, .catchingUp, stamp: nil)
        return nil
      } catch {
        _ = refuse(kind, .invalid, awaitKeyframe: lost)
        return nil
      }
      if kind == .video && stamp.isOutOfOrder && !isKeyframe {
        _ = refuse(kind, .outOfOrder, awaitKeyframe: true, stamp: stamp)
        return nil
      }
      var summary: AVCCSummary?
      if let video = format.video {
        if let nalUnits, nalUnits.describes(payload, lengthSize: video.nalLengthSize) {
          summary = nalUnits
        } else {
          do throws(FormatError) { summary = try video.summarize(payload) } catch {
            _ = refuse(kind, .invalid, awaitKeyframe: lost)
            return nil
          }
        }
      }
      let disposable = summary?.isDisposable ?? false
      var isKeyframe = isKeyframe
      var isRecoveryPoint = false
      if kind == .video && isKeyframe, let video = format.video {
        isKeyframe = capture.admitKeyframe(pts: stamp.pts, summary: summary, video: video)
        isRecoveryPoint = !isKeyframe
      }
      if kind == .video && capture.awaitingFirstKeyframe {
        // Video that starts mid-GOP: drop until the first keyframe, and ask for one.
        guard isKeyframe else {
          _ = refuse(kind, .awaitingKeyframe, awaitKeyframe: true, stamp: stamp)
          return nil
        }
        capture.awaitingFirstKeyframe = false
      }
      let track = Int(kind.rawValue)
      let discontinuity = stamp.isDiscontinuity || capture.pendingDiscontinuity[track]
      capture.pendingDiscontinuity[track] = discontinuity
      let tier = self.tier
      if kind == .audioMic && tier >= .noMic {
        _ = refuse(kind, .tierMic, stamp: stamp)
        return nil
      }
      if kind == .video && !isKeyframe {
        if tier >= .keyframesOnly {
          _ = refuse(kind, .tierKeyframesOnly, awaitKeyframe: true, stamp: stamp)
          return nil
        }
        if disposable && tier >= .reducedFrameRate {
          _ = refuse(kind, .tierDisposable, stamp: stamp)
          return nil
        }
      }
      let info = SendRing.UnitInfo(
        kind: kind, pts: stamp.pts, dts: stamp.dts, isKeyframe: kind.isAudio || isKeyframe,
        isDisposable: disposable, isDiscontinuity: discontinuity,
        isLeading: kind == .video && !isKeyframe
          && format.video.map { capture.isLeading(pts: stamp.pts, summary: summary, video: $0) }
            ?? false,
        isRecoveryPoint: isRecoveryPoint
      )
      var layout: TSPacketizer.Layout?
      if let packetizer = capture.packetizer {
        do throws(FormatError) {
          layout = try packetizer.layout(
            kind: kind, pts: stamp.pts, dts: stamp.dts, isKeyframe: info.isKeyframe,
            payload: payload, nalUnits: summary)
        } catch {
          _ = refuse(kind, .invalid, awaitKeyframe: lost, stamp: stamp)
          return nil
        }
      }
      let byteCount = layout?.byteCount ?? payload.count
      let slot = shared.withLock {
        $0.reserve(
          info, byteCount: byteCount, stamp: stamp, now: now, budget: budget, tier: currentTier)
      }
      guard let slot else { return nil }
      return Reservation(
        kind: kind, stamp: stamp, isKeyframe: info.isKeyframe, lost: lost, layout: layout,
        headerBytes: headerBytes, slot: slot, now: now)
    }
  }

  /// Writes the reserved unit into its slot: its TS packets, or the access unit as it is.
  /// Outside the shared lock: the sender never sees a reserved slot.
  /// - Returns: false when the payload was not the sample measured (the slot is given back).
  private func fill(_ reservation: Reservation, payload: UnsafeRawBufferPointer) -> Bool {
    let payload = UnsafeRawBufferPointer(rebasing: payload[reservation.headerBytes...])
    guard let layout = reservation.layout else {
      reservation.slot.copyMemory(from: payload)
      return true
    }
    return capture.withLock { capture in
      guard let packetizer = capture.packetizer else { return false }
      do throws(FormatError) {
        _ = try packetizer.write(layout, payload: payload, into: reservation.slot)
        return true
      } catch {
        return false
      }
    }
  }

  /// Commits the reserved slot when it was `written`, or gives it back and counts the unit as
  /// invalid. Returns whether the unit entered the ring.
  private func finish(_ reservation: Reservation, written: Bool) -> Bool {
    let accepted = shared.withLock {
      $0.finishReservation(
        of: reservation.kind, written: written, awaitKeyframe: reservation.lost,
        now: reservation.now, budget: budget, tier: currentTier)
    }
    if accepted {
      let track = Int(reservation.kind.rawValue)
      capture.withLock { $0.pendingDiscontinuity[track] = false }
    }
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
    capture.withLock { capture in
      guard let current = capture.formats.format(for: kind) else { return false }
      guard current != format else { return true }
      capture.adopt(format, for: kind)
      shared.withLock { $0.noteFormatChange(format, for: kind) }
      return true
    }
  }

  /// A sample the input refused before it reached `append` (a corrupt record): a lost video
  /// frame may be a reference, so the video after it waits for the next keyframe (counted as
  /// `awaitingKeyframe`) and a keyframe is requested. Every lost sample is counted
  /// (`PipelineSnapshot.lost`): a run whose video was all lost did not deliver it.
  public func sampleLost(_ kind: SampleKind) {
    let now = clock.now()
    shared.withLock {
      $0.counters.lost[kind] += 1
      guard kind == .video else { return }
      $0.ring.startAwaitingKeyframe()
      $0.noteRingChange(now: now, budget: budget, tier: currentTier)
    }
  }

  /// Counts a sample that does not enter the ring, and queues `event` when given; returns
  /// false for `append` to return.
  private func refuse(
    _ kind: SampleKind, _ reason: DropReason, awaitKeyframe: Bool = false,
    stamp: Timeline.Stamp? = nil, event: PipelineEvent? = nil
  ) -> Bool {
    let now = clock.now()
    shared.withLock {
      if let event { $0.events.push(event) }
      if case .sampleTooLarge(_, let bytes, _)? = event {
        $0.counters.largestRefusedSample = max($0.counters.largestRefusedSample, bytes)
      }
      $0.refuse(
        kind, reason, awaitKeyframe: awaitKeyframe, stamp: stamp, now: now, budget: budget,
        tier: currentTier)
    }
    return false
  }

  // MARK: Sender thread

  /// How the sender ended the unit it took from the ring.
  public enum SendCompletion: Sendable {
    /// Delivered: `bytes` on the wire, prefix included.
    case sent(SampleKind, bytes: Int)
    /// Taken by the sink without being sent (see `SinkWriteResult.discarded`): it leaves the
    /// ring and is counted as dropped for the reason, not as sent.
    case discarded(SampleKind, DropReason)
  }

  /// Ends the unit in flight as `completion` (when given), then takes the oldest waiting unit,
  /// with the format record a `changeFormat` before it set for its track (nil when the announced
  /// one, `tracks`, is in force). One lock for both, so a sender takes the lock once per unit.
  /// - Returns: nil when the ring is empty.
  public func nextSend(after completion: SendCompletion?) -> (
    unit: SendRing.InFlightUnit, format: FormatDescription?
  )? {
    let now = completion == nil ? .origin : clock.now()
    return shared.withLock { shared in
      switch completion {
      case .sent(let kind, let bytes)?:
        shared.ring.completeSend()
        shared.counters.sent[Int(kind.rawValue)] += 1
        shared.counters.sentBytes += Int64(bytes)
        shared.noteRingChange(now: now, budget: budget, tier: currentTier)
      case .discarded(let kind, let reason)?:
        shared.ring.completeSend()
        shared.ring.countDrop(kind, reason)
        shared.noteRingChange(now: now, budget: budget, tier: currentTier)
      case nil:
        break
      }
      guard let unit = shared.ring.beginSend() else { return nil }
      // Asked in the order units are sent, so the changes older units needed are forgotten.
      return (unit, shared.format(of: unit.info.kind, at: unit.sequence))
    }
  }

  /// Takes the oldest waiting unit; nil when the ring is empty.
  public func beginSend() -> SendRing.InFlightUnit? {
    shared.withLock { $0.ring.beginSend() }
  }

  /// The format record a `changeFormat` before `unit` set for its track, in force when the unit
  /// was appended; nil when the announced one (`tracks`) is. Asked in the order units are sent,
  /// so the changes older units needed are forgotten.
  public func format(for unit: SendRing.InFlightUnit) -> FormatDescription? {
    // The unit's Sendable parts only: the lock's state must not share a region with the caller's.
    let (kind, sequence) = (unit.info.kind, unit.sequence)
    return shared.withLock { $0.format(of: kind, at: sequence) }
  }

  /// The unit from `beginSend` was delivered (`bytes` on the wire, prefix included).
  public func completeSend(_ unit: SendRing.InFlightUnit, bytes: Int) {
    let now = clock.now()
    shared.withLock {
      $0.ring.completeSend()
      $0.counters.sent[Int(unit.info.kind.rawValue)] += 1
      $0.counters.sentBytes += Int64(bytes)
      $0.noteRingChange(now: now, budget: budget, tier: currentTier)
    }
  }

  /// The sink took the unit from `beginSend` without sending it (see `SinkWriteResult.discarded`):
  /// it leaves the ring and is counted as dropped for `reason`, not as sent.
  public func discardSend(_ unit: SendRing.InFlightUnit, reason: DropReason) {
    let now = clock.now()
    shared.withLock {
      $0.ring.completeSend()
      $0.ring.countDrop(unit.info.kind, reason)
      $0.noteRingChange(now: now, budget: budget, tier: currentTier)
    }
  }

  /// After a reconnect: drops what is older than the newest waiting keyframe (the unit in flight
  /// included), so the new connection starts at a keyframe.
  public func skipToNewestKeyframe() {
    let now = clock.now()
    shared.withLock {
      $0.ring.skipToNewestKeyframe()
      $0.noteRingChange(now: now, budget: budget, tier: currentTier)
    }
  }

  // MARK: Reporter

  /// Enters a resident-memory reading (taken about once a second by the reporter).
  public func updateResident(_ bytes: Int?) {
    let now = clock.now()
    shared.withLock {
      $0.counters.resident = bytes
      if let bytes { $0.counters.peakResident = max($0.counters.peakResident ?? 0, bytes) }
      $0.noteRingChange(now: now, budget: budget, tier: currentTier)
    }
  }

  /// Enters the sink's congestion signal (0...1).
  public func updateSinkCongestion(_ value: Double) {
    shared.withLock { $0.sinkCongestion = max(0, min(1, value)) }
  }

  /// The DTS span of the units waiting in the ring (90 kHz ticks): the backlog the output has
  /// not taken yet. Cheaper than a `snapshot`.
  public var waitingTicks: Int64 { shared.withLock { $0.ring.waitingDuration } }

  /// A copy of the counters.
  public func snapshot() -> PipelineSnapshot {
    var snapshot = shared.withLock { $0.snapshot() }
    snapshot.adtsRemoved[.audioApp] = adtsRemovedApp.load(ordering: .relaxed)
    snapshot.adtsRemoved[.audioMic] = adtsRemovedMic.load(ordering: .relaxed)
    return snapshot
  }

  /// Removes and returns the oldest queued event.
  public func nextEvent() -> PipelineEvent? {
    shared.withLock { $0.events.pop() }
  }
}
