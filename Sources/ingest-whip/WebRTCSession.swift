import CGStreamer
import IngestCore
import IngestPOSIX

/// One GStreamer pipeline ending in webrtcbin, and what its signals report. webrtcbin runs its
/// own threads; its callbacks only record state here (under `lock`) and write event lines, and
/// the main thread waits on the lock's condition for what it needs next.
///
/// `@unchecked`: the GStreamer handles are used through GStreamer's own thread-safe calls, and
/// every mutable field is guarded by `lock`.
final class WebRTCSession: @unchecked Sendable {
  /// Where the sender is in the session's life, as the feeder needs to know it.
  enum Phase: Int {
    /// Before the offer: everything is pushed, so that caps reach webrtcbin.
    case negotiating
    /// Offer made, not yet connected: media would be lost, so it is dropped.
    case connecting
    /// ICE and DTLS are up: media flows, video from its next keyframe.
    case connected
  }

  let graph: MediaGraph
  let pipeline: UnsafeMutablePointer<GstElement>
  let webrtc: UnsafeMutablePointer<GstElement>
  let videoSource: UnsafeMutablePointer<GstElement>
  let audioSource: UnsafeMutablePointer<GstElement>?
  private let events: EventWriter
  let lock = ConditionLock()
  // Guarded by `lock`.
  private var negotiationNeeded = false
  private var gatheringComplete = false
  private(set) var phase = Phase.negotiating
  private var failure: String?
  private var keyframeRequests = 0
  /// The H.264 profile the answer chose among those offered; video in another is not sent.
  private(set) var negotiatedProfile: H264Profile?
  /// Closed on each payloader's output until the connection is up: what was packetized
  /// before (the units that gave webrtcbin its caps) would otherwise be held in webrtcbin and
  /// sent stale, in a burst, once DTLS is done. They number what passes (`delivery`).
  private var gates: [UnsafeMutablePointer<ingest_tracked_gate>] = []
  /// What reached the receiver and what was sent again (`delivery.h`); lives as long as the
  /// process.
  let delivery: UnsafeMutablePointer<ingest_delivery>
  /// The receiver's last REMB, once the answer is applied and the RTP session exists.
  private var remb: UnsafeMutablePointer<ingest_remb>?
  /// The SHA-256 fingerprint of our DTLS certificate, as SDP writes it.
  private let fingerprint: String

  static let iceStates = [
    "new", "checking", "connected", "completed", "failed", "disconnected", "closed",
  ]
  static let connectionStates = [
    "new", "connecting", "connected", "disconnected", "failed", "closed",
  ]

