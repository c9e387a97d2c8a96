import IngestCore
import IngestPOSIX

/// One WHIP session from start to stop: the dump's formats read, the pipeline built and
/// started, the offer POSTed and the answer applied, statistics reported while media flows,
/// and the session resource DELETEd at the end of input or on a stop signal.
struct WHIPPublisher {
  var options: WHIPClientOptions
  var token: String?
  var events: EventWriter

  func run() throws(WHIPClientError) {
    var reader = DumpReader(
      source: FileByteSource(descriptor: .standardInput, name: "standard input", closes: false))
    var video: VideoFormat?
    var audio: (kind: SampleKind, format: AACFormat)?
    var first: DumpSampleHeader?
    // The formats come before the first sample (the pipeline process writes them at open).
    reading: while true {
      let record: DumpRecord?
      do { record = try reader.next() } catch {
        if error.isRecoverable { continue }
        throw .input("\(error)")
      }
      switch record {
      case nil: break reading
      case .format(let kind, let format)?:
        if kind == .video {
          video = format.video
        } else if case .aac(let aac) = format, audio == nil || audio?.kind == kind {
          // WHIP carries one audio track: the first one announced.
          audio = (kind, aac)
        }
      case .sample(let sample)?:
        first = sample
        break reading
      case .event?: break
      }
    }
    guard let first else {
      events.emit("end")
      return
    }
    guard let video else { throw .input("the stream has no video track") }
    let session = try WebRTCSession(
      graph: MediaGraph(video: video, audio: audio?.format), events: events,
      history: (options.historyPackets, options.historyMilliseconds))
    try session.play()
    let feeder = SampleFeeder(session: session, video: video, audioKind: audio?.kind)
    // The reader moves to the feeding thread.
    _ = SystemThread.start { [reader] in feeder.run(reader: reader, first: first) }

    let clock = SystemClock()
    let timeout = TimeSpan.seconds(Int64(options.connectTimeoutSeconds))
    // A live encoder switches profiles: every one it can make is offered, and the answer
    // chooses. A dump has one: webrtcbin's offer names it, as the caps give it.
    let h264 = video.h264
    let profiles = h264 == nil ? nil : options.profiles
    var offered: H264Offer?
    let offer = try session.makeOffer(deadline: clock.now() + timeout) { sdp in
      guard let profiles, let h264,
        let (text, offer) = H264Offer.rewriting(sdp, profiles: profiles, level: h264.level)
      else { return sdp }
      offered = offer
      return text
    }
    let http = WHIPHTTPClient(token: token, caFile: options.caFile)
    let response = try http.post(offer: offer, to: options.endpoint)
    guard response.status == 201 else {
      // An endpoint without HEVC refuses the whole offer (aiortc answers 400) rather than
      // answering with the video rejected: say which codec it probably was.
      let refusal =
        (400..<600).contains(response.status)
        && ![401, 403, 404, 429].contains(response.status)
      if case .hevc = video, refusal, response.status < 500 {
        throw .codecRefused("HEVC (HTTP \(response.status): \(Self.reason(response.body)))")
      }
      let rejected = WHIPClientError.rejected(
        status: response.status, reason: Self.reason(response.body))
      // So does one without the H.264 profiles offered (aiortc: 400, "Failed to set remote
      // video description send parameters").
      if let h264, refusal {
        throw profileRefusal(h264, offered: profiles, offer: offer, http: http, otherwise: rejected)
      }
      throw rejected
    }
    guard let location = response.location, !location.isEmpty else {
      throw .badAnswer("201 without a Location header")
    }
    // Not an answer at all (an HTML page, an empty body): not a WHIP endpoint, and no reason
    // to blame the codec.
    guard Self.isSDP(response.body) else {
      throw .badAnswer("the 201 response is not an SDP answer (\(Self.describe(response.body)))")
    }
    let resource = WHIPHTTPClient.resolve(location, against: options.endpoint)
    var created = JSONObject()
    created.add("status", response.status)
    events.emit("session", created)
    do throws(WHIPClientError) {
      try negotiate(
        answer: response.body, graph: session.graph, offered: offered, session: session,
        http: http, offer: offer)
      try session.applyAnswer(response.body)
      session.resolveHiddenCandidates(in: response.body)
      try session.waitConnected(deadline: clock.now() + timeout) { WHIPStop.requested }
      try stream(session: session, feeder: feeder, clock: clock)
    } catch {
      deleteSession(resource, http: http)
      session.stop()
      throw error
    }
    deleteSession(resource, http: http)
    session.stop()
  }

