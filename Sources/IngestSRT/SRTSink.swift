import CSRT
import IngestCore
import IngestPOSIX

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Sends the pipeline's MPEG-TS over SRT as a caller, a listener (waiting for its receiver to
/// connect) or a rendezvous peer: live transmission type, every message exactly 7 × 188 = 1316
/// bytes (the last one of a run may be shorter). In every mode a lost connection is a retryable
/// error: the sender backs off and `open` connects, or waits for a caller, again.
///
/// Sends block at most `sendTimeoutMilliseconds`; a send that times out answers `.wouldBlock`
/// and the sink remembers how much of the unit already left, so the sender must offer the same
/// unit again (see `write`). One connection at a time: `open` closes any previous socket first.
///
/// A connection on which nothing is acknowledged for `options.effectiveStallTimeoutMilliseconds`
/// while data waits is given up with a `.timeout` error, so the sender reports it and
/// reconnects through its backoff.
public final class SRTSink: OutputSink {
  /// Where and how to connect.
  public let options: SRTOptions
  /// The run's clock: the progress watchdog, the drop ledger and the drain deadlines. libsrt
  /// runs on real time, so a run with an SRT output has a real one.
  private let clock: any PacingClock
  /// libsrt send buffer size in bytes (`SRTO_SNDBUF`), fixed at init.
  public let sendBufferBytes: Int
  /// How long `open` waits for the listener (`SRTO_CONNTIMEO`).
  public let connectTimeoutMilliseconds: Int
  /// How long one message send may block when the send buffer is full (`SRTO_SNDTIMEO`).
  public let sendTimeoutMilliseconds: Int
  /// Added to the time spent blocked when computing `wouldBlock(retryAt:)`.
  public let retryDelay: TimeSpan
  /// `srt://host:port`, what errors name: no query, so no secret.
  private let endpoint: String

  private var socket: SRTSocket?
  /// Listener mode: the socket callers connect to.
  private var listener: SRTSocket?
  private var chunker: SRTMessageChunker
  /// Receiver latency agreed at connect (the larger of both sides' wishes), in milliseconds.
  private var agreedLatencyMilliseconds = SRTOptions.defaultLatencyMilliseconds
  /// When the last message was handed to libsrt.
  private var lastSend: MonotonicInstant = .origin
  private var watchdog = SRTProgressWatchdog(now: .origin)
  private var linkMeter = SRTLinkMeter()
  private var queueLimit = SRTQueueLimit()
  /// The round trip measured while connecting (the probe's, or a quick handshake's).
  private var connectRoundTripMilliseconds: Double?
  private var streamRate = SRTStreamRate()
  /// The last unit `streamRate` counted.
  private var lastCounted: (kind: SampleKind, dts: Int64)?
  private var dropLedger = SRTDropLedger()
  /// Whether each send is preceded by a reading of libsrt's counters (see `write`).
  private var readsBeforeSend = false
  /// When a unit last went out past the queue bound because nothing was acknowledged for a
  /// latency (see `write`); `nil` on a new connection.
  private var lastNudge: MonotonicInstant?
  /// Bytes handed to libsrt on this connection: with its buffer and drops, what it delivered.
  private var handedBytes: Int64 = 0

  /// The figures of the last connection as it closed (after `finish` or `close`), for an
  /// end-of-run summary; `nil` before the first connection ends.
  public private(set) var finalStatistics: SRTStatistics?

  /// The smallest send buffer accepted: libsrt needs room for its minimum flight window.
  public static let minimumSendBufferBytes = 32 * 1472

