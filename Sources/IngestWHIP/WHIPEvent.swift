import IngestCore

/// One JSON line `ingest-whip` writes on its standard output (the protocol between the two
/// processes; `docs/whip.md` lists the lines).
public enum WHIPEvent: Sendable, Equatable {
  /// webrtcbin's ICE connection state (`new`, `checking`, `connected`, `completed`, `failed`,
  /// `disconnected`, `closed`).
  case ice(String)
  /// The peer connection's state, ICE and DTLS together (`connecting`, `connected`, `failed`).
  case connection(String)
  /// The endpoint answered the offer (its HTTP status, 201).
  case session(status: Int)
  /// The answer chose the video payload type `payloadType` of `codec` (`H264`, `H265`); for
  /// H.264 the `profile-level-id` the answer gives it and the profile it stands for in the
  /// offer (a live run's: the encoder is asked for it).
  case negotiated(codec: String, payloadType: Int, profileLevelID: String?, profile: H264Profile?)
  /// The answer's ICE candidates that hid their address behind a `.local` name, and how many
  /// of them multicast DNS resolved.
  case candidates(mdns: Int, resolved: Int)
  /// Periodic statistics.
  case stats(WHIPStatistics)
  /// A keyframe is wanted: the receiver asked (PLI or FIR; `unserved` false), or it asked for
  /// a packet that can no longer be sent again (`unserved` true).
  case keyframe(unserved: Bool)
  /// The session resource was deleted (its HTTP status), or the DELETE failed (`error`).
  case deleted(status: Int?, error: String?)
  /// The child stopped on an error: its name, message and whether another session may work.
  case error(name: String, message: String, retryable: Bool)
  /// The input ended before any sample.
  case end

  /// Decodes one line; nil for a line that is not an event this version knows.
  public init?(line: String) {
    guard let value = try? JSONValue(parsing: line), let name = value["event"]?.string else {
      return nil
    }
    switch name {
    case "ice": self = .ice(value["state"]?.string ?? "")
    case "connection": self = .connection(value["state"]?.string ?? "")
    case "session": self = .session(status: value["status"]?.int ?? 0)
    case "negotiated":
      self = .negotiated(
        codec: value["codec"]?.string ?? "", payloadType: value["payload_type"]?.int ?? 0,
        profileLevelID: value["profile_level_id"]?.string,
        profile: value["profile"]?.string.flatMap(H264Profile.init(rawValue:)))
    case "candidates":
      self = .candidates(mdns: value["mdns"]?.int ?? 0, resolved: value["resolved"]?.int ?? 0)
    case "stats": self = .stats(WHIPStatistics(value))
    case "keyframe": self = .keyframe(unserved: value["cause"]?.string == "unserved")
    case "deleted": self = .deleted(status: value["status"]?.int, error: value["error"]?.string)
    case "error":
      self = .error(
        name: value["name"]?.string ?? "unknown", message: value["message"]?.string ?? "",
        retryable: value["retryable"]?.bool ?? false)
    case "end": self = .end
    default: return nil
    }
  }
}

/// What a `stats` line says: totals since the session started, over both tracks, and the
/// receiver's last RTCP reports.
public struct WHIPStatistics: Sendable, Equatable {
  public var bytesSent: Int64 = 0
  public var packetsSent: Int64 = 0
  /// Packets the receiver reported lost (cumulative).
  public var packetsLost: Int64 = 0
  /// The loss fraction of the last receiver report (0...1), when one came.
  public var fractionLost: Double?
  public var jitterMilliseconds: Double?
  /// Round trip from the receiver reports.
  public var roundTripMilliseconds: Double?
  /// The receiver's last REMB, in bits per second, when it sent one.
  public var receiverEstimateBitsPerSecond: Double?
  /// Milliseconds since the receiver's last RTCP packet, once one came.
  public var rtcpSilenceMilliseconds: Double?
  public var nackCount: Int64 = 0
  public var pliCount: Int64 = 0
  public var firCount: Int64 = 0
  /// Bytes waiting in `ingest-whip`'s own queues (its appsrcs).
  public var queueBytes = 0
  /// Samples `ingest-whip` dropped before the connection was up (and video until its next
  /// keyframe after).
  public var droppedBeforeConnection = 0
  /// Video samples `ingest-whip` dropped because their H.264 profile does not fit the one the
  /// answer chose (until the encoder's first keyframe in it).
  public var droppedForProfile = 0
  /// Keyframe requests seen so far.
  public var keyframeRequests = 0
  /// Samples pushed into the pipeline (those that reached the payloaders' gates), by kind.
  public var videoSamples = 0
  public var audioSamples = 0
  /// Video RTP packets and frames (access units) sent, and the frames decided from the
  /// receiver's reports: arrived whole with every frame they depend on, or not.
  public var videoPackets: Int64 = 0
  public var videoFrames: Int64 = 0
  public var videoFramesDelivered: Int64 = 0
  public var videoFramesLost: Int64 = 0
  /// Of the frames lost, those sent after the receiver's last report when the session ended:
  /// possibly lost, as nothing the receiver said covers them.
  public var videoFramesUnconfirmed: Int64 = 0
  /// The receiver's cumulative lost for the video stream (packets lost on the way, those
  /// retransmission recovered included).
  public var videoPacketsLost: Int64?
  /// Video packets sent past the receiver's last report.
  public var videoPacketsUnconfirmed: Int64 = 0
  /// Audio (Opus) packets sent, and those the receiver's reports say it has.
  public var audioPackets: Int64 = 0
  public var audioPacketsReceived: Int64 = 0
  /// Whether retransmission (RTX) was negotiated.
  public var retransmission = false
  /// Packets the receiver asked for again (NACK), asked again within the round trip of a
  /// retransmission (not sent again), and asked for but no longer in the history.
  public var nackRequests: Int64 = 0
  public var nackRepeats: Int64 = 0
  public var nackUnserved: Int64 = 0
  /// Video packets sent one place late so that the receiver lists what it misses again
  /// (`delivery.h`, INGEST_POLL_PACKETS).
  public var nackPolls: Int64 = 0
  /// Keyframes covered: the video packets of the last round trip before each sent again beside
  /// it (`delivery.h`, INGEST_COVER_MARGIN), and those packets.
  public var keyframesCovered: Int64 = 0
  public var coverPackets: Int64 = 0
  /// Video packets the receiver reported lost and never asked for (placed by `ingest-whip`).
  public var videoPacketsNotAsked: Int64 = 0
  /// Retransmissions sent, and what the history holds now.
  public var rtxPackets: Int64 = 0
  public var rtxBytes: Int64 = 0
  public var rtxHistoryBytes: Int64 = 0
  /// Transport-wide congestion control feedback (transport-cc), where the receiver sends it
  /// (Chromium; aiortc never): feedback packets read, packets they reported on and of those
  /// reported not received (before any retransmission).
  public var transportFeedbackCount: Int64 = 0
  public var transportPacketsReported: Int64 = 0
  public var transportPacketsLost: Int64 = 0
  /// What the feedback of the last second says: bits per second received (on the receiver's
  /// clock, every packet: video, audio, retransmissions) and the share not received.
  public var transportReceivedBitsPerSecond: Double?
  public var transportLoss: Double?
  /// The one-way delay of the last 200 ms of arrivals above its least over 10 s (what waits
  /// in the path's queues), and its trend over the last second (milliseconds per second).
  public var transportQueueMilliseconds: Double?
  public var transportDelayGradient: Double?
  /// The session's last line: every frame is decided.
  public var final = false