  /// - Parameter history: the retransmission history's bounds: packets and milliseconds.
  init(graph: MediaGraph, events: EventWriter, history: (packets: Int, milliseconds: Int))
    throws(WHIPClientError)
  {
    self.graph = graph
    self.events = events
    gst_init(nil, nil)
    delivery = ingest_delivery_new(UInt32(history.packets), UInt32(history.milliseconds))
    // Before the pipeline exists: its DTLS elements take the certificate as they are made.
    var digits = [CChar](repeating: 0, count: 128)
    guard let pem = ingest_dtls_ecdsa_pem(&digits), digits[0] != 0 else {
      throw .pipeline("no DTLS certificate")
    }
    ingest_webrtc_use_hooks(pem, delivery)
    g_free(pem)
    fingerprint = String(
      decoding: digits.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    var error: UnsafeMutablePointer<GError>?
    guard let pipeline = gst_parse_launch(graph.launchText, &error), error == nil else {
      let message = error.map { String(cString: $0.pointee.message) } ?? "cannot build pipeline"
      if let error { g_error_free(error) }
      throw .pipeline(message)
    }
    self.pipeline = pipeline
    guard let webrtc = ingest_gst_bin_child(pipeline, "webrtc"),
      let video = ingest_gst_bin_child(pipeline, "video")
    else { throw .pipeline("pipeline lacks its webrtcbin or video source") }
    self.webrtc = webrtc
    videoSource = video
    audioSource = graph.audio == nil ? nil : ingest_gst_bin_child(pipeline, "audio")
    try setCaps(video, graph.videoCaps)
    if let audioSource, let caps = graph.audioCaps { try setCaps(audioSource, caps) }
    connectSignals()
  }

  deinit {
    gst_element_set_state(pipeline, GST_STATE_NULL)
    for element in [webrtc, videoSource] { ingest_gst_unref(element) }
    if let audioSource { ingest_gst_unref(audioSource) }
    ingest_gst_unref(pipeline)
  }

  private func setCaps(_ element: UnsafeMutablePointer<GstElement>, _ text: String)
    throws(WHIPClientError)
  {
    guard let caps = gst_caps_from_string(text) else { throw .pipeline("bad caps \(text)") }
    ingest_g_set_caps(element, "caps", caps)
    gst_caps_unref(caps)
  }

  private func connectSignals() {
    let context = Unmanaged.passUnretained(self).toOpaque()
    let negotiation: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = {
      _, context in
      guard let context else { return }
      let session = Unmanaged<WebRTCSession>.fromOpaque(context).takeUnretainedValue()
      session.lock.withLock { session.negotiationNeeded = true }
      session.lock.broadcast()
    }
    let notify:
      @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?)
        -> Void = { _, _, context in
          guard let context else { return }
          Unmanaged<WebRTCSession>.fromOpaque(context).takeUnretainedValue().stateChanged()
        }
    _ = ingest_g_signal_connect(
      webrtc, "on-negotiation-needed", unsafeBitCast(negotiation, to: GCallback.self), context)
    for property in ["ice-gathering-state", "ice-connection-state", "connection-state"] {
      _ = ingest_g_signal_connect(
        webrtc, "notify::" + property, unsafeBitCast(notify, to: GCallback.self), context)
    }
    let hevc: gboolean = if case .hevc = graph.video { 1 } else { 0 }
    for name in ["videopay", "audiopay"] {
      guard let pay = ingest_gst_bin_child(pipeline, name) else { continue }
      // Every packet carries the transport-wide sequence number, so that a receiver that
      // takes it (Chromium) sends transport-cc feedback; rtpsession renumbers them across the
      // bundle, retransmissions included.
      _ = ingest_gst_add_header_extension(
        pay, MediaGraph.transportCCURI, UInt32(MediaGraph.transportCCExtensionID))
      if let pad = gst_element_get_static_pad(pay, "src") {
        if let gate = ingest_gst_add_tracked_gate(pad, delivery, name == "videopay" ? 1 : 0, hevc) {
          gates.append(gate)
        }
        ingest_gst_unref(pad)
      }
      ingest_gst_unref(pay)
    }
    if let pay = ingest_gst_bin_child(pipeline, "videopay"),
      let pad = gst_element_get_static_pad(pay, "src")
    {
      ingest_gst_watch_keyframe_requests(
        pad,
        { context in
          guard let context else { return }
          Unmanaged<WebRTCSession>.fromOpaque(context).takeUnretainedValue().keyframeRequested()
        }, context)
      ingest_gst_unref(pad)
      ingest_gst_unref(pay)
    }
  }

  private var lastIce = -1
  private var lastConnection = -1

  /// webrtcbin's states, read again on any change: the event lines carry the new ones, and a
  /// failure ends the session.
  private func stateChanged() {
    let gathering = ingest_g_get_enum(webrtc, "ice-gathering-state")
    let ice = Int(ingest_g_get_enum(webrtc, "ice-connection-state"))
    let connection = Int(ingest_g_get_enum(webrtc, "connection-state"))
    var changes: [(String, String)] = []
    lock.withLock {
      if gathering == Int32(GST_WEBRTC_ICE_GATHERING_STATE_COMPLETE.rawValue) {
        gatheringComplete = true
      }
      if ice != lastIce, Self.iceStates.indices.contains(ice) {
        lastIce = ice
        changes.append(("ice", Self.iceStates[ice]))
      }
      if connection != lastConnection, Self.connectionStates.indices.contains(connection) {
        lastConnection = connection
        changes.append(("connection", Self.connectionStates[connection]))
        switch Self.connectionStates[connection] {
        case "connected":
          phase = .connected
          for gate in gates { ingest_tracked_gate_open(gate) }
        case "failed": failure = failure ?? "the peer connection failed"
        default: break
        }
      }
    }
    lock.broadcast()
    for (name, state) in changes {
      var fields = JSONObject()
      fields.add("state", state)
      events.emit(name, fields)
    }
  }