  /// - Parameters:
  ///   - options: URL options (destination, latency, encryption, stream id, bandwidth cap).
  ///   - sendBufferBytes: libsrt's send buffer; raised to `minimumSendBufferBytes` if smaller.
  ///     It bounds how much unacknowledged data libsrt keeps and is entered in the memory ledger.
  ///   - connectTimeoutMilliseconds: connection attempt limit; `nil` takes the URL's `conntimeo`
  ///     (3 s when it has none).
  ///   - sendTimeoutMilliseconds: how long one send may block on a full buffer.
  ///   - retryDelay: pause suggested after a blocked send.
  ///   - clock: the run's clock.
  public init(
    options: SRTOptions, sendBufferBytes: Int = 2 << 20, connectTimeoutMilliseconds: Int? = nil,
    sendTimeoutMilliseconds: Int = 500, retryDelay: TimeSpan = .milliseconds(10),
    clock: any PacingClock = SystemClock()
  ) {
    self.options = options
    self.clock = clock
    let host = options.host.utf8.contains(UInt8(ascii: ":")) ? "[\(options.host)]" : options.host
    endpoint = "srt://\(host):\(options.port)"
    chunker = SRTMessageChunker(endpoint: endpoint)
    self.sendBufferBytes = max(sendBufferBytes, Self.minimumSendBufferBytes)
    self.connectTimeoutMilliseconds = max(
      connectTimeoutMilliseconds ?? options.effectiveConnectTimeoutMilliseconds, 1)
    self.sendTimeoutMilliseconds = max(sendTimeoutMilliseconds, 1)
    self.retryDelay = max(retryDelay, .zero)
  }

  deinit {
    socket?.close()
    listener?.close()
  }

  public var payloadFormat: PayloadFormat { .transportStream }

  /// libsrt's send buffer plus the carry that assembles 1316-byte messages.
  public var bufferBytes: Int { sendBufferBytes + SRTMessageChunker.messageSize }

  /// The fuller of two ratios: buffered time against the latency, buffered bytes against the
  /// send buffer. 0 when not connected.
  public var congestion: Double {
    guard let stats = socket?.statistics() else { return 0 }
    let latency = Double(max(options.effectiveLatencyMilliseconds, 1))
    let byTime = Double(max(stats.msSndBuf, 0)) / latency
    let byBytes = Double(max(stats.byteSndBuf, 0)) / Double(sendBufferBytes)
    return min(max(byTime, byBytes, 0), 1)
  }

  public var redactedDescription: String { "SRT \(options.redacted)" }

  /// Whether a socket is open and libsrt reports it connected.
  public var isConnected: Bool { socket?.isConnected ?? false }

  /// Current connection figures, or `nil` when not connected. Cheap enough to call each second.
  public func statistics() -> SRTStatistics? {
    guard let socket else { return nil }
    return Self.statistics(of: socket)
  }

  /// How much longer than the round trip the newest byte takes to reach the receiver
  /// (`SRTQueueLimit.queuedMilliseconds`): libsrt's unsent packets are its buffer less its
  /// flight (sent, not yet acknowledged, lost ones included).
  private func queuedMilliseconds(_ stats: SRT_TRACEBSTATS) -> Double {
    queueLimit.queuedMilliseconds(
      unsentBytes: unsentBytes(stats), sendBufferMilliseconds: Int(stats.msSndBuf))
  }

  /// libsrt's smoothed round trip once it is a measurement, 0 before (`SRTMeasuredRoundTrip`).
  private func measuredRoundTrip(_ stats: SRT_TRACEBSTATS) -> Double {
    measuredRTT.reading(stats.msRTT) ?? 0
  }

  private var measuredRTT = SRTMeasuredRoundTrip()
  private var roundTripMeasured: Bool { measuredRTT.measured }

  /// Bytes libsrt holds that it has not sent yet: its buffer less its flight (sent, not yet
  /// acknowledged, lost ones included).
  private func unsentBytes(_ stats: SRT_TRACEBSTATS) -> Int {
    max(0, Int(stats.pktSndBuf) - Int(stats.pktFlightSize)) * SRTMessageChunker.messageSize
  }