  /// Audio samples the receiver got: those pushed, in the share of Opus packets it reports
  /// having.
  public var audioSamplesDelivered: Int {
    guard audioPackets > 0 else { return 0 }
    let share = min(1, Double(audioPacketsReceived) / Double(audioPackets))
    return Int((Double(audioSamples) * share).rounded())
  }

  public init() {}

  init(_ value: JSONValue) {
    func int64(_ name: String) -> Int64 { Int64(value[name]?.int ?? 0) }
    bytesSent = int64("bytes_sent")
    packetsSent = int64("packets_sent")
    packetsLost = int64("packets_lost")
    fractionLost = value["fraction_lost"]?.double
    jitterMilliseconds = value["jitter_ms"]?.double
    roundTripMilliseconds = value["rtt_ms"]?.double
    receiverEstimateBitsPerSecond = value["remb_bps"]?.double
    rtcpSilenceMilliseconds = value["rtcp_silence_ms"]?.double
    nackCount = int64("nack")
    pliCount = int64("pli")
    firCount = int64("fir")
    queueBytes = value["queue_bytes"]?.int ?? 0
    droppedBeforeConnection = value["dropped_before_connection"]?.int ?? 0
    droppedForProfile = value["dropped_for_profile"]?.int ?? 0
    keyframeRequests = value["keyframe_requests"]?.int ?? 0
    videoSamples = value["video_samples"]?.int ?? 0
    audioSamples = value["audio_samples"]?.int ?? 0
    videoPackets = int64("video_packets")
    videoFrames = int64("video_frames")
    videoFramesDelivered = int64("video_frames_delivered")
    videoFramesLost = int64("video_frames_lost")
    videoFramesUnconfirmed = int64("video_frames_unconfirmed")
    videoPacketsLost = value["video_packets_lost"]?.int.map(Int64.init)
    videoPacketsUnconfirmed = int64("video_packets_unconfirmed")
    audioPackets = int64("audio_packets")
    audioPacketsReceived = int64("audio_packets_received")
    retransmission = value["rtx"]?.bool ?? false
    nackRequests = int64("nack_requests")
    nackRepeats = int64("nack_repeats")
    nackUnserved = int64("nack_unserved")
    nackPolls = int64("nack_polls")
    keyframesCovered = int64("keyframes_covered")
    coverPackets = int64("cover_packets")
    videoPacketsNotAsked = int64("video_packets_not_asked")
    rtxPackets = int64("rtx_packets")
    rtxBytes = int64("rtx_bytes")
    rtxHistoryBytes = int64("rtx_history_bytes")
    transportFeedbackCount = int64("twcc_feedback")
    transportPacketsReported = int64("twcc_packets_reported")
    transportPacketsLost = int64("twcc_packets_lost")
    transportReceivedBitsPerSecond = value["twcc_received_bps"]?.double
    transportLoss = value["twcc_loss"]?.double
    transportQueueMilliseconds = value["twcc_queue_ms"]?.double
    transportDelayGradient = value["twcc_gradient"]?.double
    final = value["final"]?.bool ?? false
  }
}
