import IngestCore
import IngestPOSIX

/// A WHIP (WebRTC) output: access units go to `ingest-whip` as a dump stream on its standard
/// input, and its statistics come back as JSON lines, so that GLib, GStreamer and libnice never
/// run in this process (`docs/architecture.md`).
///
/// The child's RTCP figures become this output's `LinkEstimate` (`WHIPLinkMeter`) for the same
/// rate controller as SRT's; the receiver's keyframe requests (PLI/FIR) become the encoder's
/// (`takeKeyframeRequest`), and so does the connection coming up, where media starts. In a live
/// run the offer lists the H.264 profiles the encoder can make and the answer chooses one: the
/// child's `negotiated` line becomes the encoder's profile request (`takeProfileRequest`).
/// The sender calls `open`, `write`, `close` and `finish` from one thread; the child's lines
/// arrive on its reader thread, which reaches only `Reports`.
public final class WHIPSink: OutputSink {
  /// What the child reported, shared between its reader thread and the sink's callers.
  private struct Report {
    var meter = WHIPLinkMeter()
    var connection = "new"
    var error: (name: String, message: String, retryable: Bool)?
    var keyframeWanted = false
    var keyframeRequests = 0
    /// Keyframes asked for because the receiver asked for a packet no longer in the history.
    var unservedKeyframes = 0
    /// What the answer chose: the `profile-level-id` and, in a live run, the profile.
    var negotiated: (profileLevelID: String?, profile: H264Profile?)?
    var profileWanted: H264Profile?
    /// Sessions before this one (after reconnects), and what they sent and lost: the
    /// summary counts the whole run.
    var earlierSessions = 0
    var earlierSent: Int64 = 0
    var earlierLost: Int64 = 0
    var packetsSent: Int64 { earlierSent + (meter.latest?.packetsSent ?? 0) }
    var packetsLost: Int64 { earlierLost + (meter.latest?.packetsLost ?? 0) }
    /// What the receivers of the earlier sessions got, and what was sent again.
    var earlier = Delivery()
    var delivery: Delivery { earlier + Delivery(meter.latest) }
    var deleteStatus: Int?
    var deleteError: String?
    /// The answers' `.local` candidates and those resolved, over every session.
    var mdnsCandidates = 0
    var mdnsResolved = 0
  }

  /// The child's reports, and where its `negotiated` event goes: all that its reader thread
  /// shares with the sink's callers.
  private final class Reports: Sendable {
    struct Shared {
      var report = Report()
      /// Where the `negotiated` status event goes (set before `open`).
      var statusHandler: (@Sendable (String, JSONObject) -> Void)?
    }

    let clock: any PipelineClock
    /// Whether the offer listed profiles for the answer to choose (an encoder that can switch).
    let offersProfiles: Bool
    let shared = ConditionLock(Shared())

    init(clock: any PipelineClock, offersProfiles: Bool) {
      self.clock = clock
      self.offersProfiles = offersProfiles
    }

    func withReport<Result>(_ body: (inout Report) -> Result) -> Result {
      shared.withLock { body(&$0.report) }
    }

    /// One line of the child, on its reader thread.
    func handle(_ line: String) {
      guard let event = WHIPEvent(line: line) else { return }
      let now = clock.now()
      if case .negotiated(let codec, let payloadType, let profileLevelID, let profile) = event {
        var fields = JSONObject()
        fields.add("codec", codec)
        fields.add("payload_type", payloadType)
        if let profileLevelID { fields.add("profile_level_id", profileLevelID) }
        if let profile { fields.add("profile", profile.rawValue) }
        shared.withLock { $0.statusHandler }?("negotiated", fields)
      }
      withReport { report in
        switch event {
        case .connection(let state):
          report.connection = state
          // Media starts at a keyframe once the connection is up (ingest-whip drops what came
          // before): a live encoder makes one now rather than at the end of its GOP.
          if state == "connected" { report.keyframeWanted = true }
        case .negotiated(_, _, let profileLevelID, let profile):
          report.negotiated = (profileLevelID, profile)
          // Only an encoder that can switch was offered several profiles.
          if offersProfiles, let profile { report.profileWanted = profile }
        case .stats(let statistics): report.meter.observe(statistics, now: now)
        case .keyframe(let unserved):
          if unserved { report.unservedKeyframes += 1 } else { report.keyframeRequests += 1 }
          report.keyframeWanted = true
        case .deleted(let status, let error):
          report.deleteStatus = status
          report.deleteError = error
        case .error(let name, let message, let retryable):
          report.error = (name, message, retryable)
        case .candidates(let mdns, let resolved):
          report.mdnsCandidates += mdns
          report.mdnsResolved += resolved
        case .ice, .session, .end: break
        }
      }
    }
  }

