/// Moves units from the pipeline's ring to a sink: connects, writes, reconnects with backoff.
///
/// `pump` never sleeps; it returns when the ring is empty, the sink asks to wait, or a retry is
/// scheduled. A thread (live sinks) or the replay loop (simulations) calls it again at the time it
/// names. For TS sinks it writes PAT/PMT/PCR in front of units and stamps continuity counters here,
/// after every drop has been decided, so the receiver sees no continuity errors.
public final class Sender {
  /// The outcome of one `pump`.
  public enum PumpResult: Equatable, Sendable {
    /// The ring is empty.
    case idle
    /// Call again at this time (the sink is rate-limited, or a reconnect is scheduled).
    case blocked(until: MonotonicInstant)
    /// A fatal sink error stopped the sender.
    case failed(SinkError)
  }

  private let pipeline: Pipeline
  public let sink: any OutputSink
  private var output: TSOutputStream?
  private let prefix: UnsafeMutableRawBufferPointer
  private var backoff: Backoff
  private var connected = false
  /// Connected, but the sink's session is not up yet (`OutputSink.isEstablished`): the
  /// `connected` event waits for it.
  private var awaitingEstablishment = false
  private var connections = 0
  private var retryAt: MonotonicInstant = .distantPast
  private var failure: SinkError?
  /// Why the last connection attempt or connection failed, for the end-of-run error.
  private var lastRetryError: SinkError?
  /// The formats the sink has: those it was opened with, then each one passed with a unit.
  private var sinkFormats: TrackFormats
  private var current:
    (unit: SendRing.InFlightUnit, bytes: UnsafeRawBufferPointer, outgoing: OutgoingUnit)?
  /// Receives connection events on the sender's thread.
  public var onEvent: (SenderEvent) -> Void = { _ in }
  /// Called on the sender's thread with `true` just before the sink is asked to connect (a call
  /// that may block for its whole connect timeout) and with `false` once it returned.
  public var onConnectAttempt: (Bool) -> Void = { _ in }
  /// Reads the time a failed attempt ended: the backoff counts from there.
  private let clock: (any PipelineClock)?

  /// - Parameters:
  ///   - pipeline: the source of units.
  ///   - sink: the destination; its payload format must match the pipeline's.
  ///   - backoff: the delays between attempts.
  ///   - clock: read when an attempt fails, so that the next one waits its delay from the end of
  ///     the failed one (a connect can block for seconds); without it the `now` given to `pump`.
  public init(
    pipeline: Pipeline, sink: any OutputSink, backoff: Backoff = Backoff(),
    clock: (any PipelineClock)? = nil
  ) {
    precondition(pipeline.payloadFormat == sink.payloadFormat)
    self.pipeline = pipeline
    self.sink = sink
    self.backoff = backoff
    self.clock = clock
    sinkFormats = pipeline.tracks
    if pipeline.payloadFormat == .transportStream {
      output = TSOutputStream(program: pipeline.tracks)
    }
    prefix = .allocate(byteCount: TSOutputStream.maximumPrefixSize, alignment: 16)
  }

  deinit { prefix.deallocate() }

  /// Whether the sink is connected.
  public var isConnected: Bool { connected }

  /// Whether the sink was ever connected: until then the output never answered, so the end of a
  /// run has nothing to wait for.
  public var hasConnected: Bool { connections > 0 }

  /// Sends what the ring holds, as far as the sink takes it at `now`.
  public func pump(now: MonotonicInstant) -> PumpResult {
    if let failure { return .failed(failure) }
    if !connected {
      if now < retryAt { return .blocked(until: retryAt) }
      if let result = connect(now: now) { return result }
    }
    if awaitingEstablishment && sink.isEstablished {
      awaitingEstablishment = false
      backoff.reset()
      onEvent(.connected(attempt: connections))
    }
    // The unit just written goes back to the ring with the next one taken: one lock per unit.
    var completion: Pipeline.SendCompletion?
    while true {
      if current == nil {
        guard let (unit, format) = pipeline.nextSend(after: completion) else { return .idle }
        completion = nil
        current = prepare(unit, format: format)
      }
      guard let (unit, bytes, outgoing) = current else { return .idle }
      do {
        switch try sink.write(outgoing, bytes: bytes, now: now) {
        case .written:
          completion = .sent(unit.info.kind, bytes: bytes.count)
          current = nil
        case .discarded(let reason):
          completion = .discarded(unit.info.kind, reason)
          current = nil
        case .wouldBlock(let until):
          return .blocked(until: until)
        }
      } catch {
        current = nil
        return handle(error, now: now, wasConnected: true)
      }
    }
  }

