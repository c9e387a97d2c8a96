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
      headroom: headroom, durationLimit: configuration.bufferTicks)
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
    let now = clock.now()
    return capture.withLock { capture in
      guard let format = capture.formats.format(for: kind) else {
        return refuse(kind, .invalid)
      }
      // A refused video frame may be a reference: the frames after it must wait for a keyframe.
      let lost = kind == .video
      guard payload.count > 0 else { return refuse(kind, .invalid, awaitKeyframe: lost) }
      guard payload.count <= maximumSampleBytes else {
        return refuse(
          kind, .tooLarge, awaitKeyframe: lost,
          event: .sampleTooLarge(kind: kind, bytes: payload.count, limit: maximumSampleBytes))
      }
      var payload = payload
      if case .aac(let aac) = format, let adts = ADTSPrefix(parsing: payload) {
        let track = Int(kind.rawValue)
        do throws(FormatError) { try adts.validate(against: aac) } catch {
          let first = !capture.reportedADTSRefusal[track]
          capture.reportedADTSRefusal[track] = true
          return refuse(
            kind, .invalid, event: first ? .sampleRefused(kind: kind, error: error) : nil)
        }
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
        return refuse(kind, .awaitingClock)
      } catch {
        return refuse(kind, .invalid, awaitKeyframe: lost)
      }
      var summary: AVCCSummary?
      if let video = format.video {
        if let nalUnits, nalUnits.describes(payload, lengthSize: video.nalLengthSize) {
          summary = nalUnits
        } else {
          do throws(FormatError) { summary = try video.summarize(payload) } catch {
            return refuse(kind, .invalid, awaitKeyframe: lost)
          }
        }
      }
      let disposable = summary?.isDisposable ?? false
      var isKeyframe = isKeyframe
      if kind == .video && isKeyframe, let video = format.video {
        isKeyframe = capture.admitKeyframe(pts: stamp.pts, summary: summary, video: video)
      }
      if kind == .video && capture.awaitingFirstKeyframe {
        // Video that starts mid-GOP: drop until the first keyframe, and ask for one.
        guard isKeyframe else {
          return refuse(kind, .awaitingKeyframe, awaitKeyframe: true, stamp: stamp)
        }
        capture.awaitingFirstKeyframe = false
      }
      let track = Int(kind.rawValue)
      let discontinuity = stamp.isDiscontinuity || capture.pendingDiscontinuity[track]
      capture.pendingDiscontinuity[track] = discontinuity
      let tier = self.tier
      if kind == .audioMic && tier >= .noMic {
        return refuse(kind, .tierMic, stamp: stamp)
      }
      if kind == .video && !isKeyframe {
        if tier >= .keyframesOnly {
          return refuse(kind, .tierKeyframesOnly, awaitKeyframe: true, stamp: stamp)
        }
        if disposable && tier >= .reducedFrameRate {
          return refuse(kind, .tierDisposable, stamp: stamp)
        }
      }
      let info = SendRing.UnitInfo(
        kind: kind, pts: stamp.pts, dts: stamp.dts, isKeyframe: kind.isAudio || isKeyframe,
        isDisposable: disposable, isDiscontinuity: discontinuity,
        isLeading: kind == .video && !isKeyframe
          && format.video.map { capture.isLeading(pts: stamp.pts, summary: summary, video: $0) }
            ?? false
      )
      var layout: TSPacketizer.Layout?
      if let packetizer = capture.packetizer {
        do throws(FormatError) {
          layout = try packetizer.layout(
            kind: kind, pts: stamp.pts, dts: stamp.dts, isKeyframe: info.isKeyframe,
            payload: payload, nalUnits: summary)
        } catch {
          return refuse(kind, .invalid, awaitKeyframe: lost, stamp: stamp)
        }
      }
      let byteCount = layout?.byteCount ?? payload.count
      let slot = shared.withLock {
        $0.reserve(
          info, byteCount: byteCount, stamp: stamp, now: now, budget: budget, tier: currentTier)
      }
      guard let slot else { return false }
      // Outside the shared lock: the sender never sees a reserved slot.
      var written = true
      if let packetizer = capture.packetizer, let layout {
        do throws(FormatError) {
          _ = try packetizer.write(layout, payload: payload, into: slot)
        } catch {
          written = false
        }
      } else {
        slot.copyMemory(from: payload)
      }
      let accepted = shared.withLock {
        $0.finishReservation(
          of: kind, written: written, awaitKeyframe: lost, now: now, budget: budget,
          tier: currentTier)
      }
      if accepted { capture.pendingDiscontinuity[track] = false }
      return accepted
    }
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
    let now = completion == nil ? 0 : clock.now()
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
