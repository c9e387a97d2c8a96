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
      graph: MediaGraph(video: video, audio: audio?.format), events: events)
    try session.play()
    let feeder = SampleFeeder(reader: reader, session: session, audioKind: audio?.kind)
    _ = SystemThread.start { feeder.run(first: first) }

    let clock = SystemClock()
    let timeout = Int64(options.connectTimeoutSeconds) * 1_000_000_000
    let offer = try session.makeOffer(deadline: clock.now() + timeout)
    let http = WHIPHTTPClient(token: token)
    let response = try http.post(offer: offer, to: options.endpoint)
    guard response.status == 201 else {
      // An endpoint without HEVC refuses the whole offer (aiortc answers 400) rather than
      // answering with the video rejected: say which codec it probably was.
      if case .hevc = video, (400..<500).contains(response.status),
        ![401, 403, 404].contains(response.status)
      {
        throw .codecRefused("HEVC (HTTP \(response.status): \(Self.reason(response.body)))")
      }
      throw .rejected(status: response.status, reason: Self.reason(response.body))
    }
    guard let location = response.location, !location.isEmpty else {
      throw .badAnswer("201 without a Location header")
    }
    let resource = WHIPHTTPClient.resolve(location, against: options.endpoint)
    var created = JSONObject()
    created.add("status", response.status)
    events.emit("session", created)
    do throws(WHIPClientError) {
      try session.applyAnswer(response.body)
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

  /// Reports statistics while media flows, until the input ends or a stop signal.
  private func stream(session: WebRTCSession, feeder: SampleFeeder, clock: SystemClock)
    throws(WHIPClientError)
  {
    let interval = Int64(options.statsIntervalMilliseconds) * 1_000_000
    let connectedAt = clock.now()
    var nextStats = clock.now() + interval
    while !WHIPStop.requested {
      if let end = feeder.end {
        if let failure = end { throw .input(failure) }
        // What is queued still leaves before the session is deleted.
        session.drain(deadline: clock.now() + 2_000_000_000)
        break
      }
      if let failure = session.failureReason { throw .connectionFailed(failure) }
      // The receiver sends reports every second or so: its silence past the grace period is a
      // dead session (webrtcbin 1.22's ICE has no consent checks to say so).
      let silence = session.rtcpSilenceMilliseconds ?? Double(clock.now() - connectedAt) / 1e6
      if silence > Double(options.deadAfterSeconds) * 1000 {
        throw .connectionFailed("no RTCP from the receiver for \(Int(silence / 1000)) s")
      }
      if let error = session.busError() { throw .pipeline(error) }
      let now = clock.now()
      if now >= nextStats {
        report(session: session, feeder: feeder)
        nextStats = now + interval
      }
      session.lock.withLock { _ = session.lock.wait(until: min(nextStats, now + 100_000_000)) }
    }
    report(session: session, feeder: feeder)
  }

  private func report(session: WebRTCSession, feeder: SampleFeeder) {
    events.emit(
      "stats",
      session.statistics().fields(
        droppedBeforeConnection: feeder.droppedCount,
        keyframeRequests: session.keyframeRequestCount))
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