  /// The link from libsrt's statistics of the open connection.
  public func linkEstimate(now: MonotonicInstant) -> LinkEstimate? {
    guard let socket, socket.isConnected, let stats = socket.statistics() else { return nil }
    let roundTrip = measuredRoundTrip(stats)
    // The queue as the status shows it: the flight, then what waits beyond it.
    var estimate = linkMeter.estimate(
      stats, handedBytes: handedBytes, now: now, latencyMilliseconds: agreedLatencyMilliseconds,
      queueMilliseconds: queueLimit.inFlightMilliseconds + queuedMilliseconds(stats),
      roundTripMilliseconds: roundTrip > 0 ? roundTrip : nil)
    // The queue as the rate controller reads it: what libsrt has not sent yet, never the span
    // of what waits for an acknowledgement (a retransmission wait on a lossy path).
    estimate.unsentMilliseconds = queueLimit.unsentMilliseconds(
      unsentBytes: unsentBytes(stats), fallbackBytesPerSecond: streamRate.bytesPerSecond)
    let clock = self.clock.now()
    // Every reading also dates acknowledgements for the ledger's possibly lost units.
    observeDrops(stats, now: clock)
    watchdog.observe(
      acknowledgements: Int64(stats.pktRecvACKTotal), unacknowledged: Int(stats.pktSndBuf),
      now: clock)
    estimate.stalledMilliseconds =
      watchdog.sinceProgress(now: clock).inMilliseconds
    return estimate
  }

  public func linkReading() -> LinkReading? {
    statistics().map {
      LinkReading(
        roundTripMilliseconds: $0.roundTripMilliseconds,
        sendBufferMilliseconds: $0.sendBufferMilliseconds)
    }
  }

  public var summaryFields: JSONObject? {
    var object = JSONObject()
    var possiblyLost = JSONObject()
    for kind in SampleKind.allCases {
      possiblyLost.add(kind.description, dropLedger.possiblyLostUnits[Int(kind.rawValue)])
    }
    object.add("possibly_lost", possiblyLost)
    object.add("late_units", dropLedger.lateUnits)
    object.add("played_late", dropLedger.playedLate)
    return object
  }

  public var summaryLine: String? {
    let video = dropLedger.possiblyLostUnits[Int(SampleKind.video.rawValue)]
    guard video > 0 else { return nil }
    return "\(video) video frames counted as sent possibly lost (acknowledged only at their "
      + "play-out deadline, or after a lost frame before the next keyframe)"
  }

  /// The `stats` of the periodic `sink` status event.
  public func statusFields() -> JSONObject? {
    guard let stats = statistics() else { return nil }
    var object = JSONObject()
    object.add("send_buffer_ms", stats.sendBufferMilliseconds)
    object.add("send_buffer_bytes", stats.sendBufferBytes)
    object.add("rtt_ms", stats.roundTripMilliseconds)
    object.add("bandwidth_mbps", stats.estimatedBandwidthMbps)
    object.add("too_late_drops", stats.tooLateDroppedPackets)
    object.add("bytes_sent", Int64(stats.bytesSent))
    object.add("retransmitted", stats.retransmittedPackets)
    object.add("late_units", dropLedger.lateUnits)
    object.add("played_late", dropLedger.playedLate)
    object.add(
      "stalled_ms",
      Int(watchdog.sinceProgress(now: clock.now()).wholeMilliseconds))
    // What the send limit reads (`SRTQueueLimit`): the path's round trip (0 while unknown or
    // settling after an outage), the round trip above it, and the link's drain rate.
    object.add("path_rtt_ms", queueLimit.minimumRoundTripMilliseconds, decimals: 1)
    object.add("path_queue_ms", Int(queueLimit.pathQueueMilliseconds.rounded()))
    if let drain = queueLimit.drainBytesPerSecond { object.add("drain_bps", Int64(drain * 8)) }
    return object
  }

  private static func statistics(of socket: SRTSocket) -> SRTStatistics? {
    guard let stats = socket.statistics() else { return nil }
    return SRTStatistics(
      sendBufferMilliseconds: Int(stats.msSndBuf), sendBufferBytes: Int(stats.byteSndBuf),
      roundTripMilliseconds: stats.msRTT, estimatedBandwidthMbps: stats.mbpsBandwidth,
      tooLateDroppedPackets: Int(stats.pktSndDropTotal), bytesSent: stats.byteSentTotal,
      retransmittedPackets: Int(stats.pktRetransTotal))
  }