  /// What the receiver's reports say arrived, summed over sessions.
  struct Delivery {
    var videoFrames: Int64 = 0
    var videoFramesSent: Int64 = 0
    /// Frames counted as not delivered because no receiver report covers them (possibly lost).
    var videoFramesUnconfirmed: Int64 = 0
    var audioSamples = 0
    var nackRequests: Int64 = 0
    var nackUnserved: Int64 = 0
    var nackPolls: Int64 = 0
    var keyframesCovered: Int64 = 0
    var coverPackets: Int64 = 0
    var rtxPackets: Int64 = 0
    var notAsked: Int64 = 0
    var retransmission = false

    init() {}

    init(_ statistics: WHIPStatistics?) {
      guard let statistics else { return }
      videoFrames = statistics.videoFramesDelivered
      videoFramesSent = statistics.videoFrames
      videoFramesUnconfirmed = statistics.videoFramesUnconfirmed
      audioSamples = statistics.audioSamplesDelivered
      nackRequests = statistics.nackRequests
      nackUnserved = statistics.nackUnserved
      nackPolls = statistics.nackPolls
      keyframesCovered = statistics.keyframesCovered
      coverPackets = statistics.coverPackets
      rtxPackets = statistics.rtxPackets
      notAsked = statistics.videoPacketsNotAsked
      retransmission = statistics.retransmission
    }

    static func + (a: Delivery, b: Delivery) -> Delivery {
      var sum = Delivery()
      sum.videoFrames = a.videoFrames + b.videoFrames
      sum.videoFramesSent = a.videoFramesSent + b.videoFramesSent
      sum.videoFramesUnconfirmed = a.videoFramesUnconfirmed + b.videoFramesUnconfirmed
      sum.audioSamples = a.audioSamples + b.audioSamples
      sum.nackRequests = a.nackRequests + b.nackRequests
      sum.nackUnserved = a.nackUnserved + b.nackUnserved
      sum.nackPolls = a.nackPolls + b.nackPolls
      sum.keyframesCovered = a.keyframesCovered + b.keyframesCovered
      sum.coverPackets = a.coverPackets + b.coverPackets
      sum.rtxPackets = a.rtxPackets + b.rtxPackets
      sum.notAsked = a.notAsked + b.notAsked
      sum.retransmission = a.retransmission || b.retransmission
      return sum
    }
  }

  public let target: WHIPTarget
  /// The H.264 profiles the offer lists, most preferred first (a live encoder's); nil: the
  /// stream's own profile only (a dump).
  public let offerProfiles: [H264Profile]?
  /// The retransmission history's bound in `ingest-whip` (entered in `bufferBytes`).
  public let retransmissionHistoryBytes: Int
  /// For an https endpoint: certificate authorities to trust instead of the system's.
  public let caFile: String?
  private let executable: String
  private let clock: any PipelineClock
  private var child: WHIPChild?
  private var writer: DumpWriter<PendingBytes>?
  private let pending = PendingBytes()
  private let reports: Reports
  private var lastKeyframeAsked: MonotonicInstant = .distantPast
  private var takenBytes: Int64 = 0
  /// Units written to the child, by kind (`SampleKind.rawValue`), over every session; the
  /// audio track it carries (the first announced).
  private var written = [Int](repeating: 0, count: SampleKind.allCases.count)
  private var carriedAudio: SampleKind?
  private var childPeakResident: Int?

  /// How long `finish` waits for the child to send what it holds and delete the session.
  static let finishTimeout: TimeSpan = .seconds(10)
  /// Keyframe requests closer together than this become one (a receiver repeats its PLI
  /// until a keyframe arrives).
  static let keyframeInterval: TimeSpan = .seconds(1)

