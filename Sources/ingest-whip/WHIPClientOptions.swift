import IngestCore

/// `ingest-whip`'s command line: the endpoint's URL, the H.264 profiles to offer and the
/// statistics interval. The bearer
/// token comes from the environment only (`INGEST_WHIP_TOKEN`, set by the pipeline process
/// for this child), never the command line, where every user of the machine could read it.
struct WHIPClientOptions {
  static let tokenVariable = "INGEST_WHIP_TOKEN"

  static let usage = """
    usage: ingest-whip [--profiles LIST] [--stats-interval MS] [--connect-timeout S]
                       [--dead-after S] [--rtx-history-bytes N] [--rtx-history-ms MS]
                       [--ca-file PEM] http(s)://HOST[:PORT]/PATH
      Publishes the dump stream on standard input (docs/dump-format.md) to a WHIP endpoint
      through GStreamer's webrtcbin: H.264 (or HEVC where the answer takes it) in RTP, AAC
      re-encoded as Opus. Writes JSON lines on standard output (docs/whip.md). The bearer
      token, if any, is read from the environment variable INGEST_WHIP_TOKEN.
      Stops at the end of input, SIGINT or SIGTERM, and DELETEs the session. A receiver
      silent (no RTCP) for --dead-after seconds (default 10) is gone: the session ends
      with an error, so that a new one can be made; a shorter blackout is ridden out.
      --profiles high,main,baseline: the H.264 profiles the sender can switch to (a live
      encoder), offered in that order; the answer chooses, a `negotiated` line says which,
      and video in another profile is not sent. Without it the offer names the stream's own
      profile, and an answer that refuses it ends with the error profileRefused.
      A receiver's NACKs are answered by retransmission (RTX, RFC 4588) from a history of
      the last --rtx-history-ms milliseconds of video (default 3000), at most
      --rtx-history-bytes bytes (default 1048576; counted at the MTU, 1200 bytes a packet).
      --ca-file PEM: for https, trust the certificate authorities in PEM instead of the
      system's (a private CA); a certificate that is not trusted ends with the error
      certificate, which a new attempt cannot mend.
    """

  var endpoint: String
  /// The H.264 profiles to offer, most preferred first; nil: the stream's own only.
  var profiles: [H264Profile]?
  /// Certificate authorities to trust for an https endpoint instead of the system's.
  var caFile: String?
  var statsIntervalMilliseconds = 1000
  var connectTimeoutSeconds = 15
  /// How long the receiver may send no RTCP before the session is taken for dead. Longer
  /// than a blackout worth riding out (a few seconds), shorter than a viewer's patience.
  var deadAfterSeconds = 10
  /// The retransmission history's bounds: bytes (as packets of the MTU) and time.
  var historyBytes = 1 << 20
  var historyMilliseconds = 3000
  /// What one packet of the history is counted as: the payloaders' MTU (1200 bytes).
  static let historyPacketBytes = 1200

  /// The history's bound in packets.
  var historyPackets: Int { max(16, historyBytes / Self.historyPacketBytes) }

  init(_ arguments: [String]) throws(WHIPClientError) {
    var endpoint: String?
    var index = 0
    func value(_ name: String) throws(WHIPClientError) -> Int {
      index += 1
      guard index < arguments.count, let number = Int(arguments[index]), number > 0,
        number <= 600_000
      else { throw .usage("\(name) takes a positive whole number\n\(Self.usage)") }
      return number
    }
    while index < arguments.count {
      let argument = arguments[index]
      switch argument {
      case "--stats-interval": statsIntervalMilliseconds = try value(argument)
      case "--connect-timeout": connectTimeoutSeconds = try value(argument)
      case "--dead-after": deadAfterSeconds = try value(argument)
      case "--rtx-history-ms": historyMilliseconds = try value(argument)
      case "--rtx-history-bytes":
        index += 1
        guard index < arguments.count, let bytes = Int(arguments[index]),
          (16 * Self.historyPacketBytes)...(64 << 20) ~= bytes
        else {
          throw .usage(
            "--rtx-history-bytes takes a number of bytes from \(16 * Self.historyPacketBytes) "
              + "to \(64 << 20)\n\(Self.usage)")
        }
        historyBytes = bytes
      case "--profiles":
        index += 1
        let names = index < arguments.count ? arguments[index].split(separator: ",") : []
        let list = names.compactMap { H264Profile(rawValue: String($0)) }
        guard !list.isEmpty, list.count == names.count, Set(list).count == list.count else {
          throw .usage(
            "--profiles takes baseline, main and high, each once, comma-separated\n\(Self.usage)")
        }
        profiles = list
      case "--ca-file":
        index += 1
        guard index < arguments.count, !arguments[index].isEmpty else {
          throw .usage("--ca-file takes the path of a PEM file\n\(Self.usage)")
        }
        caFile = arguments[index]
      case "-h", "--help": throw .usage(Self.usage)
      default:
        let lower = argument.lowercased()
        guard endpoint == nil, lower.hasPrefix("http://") || lower.hasPrefix("https://") else {
          throw .usage("unexpected argument '\(argument.prefix(64))'\n\(Self.usage)")
        }
        endpoint = argument
      }
      index += 1
    }
    guard let endpoint else { throw .usage("no endpoint URL\n\(Self.usage)") }
    self.endpoint = endpoint
  }
}