  /// Connects (caller, rendezvous) or waits up to the connect timeout for a caller (listener).
  public func open(tracks: TrackFormats) throws(SinkError) {
    close()
    let socket: SRTSocket
    var roundTrip: (milliseconds: Double, source: String)?
    var deferCheck = false
    var asked = options.latencyMilliseconds
    if options.mode == .listener {
      socket = try listening().accept(timeoutMilliseconds: connectTimeoutMilliseconds)
    } else {
      if options.latencyIsAuto, options.mode == .caller,
        let probed = SRTHandshakeProbe.roundTripMilliseconds(
          host: options.host, port: options.port)
      {
        roundTrip = (probed, "probe")
        asked = SRTLatencyCheck.automaticLatency(roundTripMilliseconds: probed)
      }
      socket = try SRTSocket(endpoint: endpoint)
      let started = clock.now()
      do throws(SinkError) {
        try configure(socket, latencyMilliseconds: asked)
        if options.mode == .rendezvous {
          try socket.set(SRTO_RENDEZVOUS, true, name: "rendezvous")
          let wildcard = options.host.utf8.contains(UInt8(ascii: ":")) ? "::" : "0.0.0.0"
          try socket.bind(host: wildcard, port: options.localPort ?? options.port)
        }
        try socket.connect(
          host: options.host, port: options.port, hasPassphrase: options.passphrase != nil,
          hasStreamID: options.streamID != nil,
          timeoutMilliseconds: options.mode == .caller ? connectTimeoutMilliseconds : nil)
      } catch {
        socket.close()
        throw error
      }
      // A caller's handshake is two round trips (induction, conclusion). But libsrt repeats an
      // unanswered induction every 250 ms: a longer handshake may include waiting for the
      // listener to come up, so the check waits for libsrt's own first measurement (`write`).
      let handshake = (clock.now() - started).inMilliseconds
      if roundTrip == nil, options.mode == .caller {
        if handshake < 250 { roundTrip = (handshake / 2, "handshake") } else { deferCheck = true }
      }
    }
    linkMeter.reset(connected: clock.now(), roundTripMilliseconds: roundTrip?.milliseconds)
    handedBytes = 0
    queueLimit.reset(connectRoundTripMilliseconds: roundTrip?.milliseconds ?? 0)
    connectRoundTripMilliseconds = roundTrip?.milliseconds
    measuredRTT = SRTMeasuredRoundTrip()
    runLatencyCheck = RunLatencyCheck()
    streamRate.reset()
    lastCounted = nil
    dropLedger.reset()
    lastNudge = nil
    self.socket = socket
    watchdog = SRTProgressWatchdog(now: clock.now())
    let askedOrDefault = asked ?? options.effectiveLatencyMilliseconds
    agreedLatencyMilliseconds = Int(socket.getInt32(SRTO_PEERLATENCY) ?? Int32(askedOrDefault))
    if deferCheck {
      deferredLatencyCheck = askedOrDefault
    } else {
      deferredLatencyCheck = nil
      checkLatency(asked: askedOrDefault, roundTrip: roundTrip)
    }
  }

  /// The latency asked for, while its check waits for libsrt's first round-trip measurement.
  private var deferredLatencyCheck: Int?

  /// Warns about a latency too short for the round trip, and sends the `latency` event.
  private func checkLatency(asked: Int, roundTrip: (milliseconds: Double, source: String)?) {
    let check = SRTLatencyCheck(
      askedMilliseconds: asked, agreedMilliseconds: agreedLatencyMilliseconds,
      automatic: options.latencyIsAuto, roundTripMilliseconds: roundTrip?.milliseconds,
      roundTripSource: roundTrip?.source)
    if let warning = check.warning, !warnings.contains(warning) { warnings.append(warning) }
    latencyAsked = asked
    if check.warning != nil, let rtt = roundTrip?.milliseconds {
      runLatencyCheck.warned(roundTripMilliseconds: rtt)
    }
    statusHandler?("latency", check.statusObject)
  }