  /// - Parameters:
  ///   - executable: `ingest-whip`'s path (default: beside the running program).
  ///   - clock: the pipeline's clock, which the statistics are stamped with.
  ///   - offerProfiles: the H.264 profiles the encoder in front can make, most preferred
  ///     first; nil when the stream's profile cannot change (a dump replayed).
  ///   - caFile: a PEM file of certificate authorities to trust for an https endpoint instead
  ///     of the system's (a private CA); nil for the system's.
  ///   - retransmissionHistoryBytes: what `ingest-whip` may keep of sent video to answer the
  ///     receiver's NACKs (`--rtx-history-bytes`; its time bound is a second).
  public init(
    target: WHIPTarget, executable: String? = nil, clock: any PipelineClock = SystemClock(),
    offerProfiles: [H264Profile]? = nil, caFile: String? = nil,
    retransmissionHistoryBytes: Int = WHIPSink.defaultRetransmissionHistoryBytes
  ) {
    self.target = target
    self.offerProfiles = offerProfiles
    self.caFile = caFile
    self.retransmissionHistoryBytes = retransmissionHistoryBytes
    self.executable = executable ?? WHIPChild.locate()
    self.clock = clock
    reports = Reports(clock: clock, offersProfiles: offerProfiles != nil)
  }

  public var payloadFormat: PayloadFormat { .accessUnits }
  /// The retransmission history's default bound: a second of video up to about 8 Mb/s.
  public static let defaultRetransmissionHistoryBytes = 1 << 20

  /// The pipe to the child (64 KiB on Linux) and one pending record are outside the ring, and
  /// so is the child's retransmission history (bounded by `retransmissionHistoryBytes`).
  public var bufferBytes: Int { (64 << 10) + retransmissionHistoryBytes }
  public var redactedDescription: String { "WHIP \(target.redacted)" }

  public func open(tracks: TrackFormats) throws(SinkError) {
    guard tracks.video != nil else {
      throw .unsupported(endpoint: target.redacted, reason: "WHIP needs a video track")
    }
    reports.withReport { report in
      var next = Report()
      next.earlierSessions = report.earlierSessions + (report.meter.latest == nil ? 0 : 1)
      next.earlierSent = report.packetsSent
      next.earlierLost = report.packetsLost
      next.earlier = report.delivery
      next.keyframeRequests = report.keyframeRequests
      next.unservedKeyframes = report.unservedKeyframes
      report = next
    }
    carriedAudio = tracks.kinds.first { kind in
      guard kind != .video, case .aac? = tracks.format(for: kind) else { return false }
      return true
    }
    var arguments = [
      "--rtx-history-bytes", String(retransmissionHistoryBytes), target.endpoint,
    ]
    if let offerProfiles {
      arguments = ["--profiles", offerProfiles.map(\.rawValue).joined(separator: ",")] + arguments
    }
    if let caFile { arguments = ["--ca-file", caFile] + arguments }
    do {
      child = try WHIPChild(
        executable: executable, arguments: arguments, token: target.token
      ) { [reports] line in reports.handle(line) }
    } catch {
      throw .connect(
        endpoint: target.redacted, reason: "cannot start \(executable): \(error)", retryable: false)
    }
    // A child that stopped reading (its connection failed) may have left part of a record:
    // the new one's input starts with the header. (Sent first, that part read as "not a
    // dump", and a run whose first session did not connect failed at its retry.)
    pending.discard()
    do {
      var writer = try DumpWriter(sink: pending)
      for kind in tracks.kinds {
        if let format = tracks.format(for: kind) { try writer.writeFormat(format, for: kind) }
      }
      self.writer = writer
    } catch {
      throw .unsupported(endpoint: target.redacted, reason: "\(error)")
    }
  }

  public func write(_ unit: OutgoingUnit, bytes: UnsafeRawBufferPointer, now: MonotonicInstant)
    throws(SinkError) -> SinkWriteResult
  {
    guard let child else {
      throw .write(endpoint: target.redacted, reason: "not connected", retryable: true)
    }
    try flush(child)
    if !pending.isEmpty { return .wouldBlock(retryAt: now + .milliseconds(2)) }
    if child.hasEnded { throw childError() }
    do {
      if let format = unit.format { try writer?.writeFormat(format, for: unit.kind) }
      try writer?.writeSample(
        kind: unit.kind, pts: MediaTime(value: unit.pts, timescale: MediaTime.ticks90kTimescale),
        dts: MediaTime(value: unit.dts, timescale: MediaTime.ticks90kTimescale),
        isKeyframe: unit.isKeyframe,
        payload: bytes)
    } catch {
      return .discarded(.invalid)
    }
    takenBytes += Int64(bytes.count)
    written[Int(unit.kind.rawValue)] += 1
    try flush(child)
    return .written
  }

