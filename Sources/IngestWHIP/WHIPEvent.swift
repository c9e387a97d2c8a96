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
  /// Periodic statistics.
  case stats(WHIPStatistics)
  /// The receiver asked for a keyframe (PLI or FIR).
  case keyframe
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
    case "stats": self = .stats(WHIPStatistics(value))
    case "keyframe": self = .keyframe
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
  }
}
