import CGStreamer
import Testing

/// `ingest-whip`'s bookkeeping of what reached the receiver (delivery.h), on hand-made RTP
/// packets: which packets cover a keyframe, how a request that crosses a cover's copy counts,
/// when a poll is due.
@Suite struct DeliveryTests {
  static let videoSSRC: UInt32 = 0x1234
  static let rtxSSRC: UInt32 = 0x5678
  /// A P slice, and a STAP-A holding a sequence parameter set (a keyframe's first packet).
  static let delta: [UInt8] = [0x41, 0x9a, 0x00]
  static let key: [UInt8] = [0x18, 0x00, 0x02, 0x67, 0x42]

  init() { gst_init(nil, nil) }

  static func packet(seq: UInt16, time: UInt32, ssrc: UInt32 = videoSSRC, payload: [UInt8])
    -> UnsafeMutablePointer<GstBuffer>
  {
    let buffer = gst_rtp_buffer_new_allocate(UInt32(payload.count), 0, 0)!
    var rtp = GstRTPBuffer()
    _ = gst_rtp_buffer_map(buffer, GST_MAP_WRITE, &rtp)
    gst_rtp_buffer_set_seq(&rtp, seq)
    gst_rtp_buffer_set_timestamp(&rtp, time)
    gst_rtp_buffer_set_ssrc(&rtp, ssrc)
    let target = gst_rtp_buffer_get_payload(&rtp)!.assumingMemoryBound(to: UInt8.self)
    for (index, byte) in payload.enumerated() { target[index] = byte }
    gst_rtp_buffer_unmap(&rtp)
    return buffer
  }

  /// A delivery with RTX on, a 100 ms round trip and loss seen now, that sent `frames` frames
  /// of three packets from sequence number 100 (a keyframe's first packet next: 100 + 3 ×
  /// `frames`, extended 65536 more), between `from` and `until` (monotonic µs).
  static func delivery(frames: Int) -> (
    UnsafeMutablePointer<ingest_delivery>, from: gint64, until: gint64
  ) {
    let from = g_get_monotonic_time()
    let delivery = ingest_delivery_new(500, 1000)!
    ingest_delivery_set_round_trip(delivery, 0.1)
    delivery.pointee.rtx_active = 1
    delivery.pointee.loss_seen = g_get_monotonic_time()
    delivery.pointee.video_fraction = 5
    for frame in 0..<frames {
      for index in 0..<3 {
        let buffer = packet(
          seq: UInt16(100 + 3 * frame + index), time: UInt32(3000 * frame), payload: delta)
        ingest_delivery_video_packet(delivery, buffer)
        gst_buffer_unref(buffer)
      }
    }
    return (delivery, from, g_get_monotonic_time())
  }

  static func cover(
    _ delivery: UnsafeMutablePointer<ingest_delivery>, first: guint64, at now: gint64
  )
    -> [UInt16]
  {
    var seqs = [UInt16](repeating: 0, count: Int(INGEST_COVER_MAX))
    let count = ingest_delivery_cover(delivery, first, now, &seqs)
    return Array(seqs.prefix(Int(count)))
  }

  /// Marks `seq` as sent again (at the time of the call), as rtprtxsend's output does.
  static func retransmitted(_ delivery: UnsafeMutablePointer<ingest_delivery>, seq: UInt16) {
    var buffer: UnsafeMutablePointer<GstBuffer>? = packet(
      seq: 7, time: 0, ssrc: rtxSSRC, payload: [UInt8(seq >> 8), UInt8(seq & 0xff)] + delta)
    buffer!.pointee.mini_object.flags |= GST_RTP_BUFFER_FLAG_RETRANSMISSION.rawValue
    _ = ingest_rtx_sent_each(&buffer, 0, delivery)
    gst_buffer_unref(buffer)
  }

  static func figures(_ delivery: UnsafeMutablePointer<ingest_delivery>)
    -> ingest_delivery_figures
  {
    var figures = ingest_delivery_figures()
    ingest_delivery_collect(delivery, 1500, 0, &figures)
    return figures
  }