  /// No acknowledgement for this long while data waits: nothing gets through (the round trip
  /// libsrt reports is then stale).
  private static let outageLength: TimeSpan = .milliseconds(300)

  /// The latency asked for at connect, for the checks during the run.
  private var latencyAsked = SRTOptions.defaultLatencyMilliseconds
  private var runLatencyCheck = RunLatencyCheck()

  /// The latency against the path's round trip for the whole run, not only at connect: a
  /// handover from 40 ms to 180 ms leaves a 200 ms latency under three round trips. Checked
  /// twice a second on the path's round trip (the least of the last seconds, not a spike); a
  /// warning (a `latency` event, standard error, the summary) when it first falls under three
  /// round trips, and again only when the round trip grew by a quarter since, or after it
  /// came back to 3.5 round trips.
  private func checkLatencyDuringRun(now: MonotonicInstant) {
    let path = queueLimit.minimumRoundTripMilliseconds
    guard roundTripMeasured, path > 0,
      runLatencyCheck.isDue(
        now: now, roundTripMilliseconds: path, latencyMilliseconds: agreedLatencyMilliseconds)
    else { return }
    runLatencyCheck.warned(roundTripMilliseconds: path)
    var check = SRTLatencyCheck(
      askedMilliseconds: latencyAsked, agreedMilliseconds: agreedLatencyMilliseconds,
      automatic: options.latencyIsAuto, roundTripMilliseconds: path, roundTripSource: "libsrt")
    check.duringRun = true
    if let warning = check.warning, !warnings.contains(warning) { warnings.append(warning) }
    statusHandler?("latency", check.statusObject)
  }

  /// Warnings of the run so far (a latency too short for the path), each once.
  public private(set) var warnings: [String] = []
  private var statusHandler: (@Sendable (String, JSONObject) -> Void)?

  public func setStatusHandler(_ handler: @escaping @Sendable (String, JSONObject) -> Void) {
    statusHandler = handler
  }

  /// The listening socket of listener mode, made on first use and kept across failed waits so
  /// that a caller arriving during a backoff waits in its backlog; renewed after a connection
  /// ends (see `close`). Accepted connections inherit its options.
  private func listening() throws(SinkError) -> SRTSocket {
    if let listener, listener.isOpen { return listener }
    let listener = try SRTSocket(endpoint: endpoint)
    do throws(SinkError) {
      try configure(listener, latencyMilliseconds: options.latencyMilliseconds)
      try listener.bind(host: options.host, port: options.port)
      try listener.listen()
    } catch {
      listener.close()
      throw error
    }
    self.listener = listener
    return listener
  }

  private func configure(_ socket: SRTSocket, latencyMilliseconds: Int?) throws(SinkError) {
    // The transport type resets other options to its defaults, so it goes first.
    try socket.set(SRTO_TRANSTYPE, SRTT_LIVE, name: "transtype")
    try socket.set(SRTO_SNDSYN, true, name: "sndsyn")
    try socket.set(SRTO_SNDTIMEO, Int32(clamping: sendTimeoutMilliseconds), name: "sndtimeo")
    try socket.set(SRTO_CONNTIMEO, Int32(clamping: connectTimeoutMilliseconds), name: "conntimeo")
    try socket.set(SRTO_PAYLOADSIZE, Int32(SRTMessageChunker.messageSize), name: "payloadsize")
    // The flight window must cover the whole send buffer or libsrt stalls before filling it.
    let packets = Int32(clamping: (sendBufferBytes + 1471) / 1472)
    try socket.set(SRTO_FC, max(packets, 32), name: "fc")
    try socket.set(SRTO_SNDBUF, Int32(clamping: sendBufferBytes), name: "sndbuf")
    if let latency = latencyMilliseconds {
      try socket.set(SRTO_LATENCY, Int32(clamping: latency), name: "latency")
    }
    if let passphrase = options.passphrase {
      try socket.set(SRTO_PASSPHRASE, secret: passphrase, name: "passphrase")
    }
    if let keyLength = options.keyLength {
      try socket.set(SRTO_PBKEYLEN, Int32(keyLength), name: "pbkeylen")
    }
    if let streamID = options.streamID {
      try socket.set(SRTO_STREAMID, secret: streamID, name: "streamid")
    }
    if let maxBandwidth = options.maxBandwidth {
      try socket.set(SRTO_MAXBW, maxBandwidth, name: "maxbw")
    }
  }

