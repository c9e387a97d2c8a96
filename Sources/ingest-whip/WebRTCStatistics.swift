import CGStreamer
import IngestCore

/// What one `get-stats` of webrtcbin says about the sending side, summed over the streams
/// (video and audio): what left (outbound-rtp) and what the receiver reported back in its
/// RTCP receiver reports (remote-inbound-rtp).
struct WebRTCStatistics {
  var bytesSent: Double = 0
  var packetsSent: Double = 0
  var packetsLost: Double = 0
  /// The largest loss fraction any stream's last receiver report gave (0...1).
  var fractionLost: Double?
  /// The largest interarrival jitter reported, in seconds.
  var jitterSeconds: Double?
  /// The largest round trip measured from the receiver reports, in seconds.
  var roundTripSeconds: Double?
  var nackCount: Double = 0
  var pliCount: Double = 0
  var firCount: Double = 0
  /// The receiver's last estimate of the bit rate it can take (REMB), when it sent one.
  var receiverEstimateBitsPerSecond: Double?
  /// Milliseconds since the receiver's last RTCP packet, once one came.
  var rtcpSilenceMilliseconds: Double?
  /// Bytes waiting in the appsrcs' queues.
  var queueBytes = 0
  /// Whether any receiver report arrived.
  var hasRemote = false

  mutating func add(_ entry: UnsafePointer<GstStructure>) {
    guard let type = ingest_webrtc_stats_type(entry).map({ String(cString: $0) }) else { return }
    func number(_ name: String) -> Double? {
      var value = 0.0
      return ingest_gst_structure_number(entry, name, &value) != 0 ? value : nil
    }
    switch type {
    case "outbound-rtp":
      bytesSent += number("bytes-sent") ?? 0
      packetsSent += number("packets-sent") ?? 0
      nackCount += number("nack-count") ?? 0
      pliCount += number("pli-count") ?? 0
      firCount += number("fir-count") ?? 0
    case "remote-inbound-rtp":
      hasRemote = true
      packetsLost += max(0, number("packets-lost") ?? 0)
      if let fraction = number("fraction-lost") {
        fractionLost = max(fractionLost ?? 0, fraction)
      }
      if let jitter = number("jitter") { jitterSeconds = max(jitterSeconds ?? 0, jitter) }
      if let rtt = number("round-trip-time"), rtt > 0 {
        roundTripSeconds = max(roundTripSeconds ?? 0, rtt)
      }
    default: break
    }
  }

  /// Takes what was sent and lost from the packets counted on their way into webrtcbin and
  /// the receiver's own reports (`delivery.h`) rather than from `get-stats`: webrtcbin 1.22
  /// mixes the streams up once an RTX stream is in the session (the video SSRC's entry as
  /// `audio`, the audio one's missing, and zero once the sender times out at the end).
  mutating func take(_ delivery: ingest_delivery_figures) {
    bytesSent = Double(delivery.video_bytes + delivery.audio_bytes + delivery.rtx_bytes)
    packetsSent = Double(delivery.video_packets + delivery.audio_packets + delivery.rtx_packets)
    packetsLost = Double(
      max(0, delivery.video_lost_reported) + max(0, delivery.audio_lost_reported)
        + max(0, delivery.rtx_lost_reported))
    let fractions = [delivery.video_fraction_lost, delivery.audio_fraction_lost].filter { $0 >= 0 }
    fractionLost = fractions.max()
    hasRemote = hasRemote || delivery.have_video_report != 0
    nackCount = Double(delivery.nack_requests + delivery.nack_repeats)
  }