  /// The packets of the last round trip and 40 ms before a keyframe are covered, newest first;
  /// older ones only when asked for in that time.
  @Test func theLastRoundTripBeforeAKeyframeIsCovered() {
    let (delivery, from, until) = Self.delivery(frames: 10)
    defer { g_free(delivery) }
    let first: guint64 = 65536 + 130
    let recent = Self.cover(delivery, first: first, at: from)
    #expect(recent.count == 30)
    #expect(recent.first == 129)
    #expect(recent.last == 100)
    // A second later none was sent in that time; one asked for 100 ms before is.
    #expect(Self.cover(delivery, first: first, at: until + 1_000_000).isEmpty)
    ingest_delivery_nacked(delivery, 105, until + 900_000)
    #expect(Self.cover(delivery, first: first, at: until + 1_000_000) == [105])
  }

  /// No cover within a second of the receiver asking for a keyframe, nor without loss.
  @Test func aRequestedKeyframeOrACleanPathIsNotCovered() {
    let (delivery, _, now) = Self.delivery(frames: 2)
    defer { g_free(delivery) }
    #expect(ingest_delivery_cover_due(delivery, now) != 0)
    delivery.pointee.key_requested = now - 500_000
    #expect(ingest_delivery_cover_due(delivery, now) == 0)
    delivery.pointee.key_requested = 0
    delivery.pointee.loss_seen = now - 4_000_000
    #expect(ingest_delivery_cover_due(delivery, now) == 0)
  }

  /// A request for a covered packet that crosses its copy is a request (the packet was lost),
  /// answered by the copy: not a repeat, not unserved; asked again, it is a repeat.
  @Test func aRequestCrossingACoversCopyIsAnsweredByIt() {
    let (delivery, from, _) = Self.delivery(frames: 10)
    defer { g_free(delivery) }
    #expect(Self.cover(delivery, first: 65536 + 130, at: from).contains(120))
    // Requests dated before the copy left: within the repeat window of it, however the test
    // is scheduled.
    let request = g_get_monotonic_time()
    Self.retransmitted(delivery, seq: 120)
    ingest_delivery_nacked(delivery, 120, request)
    var figures = Self.figures(delivery)
    #expect(figures.nack_requests == 1)
    #expect(figures.nack_repeats == 0)
    #expect(figures.nack_unserved == 0)
    ingest_delivery_nacked(delivery, 120, request)
    figures = Self.figures(delivery)
    #expect(figures.nack_requests == 1)
    #expect(figures.nack_repeats == 1)
    // A packet sent again at a request (not covered) asked again is a repeat from the first.
    let asked = g_get_monotonic_time()
    ingest_delivery_nacked(delivery, 121, asked)
    Self.retransmitted(delivery, seq: 121)
    ingest_delivery_nacked(delivery, 121, asked)
    figures = Self.figures(delivery)
    #expect(figures.nack_requests == 2)
    #expect(figures.nack_repeats == 2)
  }

  /// A poll is due after 64 packets, or a round trip and 50 ms (here 150 ms) after the last
  /// request once 8 packets followed it.
  @Test func aPollIsDueByPacketsOrByTime() {
    let (delivery, _, now) = Self.delivery(frames: 1)
    defer { g_free(delivery) }
    delivery.pointee.request_time = now
    delivery.pointee.since_request = 10
    #expect(ingest_delivery_poll_due(delivery, now) == 0)
    delivery.pointee.since_request = 64
    #expect(ingest_delivery_poll_due(delivery, now) != 0)
    #expect(delivery.pointee.since_request == 0)
    delivery.pointee.since_request = 10
    #expect(ingest_delivery_poll_due(delivery, now + 120_000) == 0)
    #expect(ingest_delivery_poll_due(delivery, now + 160_000) != 0)
    delivery.pointee.since_request = 5
    #expect(ingest_delivery_poll_due(delivery, now + 600_000) == 0)
  }
}