  /// Whether `body` is a session description: its first line is the version line (RFC 8866).
  static func isSDP(_ body: String) -> Bool {
    body.drop { $0 == "\r" || $0 == "\n" || $0 == " " }.hasPrefix("v=0")
  }

  /// What a body that is not SDP looks like, for the message: empty, or its first printable
  /// characters.
  static func describe(_ body: String) -> String {
    let printable = body.unicodeScalars.prefix(200).filter { $0.value >= 0x20 && $0.value < 0x7F }
    let text = String(String.UnicodeScalarView(printable)).trimmingSpaces()
    if text.isEmpty {
      return body.isEmpty ? "an empty body" : "a body of \(body.utf8.count) unprintable bytes"
    }
    return "it begins '\(text.prefix(40))'"
  }

  /// Reads the payload type the answer chose (its first for the video codec), sends video as
  /// it and, when several H.264 profiles were offered, only in the profile it stands for; says
  /// so in a `negotiated` line (the pipeline process asks the encoder for that profile).
  private func negotiate(
    answer: String, graph: MediaGraph, offered: H264Offer?, session: WebRTCSession,
    http: WHIPHTTPClient, offer: String
  ) throws(WHIPClientError) {
    let section = SDPVideoSection(answer)
    guard let section, let chosen = section.payloadTypes(of: graph.videoEncodingName).first
    else {
      if case .h264(let format) = graph.video {
        throw profileRefusal(
          format, offered: offered?.payloadTypes.map(\.profile), offer: offer, http: http,
          otherwise: .codecRefused(graph.videoCodecName))
      }
      throw .codecRefused(graph.videoCodecName)
    }
    var fields = JSONObject()
    fields.add("codec", graph.videoEncodingName)
    fields.add("payload_type", chosen)
    var profile: H264Profile?
    if case .h264(let format) = graph.video {
      if let offered {
        guard let chosenProfile = offered.profile(of: chosen) else {
          throw .badAnswer("H.264 payload type \(chosen) was not offered")
        }
        profile = chosenProfile
      } else {
        profile = H264ProfileLevelID(format).profile
      }
      if let answered = section.profileLevelID(of: chosen) {
        fields.add("profile_level_id", answered.description)
      }
      if let profile { fields.add("profile", profile.rawValue) }
    }
    session.negotiate(payloadType: chosen, profile: offered == nil ? nil : profile)
    events.emit("negotiated", fields)
  }

  /// The error for an endpoint that refused the H.264 profiles offered: the dump's own
  /// (`offered` nil), or those a live encoder can make. A second offer, listing Constrained
  /// Baseline, Main and High, asks which it takes (its session is deleted at once): the
  /// message names those and what was offered. `otherwise` when that offer is refused too, or
  /// its answer takes a profile that was offered (then the profile was not the reason).
  private func profileRefusal(
    _ format: H264Format, offered: [H264Profile]?, offer: String, http: WHIPHTTPClient,
    otherwise: WHIPClientError
  ) -> WHIPClientError {
    let stream = H264ProfileLevelID(format)
    guard
      let (probe, probed) = H264Offer.rewriting(
        offer, profiles: [.constrainedBaseline, .main, .high], level: format.level),
      let response = try? http.post(offer: probe, to: options.endpoint), response.status == 201
    else { return otherwise }
    if let location = response.location, !location.isEmpty {
      _ = try? http.delete(WHIPHTTPClient.resolve(location, against: options.endpoint))
    }
    let section = SDPVideoSection(response.body)
    let accepted = (section?.payloadTypes(of: "H264") ?? []).compactMap { type in
      section?.profileLevelID(of: type)
        ?? probed.profile(of: type)?.profileLevelID(level: format.level)
    }
    let sendable = offered ?? stream.profile.map { [$0] } ?? []
    if accepted.contains(where: { $0.profile.map(sendable.contains) ?? false }) {
      return otherwise
    }
    let names = accepted.map(\.displayName).joined(separator: ", ")
    let what = accepted.isEmpty ? "no H.264 profile" : "only \(names)"
    guard let offered else {
      return .profileRefused(
        "the WHIP endpoint accepted \(what); the dump is \(stream.displayName)")
    }
    let list = offered.map { $0.profileLevelID(level: format.level).displayName }
    return .profileRefused(
      "the WHIP endpoint accepted \(what); the offer (profiles=) listed "
        + list.joined(separator: ", "))
  }