  /// Sends the unit's TS packets as 1316-byte messages, keeping up to six packets for the next
  /// unit.
  ///
  /// When libsrt's send buffer stays full for `sendTimeoutMilliseconds`, the answer is
  /// `.wouldBlock`. Part of the unit may already be on the wire: the sink records how far it got,
  /// and the sender must offer the same unit (same bytes) next; it is then completed, never sent
  /// twice. Offering another unit after a partly sent one throws a retryable `.write` (a receiver would
  /// otherwise see a torn PES), so the ring must not drop the unit at the head of a blocked write.
  ///
  /// Throws `.timeout` when nothing was acknowledged for the stall timeout while data waited.
  public func write(_ unit: OutgoingUnit, bytes: UnsafeRawBufferPointer, now: MonotonicInstant)
    throws(SinkError) -> SinkWriteResult
  {
    guard let socket, socket.isOpen else {
      throw .write(endpoint: endpoint, reason: "not connected", retryable: true)
    }
    // A unit held back is offered again: it counts once.
    if lastCounted?.kind != unit.kind || lastCounted?.dts != unit.dts {
      lastCounted = (unit.kind, unit.dts)
      streamRate.observe(bytes: bytes.count, dts: unit.dts)
    }
    // Bytes libsrt may take in this call; unlimited without figures, or after a stall.
    var byteAllowance = Int.max
    if let stats = socket.statistics() {
      let clock = self.clock.now()
      observeDrops(stats, now: clock)
      // libsrt's round trip is a measurement once it has left the 100 ms libsrt starts from.
      let roundTrip = measuredRoundTrip(stats)
      if let asked = deferredLatencyCheck, roundTrip > 0 {
        deferredLatencyCheck = nil
        checkLatency(asked: asked, roundTrip: (roundTrip, "libsrt"))
      }
      // libsrt drops what is older than its threshold inside a send call: near it, every send
      // is preceded by a reading, so that the ledger knows which packets those were.
      readsBeforeSend = Int(stats.msSndBuf) >= dropThresholdMilliseconds - 250
      watchdog.observe(
        acknowledgements: Int64(stats.pktRecvACKTotal), unacknowledged: Int(stats.pktSndBuf),
        now: clock)
      let sinceProgress = watchdog.sinceProgress(now: clock)
      let stallLimit = TimeSpan.milliseconds(Int64(options.effectiveStallTimeoutMilliseconds))
      if sinceProgress >= stallLimit {
        close()
        let seconds = JSONObject.fixed(sinceProgress.inSeconds, decimals: 1)
        throw .timeout(
          endpoint: endpoint, operation: "acknowledgement",
          reason: "nothing acknowledged for \(seconds) s (stall_timeout)")
      }
      // Keep libsrt's own queue shorter than the latency: what waits longer there is dropped by
      // libsrt as too late, packet by packet, leaving holes in the received stream. Holding the
      // unit back instead lets the ring drop whole frames by its policy.
      //
      // But only while the receiver is acknowledging, i.e. while waiting can shrink the queue.
      // In live mode libsrt neither retransmits on a timeout nor drops too-late packets unless
      // new data is submitted, and a receiver notices a lost packet only when a later one
      // arrives: after a tail loss (a shaper dropping the last packets of a burst) nothing is
      // acknowledged again until we send more. So after one latency without an acknowledgement
      // one unit goes out anyway; the packet that follows the gap makes the receiver ask for
      // the retransmission, or lets libsrt drop what is already too late, and the queue moves.
      // One unit a latency, not the ring: acknowledgements also pause for a latency when the
      // receiver or this process is not scheduled for a while, and on a link already full
      // (the queue of a shaper) the whole ring handed over at once is dropped by the shaper
      // and then by the receiver as too late, where the ring would have dropped whole frames.
      //
      // The same holds for bytes: the buffer may hold what is in flight plus what the link
      // drains within the queue bound (`SRTQueueLimit`), checked before every message, so a
      // burst (a keyframe) is fed to libsrt as fast as the link takes it, also half-way
      // through a unit. The round trip counts as flight, not as queue: a long path is not a
      // congested one.
      let latency = TimeSpan.milliseconds(Int64(agreedLatencyMilliseconds))
      let buffered = Int(max(stats.byteSndBuf, 0))
      queueLimit.observe(
        acknowledgedBytes: SRTLinkMeter.acknowledgedBytes(stats, handedBytes: handedBytes),
        bufferedBytes: buffered,
        roundTripMilliseconds: roundTrip, outage: sinceProgress >= Self.outageLength,
        now: clock)
      checkLatencyDuringRun(now: clock)
      let nudge = sinceProgress >= latency && (lastNudge.map { clock - $0 >= latency } ?? true)
      if nudge { lastNudge = clock }
      if !nudge {
        let queued = queuedMilliseconds(stats)
        if !chunker.hasPartialUnit,
          queueLimit.isQueueLong(
            queuedMilliseconds: queued, latencyMilliseconds: agreedLatencyMilliseconds)
        {
          queueLimit.heldForQueueBound(now: clock)
          if unsentBytes(stats) == 0 { queueLimit.heldForPathQueue(now: clock) }
          return .wouldBlock(retryAt: now + retryDelay)
        }
        queueLimit.released()
        // What is in flight is flight, however long it waits for its acknowledgement.
        let flight = Int(max(stats.pktFlightSize, 0)) * SRTMessageChunker.messageSize
        byteAllowance =
          queueLimit.limitBytes(
            latencyMilliseconds: agreedLatencyMilliseconds, queuedMilliseconds: queued,
            streamBytesPerSecond: streamRate.bytesPerSecond, flightBytes: min(flight, buffered))
          - buffered
      }
    }
    let started = clock.now()
    let progress: SRTMessageChunker.Progress
    do throws(SinkError) {
      progress = try chunker.push(unit, bytes: bytes) { message throws(SinkError) in
        guard byteAllowance >= message.count else { return false }
        guard try send(message, on: socket) else { return false }
        byteAllowance -= message.count
        return true
      }
    } catch {
      if error.isRetryable { close() }
      throw error
    }
    switch progress {
    case .complete:
      dropLedger.unitWritten(
        kind: unit.kind, keyframe: unit.isKeyframe, bytes: bytes.count, now: lastSend)
      return .written
    case .blocked:
      let blocked = clock.now() - started
      return .wouldBlock(retryAt: now + blocked + retryDelay)
    }
  }