  private func keyframeRequested() {
    lock.withLock { keyframeRequests += 1 }
    events.emit("keyframe")
  }

  /// Milliseconds since the receiver's last RTCP packet; nil before the first (or before the
  /// answer is applied).
  var rtcpSilenceMilliseconds: Double? {
    guard let remb else { return nil }
    let silence = ingest_rtcp_silence(remb)
    return silence >= 0 ? Double(silence) / 1000 : nil
  }

  /// Keyframe requests seen so far (PLI or FIR from the receiver).
  var keyframeRequestCount: Int { lock.withLock { keyframeRequests } }

  /// Why the connection failed, once it did.
  var failureReason: String? { lock.withLock { failure } }

  func play() throws(WHIPClientError) {
    if gst_element_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE {
      throw .pipeline(busError() ?? "the pipeline would not start")
    }
  }

  /// The first error on the pipeline's bus, if any, without waiting.
  func busError() -> String? {
    guard let bus = gst_element_get_bus(pipeline) else { return nil }
    defer { ingest_gst_unref(bus) }
    guard let message = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR) else { return nil }
    defer {
      gst_mini_object_unref(
        UnsafeMutableRawPointer(message).assumingMemoryBound(to: GstMiniObject.self))
    }
    guard let text = ingest_gst_message_text(message) else { return "error" }
    defer { g_free(text) }
    return String(cString: text)
  }

  /// Waits until webrtcbin wants an offer and every payloader has told it its caps (the offer
  /// names the stream's profile and parameter sets), then makes the offer, applies it and waits
  /// for ICE gathering to complete: the offer's text then holds every candidate (no trickle).
  /// - Parameters:
  ///   - deadline: on the system clock.
  ///   - rewrite: changes webrtcbin's offer before it is applied (the H.264 profiles offered).
  func makeOffer(deadline: MonotonicInstant, rewrite: ((String) -> String)? = nil)
    throws(WHIPClientError)
    -> String
  {
    let clock = SystemClock()
    while !(lock.withLock { negotiationNeeded }) || !payloadersHaveCaps() {
      if let error = busError() { throw .pipeline(error) }
      guard clock.now() < deadline else {
        throw .input("no media reached webrtcbin in time (is the input stream flowing?)")
      }
      lock.withLock { _ = lock.wait(until: min(deadline, clock.now() + .milliseconds(20))) }
    }
    ingest_webrtc_send_only(webrtc)
    if let pay = ingest_gst_bin_child(pipeline, "videopay") {
      _ = ingest_webrtc_enable_retransmission(webrtc, pay)
      ingest_gst_unref(pay)
    }
    guard var offer = ingest_webrtc_create_offer(webrtc) else {
      throw .pipeline(busError() ?? "webrtcbin made no offer")
    }
    defer { gst_webrtc_session_description_free(offer) }
    if let rewrite, let text = ingest_webrtc_description_text(offer) {
      let rewritten = rewrite(String(cString: text))
      g_free(text)
      guard let replaced = ingest_webrtc_offer(rewritten) else {
        throw .pipeline("the rewritten offer is not SDP")
      }
      gst_webrtc_session_description_free(offer)
      offer = replaced
    }
    lock.withLock { phase = .connecting }
    if let failure = ingest_webrtc_set_description(webrtc, "set-local-description", offer) {
      defer { g_free(failure) }
      throw .pipeline("set-local-description: \(String(cString: failure))")
    }
    stateChanged()
    var complete = lock.withLock { gatheringComplete }
    while !complete {
      guard clock.now() < deadline else {
        throw .connectionFailed("ICE gathering did not complete")
      }
      complete = lock.withLock {
        if !gatheringComplete {
          _ = lock.wait(until: min(deadline, clock.now() + .milliseconds(50)))
        }
        return gatheringComplete
      }
      if !complete { stateChanged() }
    }
    guard let text = ingest_webrtc_local_sdp(webrtc) else {
      throw .pipeline("webrtcbin has no local description")
    }
    defer { g_free(text) }
    return Self.replacingFingerprints(in: String(cString: text), with: fingerprint)
  }

  /// The offer with every `a=fingerprint` line naming our certificate's SHA-256. webrtcbin
  /// (1.22) hashes the whole PEM it was given, private key included, so the fingerprint it
  /// writes for a certificate of ours matches nothing; the receiver checks it against the
  /// certificate of the handshake.
  static func replacingFingerprints(in sdp: String, with fingerprint: String) -> String {
    // SDP lines end in CRLF, which Swift sees as one Character.
    let lines = sdp.split(omittingEmptySubsequences: false) { $0 == "\r\n" || $0 == "\n" }
    return lines.map {
      $0.hasPrefix("a=fingerprint:") ? "a=fingerprint:sha-256 \(fingerprint)" : String($0)
    }.joined(separator: "\r\n")
  }

  private func payloadersHaveCaps() -> Bool {
    var names = ["videopay"]
    if graph.audio != nil { names.append("audiopay") }
    // The payloaders' source pads are the links into webrtcbin.
    guard let iterator = gst_element_iterate_sink_pads(webrtc) else { return false }
    defer { gst_iterator_free(iterator) }
    var count = 0
    var all = true
    var value = GValue()
    while gst_iterator_next(iterator, &value) == GST_ITERATOR_OK {
      if let pad = g_value_get_object(&value) {
        count += 1
        if gst_pad_has_current_caps(pad.assumingMemoryBound(to: GstPad.self)) == 0 { all = false }
      }
      g_value_reset(&value)
    }
    g_value_unset(&value)
    return all && count == names.count
  }

  /// Sends video as the payload type the answer chose, and from now on only in `profile`
  /// or one it fits in (nil: whatever the stream is).
  func negotiate(payloadType: Int, profile: H264Profile?) {
    if payloadType != MediaGraph.videoPayloadType,
      let pay = ingest_gst_bin_child(pipeline, "videopay")
    {
      ingest_g_set_uint(pay, "pt", UInt32(payloadType))
      ingest_gst_unref(pay)
    }
    lock.withLock { negotiatedProfile = profile }
  }

  /// Applies the endpoint's answer.
  func applyAnswer(_ text: String) throws(WHIPClientError) {
    guard graph.answerAcceptsVideo(text) else { throw .codecRefused(graph.videoCodecName) }
    guard let answer = ingest_webrtc_answer(text) else { throw .badAnswer("not SDP") }
    defer { gst_webrtc_session_description_free(answer) }
    if let failure = ingest_webrtc_set_description(webrtc, "set-remote-description", answer) {
      defer { g_free(failure) }
      throw .badAnswer(String(cString: failure))
    }
    remb = ingest_webrtc_watch_remb(webrtc, delivery)
    if let id = MediaGraph.transportCCExtensionID(inAnswer: text) {
      _ = ingest_delivery_watch_twcc(delivery, webrtc, UInt32(id))
    } else {
      // A receiver that did not take the extension (aiortc) gets packets without it: through
      // a bottleneck at half the stream's rate (WHIPShapedLinkTests) aiortc decoded 86 % of
      // the frames with it in every packet (twice), 98 to 99.9 % without. Why is not known.
      for name in ["videopay", "audiopay"] {
        guard let pay = ingest_gst_bin_child(pipeline, name) else { continue }
        ingest_gst_clear_header_extensions(pay)
        ingest_gst_unref(pay)
      }
    }
  }

  /// Gives webrtcbin the addresses of the answer's `.local` host candidates, resolved over
  /// multicast DNS (MDNSResolver); a `candidates` line says how many there were and how many
  /// resolved. Called once the answer is applied: what ICE can do without them goes on.
  func resolveHiddenCandidates(in answer: String) {
    let hidden = MDNSCandidates(answer: answer)
    guard !hidden.candidates.isEmpty else { return }
    let resolved = hidden.resolved(MDNSResolver.resolve(hidden.names))
    for candidate in resolved {
      ingest_webrtc_add_candidate(webrtc, candidate.section, candidate.text)
    }
    var fields = JSONObject()
    fields.add("mdns", hidden.candidates.count)
    fields.add("resolved", resolved.count)
    events.emit("candidates", fields)
  }

  /// Waits for the connection (ICE and DTLS) until `deadline`.
  func waitConnected(deadline: MonotonicInstant, stop: () -> Bool) throws(WHIPClientError) {
    let clock = SystemClock()
    while true {
      let (phase, failure) = lock.withLock { (self.phase, self.failure) }
      if phase == .connected { return }
      if let failure { throw .connectionFailed(failure) }
      if let error = busError() { throw .pipeline(error) }
      if stop() { return }
      guard clock.now() < deadline else {
        // Where it stopped: ICE not connected is the path (or the candidates), ICE connected
        // without the connection is DTLS.
        let (ice, connection) = lock.withLock { (lastIce, lastConnection) }
        let iceState = Self.iceStates.indices.contains(ice) ? Self.iceStates[ice] : "new"
        let connectionState =
          Self.connectionStates.indices.contains(connection)
          ? Self.connectionStates[connection] : "new"
        throw .connectionFailed(
          "no ICE/DTLS connection within the time allowed (ICE \(iceState), connection "
            + "\(connectionState))")
      }
      lock.withLock { _ = lock.wait(until: min(deadline, clock.now() + .milliseconds(100))) }
    }
  }

  /// The statistics webrtcbin reports now.
  func statistics() -> WebRTCStatistics {
    var statistics = WebRTCStatistics()
    guard let stats = ingest_webrtc_stats(webrtc) else { return statistics }
    defer { gst_structure_free(stats) }
    withUnsafeMutablePointer(to: &statistics) { pointer in
      _ = gst_structure_foreach(
        stats,
        { _, value, context in
          guard let value, let context, ingest_gst_value_is_structure(value) != 0,
            let entry = gst_value_get_structure(value)
          else { return 1 }
          context.assumingMemoryBound(to: WebRTCStatistics.self).pointee.add(entry)
          return 1
        }, pointer)
    }
    if let remb {
      let silence = ingest_rtcp_silence(remb)
      if silence >= 0 { statistics.rtcpSilenceMilliseconds = Double(silence) / 1000 }
      let bitsPerSecond = ingest_remb_bits_per_second(remb)
      if bitsPerSecond > 0 { statistics.receiverEstimateBitsPerSecond = Double(bitsPerSecond) }
    }
    if let rtt = statistics.roundTripSeconds { ingest_delivery_set_round_trip(delivery, rtt) }
    statistics.queueBytes = Int(ingest_g_get_uint64(videoSource, "current-level-bytes"))
    if let audioSource {
      statistics.queueBytes += Int(ingest_g_get_uint64(audioSource, "current-level-bytes"))
    }
    return statistics
  }

  /// What reached the receiver, as its reports say: frames older than `settle` milliseconds
  /// (every frame when `final`) are decided.
  func deliveryFigures(settleMilliseconds: Int = 1500, final: Bool = false)
    -> ingest_delivery_figures
  {
    var figures = ingest_delivery_figures()
    ingest_delivery_collect(delivery, UInt32(settleMilliseconds), final ? 1 : 0, &figures)
    return figures
  }

  /// Whether the receiver's reports cover every video packet sent.
  var receiverConfirmedAll: Bool { ingest_delivery_confirmed(delivery) != 0 }

  /// Waits (up to `deadline`) until both sources' queues are empty and a moment more, so that
  /// what was queued is sent before the session is deleted. The streams are not ended: an
  /// end-of-stream stops rtprtxsend, and the receiver's requests for the last packets would go
  /// unanswered. (webrtcbin posts no end-of-stream message to wait for anyway.)
  func drain(deadline: MonotonicInstant) {
    let sources = [videoSource] + (audioSource.map { [$0] } ?? [])
    let clock = SystemClock()
    while clock.now() < deadline {
      let queued = sources.reduce(0) { $0 + ingest_g_get_uint64($1, "current-level-bytes") }
      if queued == 0 { break }
      lock.withLock { _ = lock.wait(until: min(deadline, clock.now() + .milliseconds(20))) }
    }
    // The payloaders and webrtcbin hold at most a frame or two.
    clock.sleep(for: min(deadline - clock.now(), .milliseconds(100)))
  }

  func stop() {
    gst_element_set_state(pipeline, GST_STATE_NULL)
  }
}