  private func flush(_ child: WHIPChild) throws(SinkError) {
    do { try pending.drain { bytes throws(Errno) in try child.writeSome(bytes) } } catch {
      throw childError()
    }
  }

  /// The error the child reported, or its exit, as a sink error.
  private func childError() -> SinkError {
    let reported = reports.withReport { report in report.error }
    let endpoint = target.redacted
    guard let reported else {
      // Nothing said before it went: how it ended is the reason (killed by a signal, say).
      var reason = "ingest-whip ended"
      if let child, child.waitForEnd(until: SystemClock().now() + .seconds(1)) {
        let exit = child.wait()
        if let signal = exit.signal {
          reason = "ingest-whip was killed by signal \(signal)"
        } else if let status = exit.status, status != 0 {
          reason = "ingest-whip exited with status \(status)"
        }
      }
      return .write(endpoint: endpoint, reason: reason, retryable: true)
    }
    switch reported.name {
    case "rejected"
    where reported.message.contains("HTTP 401") || reported.message.contains("HTTP 403"):
      return .authentication(endpoint: endpoint, reason: reported.message)
    case "rejected":
      return .publishRefused(
        endpoint: endpoint, reason: reported.message, retryable: reported.retryable)
    case "transport", "connectionFailed", "certificate":
      return .connect(endpoint: endpoint, reason: reported.message, retryable: reported.retryable)
    default:
      return .unsupported(endpoint: endpoint, reason: reported.message)
    }
  }

  public func close() {
    guard let child else { return }
    child.terminate()
    // After a failure: time for the DELETE, not for draining.
    if !child.waitForEnd(until: SystemClock().now() + .seconds(3)) { child.kill() }
    childPeakResident = child.wait().peakResidentBytes
    self.child = nil
    writer = nil
  }

  public func finish() throws(SinkError) {
    guard let child else { return }
    let deadline = SystemClock().now() + Self.finishTimeout
    // What is pending goes first; then end of input: the child drains and deletes the session.
    while !pending.isEmpty && !child.hasEnded && SystemClock().now() < deadline {
      do { try flush(child) } catch { break }
      if !pending.isEmpty { SystemClock().sleep(for: .milliseconds(2)) }
    }
    child.closeInput()
    if !child.waitForEnd(until: deadline) {
      child.terminate()
      if !child.waitForEnd(until: SystemClock().now() + .seconds(2)) { child.kill() }
    }
    let exit = child.wait()
    childPeakResident = exit.peakResidentBytes
    self.child = nil
    writer = nil
    if exit.status != 0 { throw childError() }
  }

  // MARK: The child's lines

  public func setStatusHandler(_ handler: @escaping @Sendable (String, JSONObject) -> Void) {
    reports.shared.withLock { $0.statusHandler = handler }
  }

  // MARK: What arrived

  /// Whether the session the last `open` started is up: ICE and DTLS completed (the child's
  /// `connection` line). Media flows before (webrtcbin needs it for the offer).
  public var isEstablished: Bool {
    reports.withReport { report in report.connection == "connected" }
  }

  /// Units written to the child that the receivers' reports do not say arrived, by kind: video
  /// frames not decided as arrived whole (with every frame they depend on: a loss breaks the
  /// picture until the next keyframe), and audio samples in the share of Opus packets not
  /// reported received. What the child dropped before the connection, sent into a dead
  /// session or still held when it ended is among them.
  public var unstoredUnits: [Int]? {
    let delivered = reports.withReport { report in report.delivery }
    var counts = written
    let video = Int(SampleKind.video.rawValue)
    counts[video] = max(0, written[video] - Int(delivered.videoFrames))
    if let carriedAudio {
      let index = Int(carriedAudio.rawValue)
      counts[index] = max(0, written[index] - delivered.audioSamples)
    }
    return counts
  }

  // MARK: The link

  public var congestion: Double {
    guard let estimate = linkEstimate(now: clock.now()) else { return 0 }
    // The round trip a queue from transport-cc feedback includes is distance, not congestion.
    let base = reports.withReport { report in report.meter.queueBaseMilliseconds }
    return min(1, max(0, estimate.queueMilliseconds - base) / WHIPLinkMeter.latencyMilliseconds)
  }