  private func send(_ message: UnsafeRawBufferPointer, on socket: SRTSocket) throws(SinkError)
    -> Bool
  {
    if readsBeforeSend, let stats = socket.statistics() {
      observeDrops(stats, now: clock.now())
    }
    guard try socket.send(message) else { return false }
    handedBytes += Int64(message.count)
    lastSend = clock.now()
    dropLedger.messageSent(now: lastSend)
    return true
  }

  /// libsrt's sender drop threshold (`sndDropTooLate`): the peer's latency, at least 1 s, plus
  /// two synchronisation periods.
  private var dropThresholdMilliseconds: Int { max(agreedLatencyMilliseconds, 1_000) + 20 }

  /// Units that cannot have been played on time, by track: dropped by libsrt as too late, or
  /// acknowledged after their deadline. Counted as undelivered in the summary (see
  /// `SRTDropLedger`).
  public var unstoredUnits: [Int]? {
    if let socket, let stats = socket.statistics() {
      observeDrops(stats, now: clock.now())
    }
    return dropLedger.lostUnits
  }

  private func observeDrops(_ stats: SRT_TRACEBSTATS, now: MonotonicInstant) {
    dropLedger.observe(
      droppedPackets: Int64(stats.pktSndDropTotal), bufferedPackets: Int(max(stats.pktSndBuf, 0)),
      now: now, latency: .milliseconds(Int64(agreedLatencyMilliseconds)),
      roundTrip: TimeSpan(milliseconds: max(stats.msRTT, 0)), clockRoundTrip: clockRoundTrip)
  }