  /// Reports statistics while media flows, until the input ends or a stop signal; the last
  /// line decides every frame sent (`final`), after an error too.
  private func stream(session: WebRTCSession, feeder: SampleFeeder, clock: SystemClock)
    throws(WHIPClientError)
  {
    do {
      try streamUntilEnd(session: session, feeder: feeder, clock: clock)
    } catch {
      report(session: session, feeder: feeder, final: true)
      throw error
    }
  }

  private func streamUntilEnd(session: WebRTCSession, feeder: SampleFeeder, clock: SystemClock)
    throws(WHIPClientError)
  {
    let interval = TimeSpan.milliseconds(Int64(options.statsIntervalMilliseconds))
    let connectedAt = clock.now()
    var nextStats = clock.now() + interval
    while !WHIPStop.requested {
      if let end = feeder.end {
        if let failure = end { throw .input(failure) }
        // What is queued still leaves before the session is deleted, and the receiver's next
        // reports say what of it arrived (and ask for what did not: retransmission goes on).
        session.drain(deadline: clock.now() + .seconds(2))
        awaitReceiverReports(session: session, clock: clock)
        break
      }
      if let failure = session.failureReason { throw .connectionFailed(failure) }
      // The receiver sends reports every second or so: its silence past the grace period is a
      // dead session (webrtcbin 1.22's ICE has no consent checks to say so).
      let silence =
        session.rtcpSilenceMilliseconds
        ?? (clock.now() - connectedAt).inMilliseconds
      if silence > Double(options.deadAfterSeconds) * 1000 {
        throw .connectionFailed("no RTCP from the receiver for \(Int(silence / 1000)) s")
      }
      if let error = session.busError() { throw .pipeline(error) }
      let now = clock.now()
      if now >= nextStats {
        report(session: session, feeder: feeder)
        nextStats = now + interval
      }
      session.lock.withLock {
        _ = session.lock.wait(until: min(nextStats, now + .milliseconds(100)))
      }
    }
    report(session: session, feeder: feeder, final: true)
  }

  /// Waits (at most `finalReportWait`) until the receiver's reports cover every video packet
  /// sent: a receiver reports about once a second.
  private func awaitReceiverReports(session: WebRTCSession, clock: SystemClock) {
    let deadline = clock.now() + Self.finalReportWait
    while !session.receiverConfirmedAll && clock.now() < deadline && !WHIPStop.requested {
      session.lock.withLock {
        _ = session.lock.wait(until: min(deadline, clock.now() + .milliseconds(50)))
      }
    }
    // The receiver asks for what it misses as it notices (before that report, mostly), and
    // asks again a round trip later when a retransmission was lost: three round trips, at
    // least 300 ms, for those to be answered and arrive.
    let roundTrip = TimeSpan(seconds: session.statistics().roundTripSeconds ?? 0.1)
    clock.sleep(
      for: min(deadline - clock.now(), max(.milliseconds(300), roundTrip * 3)))
  }

  /// How long the end of a session waits for the receiver's reports of its last packets.
  static let finalReportWait: TimeSpan = .milliseconds(2500)

  private func report(session: WebRTCSession, feeder: SampleFeeder, final: Bool = false) {
    var statistics = session.statistics()
    let delivery = session.deliveryFigures(final: final)
    statistics.take(delivery)
    // A packet asked for that can no longer be sent again (out of the history, or no RTX):
    // the receiver cannot decode on until a keyframe, which is asked for now rather than
    // after its own request a round trip later.
    if delivery.new_unserved > 0 && !final {
      var fields = JSONObject()
      fields.add("cause", "unserved")
      events.emit("keyframe", fields)
    }
    events.emit(
      "stats",
      statistics.fields(
        droppedBeforeConnection: feeder.droppedCount,
        droppedForProfile: feeder.droppedForProfileCount,
        keyframeRequests: session.keyframeRequestCount, delivery: delivery,
        samples: feeder.pushedCounts, final: final))
  }

  private func deleteSession(_ resource: String, http: WHIPHTTPClient) {
    var fields = JSONObject()
    do {
      let response = try http.delete(resource)
      fields.add("status", response.status)
    } catch {
      fields.add("error", error.description)
    }
    events.emit("deleted", fields)
  }

  /// The first line of an error body, short, for the message.
  static func reason(_ body: String) -> String {
    let line = body.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
    return String(line.prefix(120))
  }
}