  /// The `stats` event line's fields (see `WHIPEvent` in `IngestWHIP`).
  func fields(
    droppedBeforeConnection: Int, droppedForProfile: Int, keyframeRequests: Int,
    delivery: ingest_delivery_figures, samples: (video: Int, audio: Int), final: Bool
  ) -> JSONObject {
    var object = JSONObject()
    object.add("bytes_sent", Int64(bytesSent))
    object.add("packets_sent", Int64(packetsSent))
    object.add("packets_lost", Int64(packetsLost))
    if let fractionLost { object.add("fraction_lost", fractionLost, decimals: 4) }
    if let jitterSeconds { object.add("jitter_ms", jitterSeconds * 1000, decimals: 2) }
    if let roundTripSeconds { object.add("rtt_ms", roundTripSeconds * 1000, decimals: 2) }
    if let receiverEstimateBitsPerSecond {
      object.add("remb_bps", Int64(receiverEstimateBitsPerSecond))
    }
    if let rtcpSilenceMilliseconds {
      object.add("rtcp_silence_ms", rtcpSilenceMilliseconds, decimals: 0)
    }
    object.add("nack", Int64(nackCount))
    object.add("pli", Int64(pliCount))
    object.add("fir", Int64(firCount))
    object.add("queue_bytes", queueBytes)
    object.add("dropped_before_connection", droppedBeforeConnection)
    object.add("dropped_for_profile", droppedForProfile)
    object.add("keyframe_requests", keyframeRequests)
    // What the receiver's reports say arrived (`delivery.h`), and retransmission.
    object.add("video_samples", samples.video)
    object.add("audio_samples", samples.audio)
    object.add("video_packets", Int64(delivery.video_packets))
    object.add("video_frames", Int64(delivery.video_frames))
    object.add("video_frames_delivered", Int64(delivery.frames_delivered))
    object.add("video_frames_lost", Int64(delivery.frames_lost))
    object.add("video_frames_unconfirmed", Int64(delivery.frames_unconfirmed))
    if delivery.have_video_report != 0 {
      object.add("video_packets_lost", delivery.video_lost_reported)
    }
    object.add("video_packets_unconfirmed", Int64(delivery.unconfirmed_packets))
    object.add("audio_packets", Int64(delivery.audio_packets))
    object.add("audio_packets_received", Int64(delivery.audio_received))
    object.add("rtx", delivery.rtx_active != 0)
    object.add("nack_requests", Int64(delivery.nack_requests))
    object.add("nack_repeats", Int64(delivery.nack_repeats))
    object.add("nack_unserved", Int64(delivery.nack_unserved))
    object.add("video_packets_not_asked", Int64(delivery.presumed_lost))
    object.add("rtx_packets", Int64(delivery.rtx_packets))
    object.add("rtx_bytes", Int64(delivery.rtx_bytes))
    object.add("rtx_copies", Int64(delivery.rtx_copies))
    object.add("nack_polls", Int64(delivery.polls))
    object.add("keyframes_covered", Int64(delivery.keyframes_covered))
    object.add("cover_packets", Int64(delivery.cover_packets))
    object.add("rtx_refused", Int64(delivery.rtx_refused))
    object.add("rtx_history_bytes", Int64(delivery.history_bytes))
    object.add("rtx_history_packets", Int64(delivery.history_packets))
    // Transport-wide congestion control feedback, where the receiver sends it.
    if delivery.twcc_feedback > 0 {
      object.add("twcc_feedback", Int64(delivery.twcc_feedback))
      object.add("twcc_packets_reported", Int64(delivery.twcc_reported))
      object.add("twcc_packets_lost", Int64(delivery.twcc_lost))
      if delivery.twcc_received_bps >= 0 {
        object.add("twcc_received_bps", Int64(delivery.twcc_received_bps))
      }
      if delivery.twcc_loss >= 0 { object.add("twcc_loss", delivery.twcc_loss, decimals: 4) }
      if delivery.twcc_queue_ms >= 0 {
        object.add("twcc_queue_ms", delivery.twcc_queue_ms, decimals: 1)
        object.add("twcc_gradient", delivery.twcc_gradient, decimals: 2)
      }
    }
    if final { object.add("final", true) }
    return object
  }
}