  public func linkEstimate(now: MonotonicInstant) -> LinkEstimate? {
    let waiting = pending.count
    let estimate = reports.withReport { report in
      report.meter.estimate(now: now, pendingBytes: waiting)
    }
    // Before the first statistics (a second after the connection) a bare estimate, so that
    // the controller's start target reaches the encoder before media flows: at the nominal
    // rate, the first second would overflow a link narrower than the stream.
    return estimate
      ?? LinkEstimate(
        time: now, queueMilliseconds: 0, queueBytes: waiting,
        latencyMilliseconds: WHIPLinkMeter.latencyMilliseconds)
  }

  public func takeKeyframeRequest(now: MonotonicInstant) -> Bool {
    let wanted = reports.withReport { report in
      defer { report.keyframeWanted = false }
      return report.keyframeWanted
    }
    guard wanted, now - lastKeyframeAsked >= Self.keyframeInterval else { return false }
    lastKeyframeAsked = now
    return true
  }

  public func takeProfileRequest() -> H264Profile? {
    reports.withReport { report in
      defer { report.profileWanted = nil }
      return report.profileWanted
    }
  }

  /// The profile the answer chose, for people: `Constrained Baseline (42e01f)`.
  private static func describe(
    _ negotiated: (profileLevelID: String?, profile: H264Profile?)?
  ) -> String? {
    guard let negotiated else { return nil }
    let id = negotiated.profileLevelID.flatMap { H264ProfileLevelID(hex: $0) }
    return id?.displayName ?? negotiated.profile?.displayName
  }

  public func statusFields() -> JSONObject? {
    reports.withReport { report in
      var object = JSONObject()
      object.add("connection", report.connection)
      if let profile = report.negotiated?.profile { object.add("profile", profile.rawValue) }
      if let latest = report.meter.latest {
        object.add("packets_sent", latest.packetsSent)
        object.add("bytes_sent", latest.bytesSent)
        object.add("packets_lost", latest.packetsLost)
        if let loss = latest.fractionLost { object.add("fraction_lost", loss, decimals: 4) }
        if let rtt = latest.roundTripMilliseconds { object.add("rtt_ms", rtt, decimals: 1) }
        if let jitter = latest.jitterMilliseconds { object.add("jitter_ms", jitter, decimals: 1) }
        if let remb = latest.receiverEstimateBitsPerSecond { object.add("remb_bps", Int64(remb)) }
        if let silence = latest.rtcpSilenceMilliseconds {
          object.add("rtcp_silence_ms", silence, decimals: 0)
        }
        object.add("nack", latest.nackCount)
        object.add("rtx_packets", latest.rtxPackets)
        object.add("nack_unserved", latest.nackUnserved)
        object.add("rtx_history_bytes", latest.rtxHistoryBytes)
        object.add("video_frames_sent", latest.videoFrames)
        object.add("video_frames_delivered", latest.videoFramesDelivered)
        object.add("queue_bytes", latest.queueBytes)
        object.add("dropped_before_connection", latest.droppedBeforeConnection)
        object.add("dropped_for_profile", latest.droppedForProfile)
        Self.addTransportFeedback(
          latest, windowed: report.meter.latestWithFeedback, to: &object)
      }
      object.add("keyframe_requests", report.keyframeRequests)
      object.add("keyframes_for_unserved", report.unservedKeyframes)
      return object
    }
  }

  /// The transport-cc figures of `latest`, when the receiver sent feedback; the windowed ones
  /// from `windowed` (the last statistics that had them).
  static func addTransportFeedback(
    _ latest: WHIPStatistics, windowed: WHIPStatistics?, to object: inout JSONObject
  ) {
    guard latest.transportFeedbackCount > 0 else { return }
    object.add("twcc_feedback", latest.transportFeedbackCount)
    object.add("twcc_packets_reported", latest.transportPacketsReported)
    object.add("twcc_packets_lost", latest.transportPacketsLost)
    guard let latest = windowed else { return }
    if let rate = latest.transportReceivedBitsPerSecond {
      object.add("twcc_received_bps", Int64(rate))
    }
    if let loss = latest.transportLoss { object.add("twcc_loss", loss, decimals: 4) }
    if let queue = latest.transportQueueMilliseconds {
      object.add("twcc_queue_ms", queue, decimals: 1)
    }
  }