  /// Finishes the sink after the ring was drained.
  /// - Throws: the failure that stopped the sender, or, when the run ends disconnected, the
  ///   failure of the last attempt (what the ring still holds never reached the output, so the
  ///   run did not deliver).
  public func finish() throws(SinkError) {
    if let failure { throw failure }
    guard connected else {
      throw lastRetryError
        ?? .connect(
          endpoint: sink.redactedDescription, reason: "no connection was made", retryable: true)
    }
    try sink.finish()
  }

  private func connect(now: MonotonicInstant) -> PumpResult? {
    onConnectAttempt(true)
    do {
      try sink.open(tracks: pipeline.tracks)
    } catch {
      onConnectAttempt(false)
      return handle(error, now: now, wasConnected: false)
    }
    onConnectAttempt(false)
    connected = true
    connections += 1
    sinkFormats = pipeline.tracks
    if connections > 1 {
      // The in-flight unit may have been half-written to the old connection: start afresh at a
      // keyframe with PAT/PMT and discontinuity indicators.
      current = nil
      pipeline.skipToNewestKeyframe()
      output?.forcePSI()
      output?.forceDiscontinuity()
    }
    // The backoff starts afresh once the connection is up: a session that never comes up
    // (an endpoint that answers, then ICE fails) keeps its growing delays.
    if sink.isEstablished {
      backoff.reset()
      onEvent(.connected(attempt: connections))
    } else {
      awaitingEstablishment = true
    }
    return nil
  }

  private func handle(_ error: SinkError, now: MonotonicInstant, wasConnected: Bool) -> PumpResult {
    guard error.isRetryable else {
      failure = error
      sink.close()
      connected = false
      awaitingEstablishment = false
      onEvent(.failed(reason: error.description))
      return .failed(error)
    }
    lastRetryError = error
    let reason = error.description
    if wasConnected {
      sink.close()
      connected = false
      // A session that never came up was an attempt that failed, not a connection lost.
      if !awaitingEstablishment { onEvent(.disconnected(reason: reason)) }
      awaitingEstablishment = false
    }
    let delay = backoff.next()
    retryAt = max(now, clock?.now() ?? now) + delay
    onEvent(.retrying(reason: reason, delay: delay))
    return .blocked(until: retryAt)
  }

  /// Writes the PSI/PCR prefix into the unit's headroom and stamps its packets. `format`: the
  /// record a format change set for the unit's track (`Pipeline.nextSend`).
  private func prepare(_ unit: SendRing.InFlightUnit, format: FormatDescription?) -> (
    SendRing.InFlightUnit, UnsafeRawBufferPointer, OutgoingUnit
  ) {
    var prefixLength = 0
    if output != nil {
      let packets = UnsafeMutableRawBufferPointer(rebasing: unit.slot[unit.headroom...])
      prefixLength = output!.prepare(
        unit: packets, kind: unit.info.kind, dts: unit.info.dts, isKeyframe: unit.info.isKeyframe,
        discontinuity: unit.info.isDiscontinuity, prefix: prefix)
      UnsafeMutableRawBufferPointer(
        rebasing: unit.slot[(unit.headroom - prefixLength)..<unit.headroom]
      )
      .copyMemory(from: UnsafeRawBufferPointer(rebasing: prefix[..<prefixLength]))
    }
    let bytes = UnsafeRawBufferPointer(rebasing: unit.slot[(unit.headroom - prefixLength)...])
    var changed: FormatDescription?
    // Nil: the announced format, which the sink had from `open` (units go in append order, so
    // none of them follows a changed one).
    if let format, format != sinkFormats.format(for: unit.info.kind) {
      changed = format
      sinkFormats.set(format, for: unit.info.kind)
    }
    let outgoing = OutgoingUnit(
      kind: unit.info.kind, pts: unit.info.pts, dts: unit.info.dts,
      isKeyframe: unit.info.isKeyframe,
      isDiscontinuity: unit.info.isDiscontinuity, prefixLength: prefixLength, format: changed,
      isRecoveryPoint: unit.info.isRecoveryPoint)
    return (unit, bytes, outgoing)
  }
}