  /// The round trip the receiver's clock was set with: the one measured while connecting, or
  /// the path's least since (see `SRTDropLedger.observe`); nil before either is known.
  private var clockRoundTrip: TimeSpan? {
    let path = queueLimit.minimumRoundTripMilliseconds
    let least =
      path > 0 ? min(path, connectRoundTripMilliseconds ?? path) : connectRoundTripMilliseconds
    return least.map { TimeSpan(milliseconds: $0) }
  }

  public func close() {
    if let socket {
      if let last = Self.statistics(of: socket) { finalStatistics = last }
      if let stats = socket.statistics() { observeDrops(stats, now: clock.now()) }
      socket.close()
      // libsrt's listener answers no new caller after its accepted connection broke, so the
      // next one is waited for on a fresh listening socket.
      listener?.close()
      listener = nil
    }
    socket = nil
    chunker.reset()
  }

  /// Sends the carry (possibly a short last message), waits until the listener has acknowledged
  /// everything and has had time to play it out, then closes.
  ///
  /// Both waits matter in live mode: libsrt drops unsent data on close, and a receiver drops
  /// what it holds for its latency window once the connection ends. Bounded by a deadline of
  /// `max(3 s, 4 × latency)`.
  public func finish() throws(SinkError) {
    // The run ends: no further caller is waited for.
    defer {
      listener?.close()
      listener = nil
    }
    guard let socket, socket.isOpen else {
      throw .write(endpoint: endpoint, reason: "not connected", retryable: true)
    }
    let limit = TimeSpan.milliseconds(Int64(max(3_000, 4 * options.effectiveLatencyMilliseconds)))
    let deadline = clock.now() + limit
    do throws(SinkError) {
      while try chunker.flush(send: { message throws(SinkError) in
        try send(message, on: socket)
      })
        == .blocked
      {
        guard clock.now() < deadline else {
          throw SinkError.timeout(
            endpoint: endpoint, operation: "finish",
            reason: "the last message could not be sent before the deadline")
        }
      }
      while let pending = socket.unacknowledged(), pending.packets > 0 {
        guard socket.isConnected else {
          throw SinkError.write(
            endpoint: endpoint, reason: "connection lost before the last data was acknowledged",
            retryable: true)
        }
        guard clock.now() < deadline else { break }
        if let stats = socket.statistics() { observeDrops(stats, now: clock.now()) }
        clock.sleep(until: clock.now() + .milliseconds(5))
      }
      // The acknowledgements of the last units are dated now, not after the play-out wait.
      if let stats = socket.statistics() { observeDrops(stats, now: clock.now()) }
      // The receiver releases each packet one latency after it was sent; the round trip and a
      // margin cover clock drift between the two ends and a receiving program that reads late
      // (libsrt discards what is still buffered once the connection closes). 20 ms lost the
      // last message in one of twenty runs on two cores busy with other work; the margin is
      // paid once a run.
      let roundTrip = TimeSpan.milliseconds(
        Int64(Self.statistics(of: socket)?.roundTripMilliseconds ?? 0))
      let playedOut =
        lastSend + .milliseconds(Int64(agreedLatencyMilliseconds)) + roundTrip
        + Self.playOutMargin
      let now = clock.now()
      if playedOut > now && socket.isConnected {
        clock.sleep(until: min(playedOut, deadline))
      }
    } catch {
      close()
      throw error
    }
    close()
  }

  /// What `finish` waits beyond the last message's play-out time before it closes.
  private static let playOutMargin: TimeSpan = .milliseconds(150)
}