  /// `summaryLine`'s figures for the JSON summary.
  public var summaryFields: JSONObject? {
    reports.withReport { report in
      var object = JSONObject()
      object.add("packets_sent", report.packetsSent)
      object.add("packets_lost", report.packetsLost)
      let delivery = report.delivery
      object.add("video_frames_sent", delivery.videoFramesSent)
      object.add("video_frames_delivered", delivery.videoFrames)
      object.add("video_frames_possibly_lost", delivery.videoFramesUnconfirmed)
      object.add("audio_samples_delivered", delivery.audioSamples)
      object.add("retransmission", delivery.retransmission)
      object.add("nack_requests", delivery.nackRequests)
      object.add("nack_unserved", delivery.nackUnserved)
      object.add("nack_polls", delivery.nackPolls)
      object.add("keyframes_covered", delivery.keyframesCovered)
      object.add("cover_packets", delivery.coverPackets)
      object.add("rtx_packets", delivery.rtxPackets)
      object.add("lost_not_asked", delivery.notAsked)
      object.add("sessions", report.earlierSessions + (report.meter.latest == nil ? 0 : 1))
      if let negotiated = report.negotiated {
        if let id = negotiated.profileLevelID { object.add("profile_level_id", id) }
        if let profile = negotiated.profile { object.add("profile", profile.rawValue) }
      }
      if let latest = report.meter.latest {
        if let rtt = latest.roundTripMilliseconds { object.add("rtt_ms", rtt, decimals: 1) }
        object.add("dropped_before_connection", latest.droppedBeforeConnection)
        object.add("dropped_for_profile", latest.droppedForProfile)
        Self.addTransportFeedback(
          latest, windowed: report.meter.latestWithFeedback, to: &object)
      }
      object.add("keyframe_requests", report.keyframeRequests)
      object.add("keyframes_for_unserved", report.unservedKeyframes)
      if let status = report.deleteStatus { object.add("delete_status", status) }
      if report.mdnsCandidates > 0 {
        object.add("mdns_candidates", report.mdnsCandidates)
        object.add("mdns_resolved", report.mdnsResolved)
      }
      if let childPeakResident { object.add("ingest_whip_peak_resident", childPeakResident) }
      return object
    }
  }

  /// The WebRTC figures of the run for its summary: packets sent and lost, round trip,
  /// keyframe requests, the session's deletion, and `ingest-whip`'s peak resident size.
  public var summaryLine: String? {
    reports.withReport { report in
      var parts: [String] = []
      let sessions = report.earlierSessions + (report.meter.latest == nil ? 0 : 1)
      if sessions > 0 {
        parts.append("\(report.packetsSent) RTP packets sent, \(report.packetsLost) lost")
        let delivery = report.delivery
        parts.append(
          "receiver: \(delivery.videoFrames) of \(delivery.videoFramesSent) video frames sent "
            + "arrived whole")
        if delivery.videoFramesUnconfirmed > 0 {
          parts.append(
            "\(delivery.videoFramesUnconfirmed) possibly lost (sent after the receiver's last "
              + "report)")
        }
        if delivery.retransmission {
          parts.append(
            "\(delivery.rtxPackets) retransmitted for \(delivery.nackRequests) NACKed, "
              + "\(delivery.nackUnserved) too old")
        } else if delivery.nackRequests > 0 {
          parts.append("\(delivery.nackRequests) NACKed, no retransmission negotiated")
        }
        if sessions > 1 { parts.append("\(sessions) sessions") }
      }
      if let negotiated = Self.describe(report.negotiated) {
        parts.append("H.264 \(negotiated) negotiated")
      }
      if let latest = report.meter.latest {
        if let rtt = latest.roundTripMilliseconds {
          parts.append("rtt \(JSONObject.fixed(rtt, decimals: 1)) ms")
        }
        if latest.droppedBeforeConnection > 0 {
          parts.append("\(latest.droppedBeforeConnection) samples before the connection")
        }
        if latest.droppedForProfile > 0 {
          parts.append("\(latest.droppedForProfile) frames before the profile")
        }
      } else if sessions == 0 {
        parts.append("no statistics")
      }
      parts.append("\(report.keyframeRequests) keyframe requests")
      if report.unservedKeyframes > 0 {
        parts.append("\(report.unservedKeyframes) keyframes for packets too old to resend")
      }
      if let status = report.deleteStatus {
        parts.append("session deleted (HTTP \(status))")
      } else if let error = report.deleteError {
        parts.append("session not deleted: \(error)")
      }
      if let childPeakResident {
        parts.append(
          "ingest-whip peak resident \(JSONObject.fixed(Double(childPeakResident) / 1e6, decimals: 1)) MB"
        )
      }
      return parts.joined(separator: ", ")
    }
  }
}
