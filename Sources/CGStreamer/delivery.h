#ifndef INGEST_CGSTREAMER_DELIVERY_H
#define INGEST_CGSTREAMER_DELIVERY_H
// What reached the receiver, from its own RTCP, and retransmission (RFC 4588) with a bounded
// history. Included by shim.h; the same rules apply (typed wrappers, nothing more than used).
//
// One `ingest_delivery` per process (ingest-whip runs one session): the video payloader's
// output is numbered here (extended sequence numbers, frames by RTP timestamp, keyframes by
// NAL unit type); the receiver's NACKs, what rtprtxsend sent again and the receiver reports'
// highest sequence number say which frames arrived whole. Updated from GStreamer's streaming
// and RTCP threads, read from the main thread: everything behind `lock`.

#include <gst/gst.h>
#include <gst/rtp/gstrtpbuffer.h>
#include <gst/rtp/gstrtcpbuffer.h>
#include <gst/rtp/gstrtphdrext.h>
#include "transport_cc.h"

#define INGEST_SEQ_SLOTS 16384
#define INGEST_FRAME_SLOTS 8192

typedef struct {
  guint64 ext;  // extended sequence number held here (0: none)
  guint64 frame;
  gint64 nack_time;    // the receiver's last request that was not a repeat (µs, monotonic)
  gint64 served_time;  // the last retransmission of it (µs)
  guint32 size;
  guint32 rtp_time;
  gboolean presumed_lost;  // lost without being asked for (see ingest_delivery_place_losses)
  gboolean covered;        // sent again before a keyframe, unasked (INGEST_COVER_MARGIN)
} ingest_seq_slot;

/// One receiver report's figures for the video stream, kept until the losses between it and the
/// previous one are placed.
typedef struct {
  gint64 time;
  guint64 highest_ext;
  gint64 lost;
} ingest_report_slot;

#define INGEST_REPORT_SLOTS 64
// The least repeat window (µs, ingest_delivery_set_round_trip). The round trip comes from the
// receiver's reports, a second apart, and a bottleneck's queue can add hundreds of
// milliseconds before the next one, while aiortc lists every packet it misses again at each
// new gap: a window of 20 ms on a 10 ms path answered the same requests again and again once
// a half-rate link's queue grew.
#define INGEST_REPEAT_WINDOW_MIN 100000
// Retransmissions are bounded by a budget, like the second copies: a retransmission costs
// INGEST_RTX_COST video packets sent (a fifth of the video at most), at most
// INGEST_RTX_BUDGET_MAX / INGEST_RTX_COST in a burst (aiortc's list after a blackout: the
// last 128 packets it misses; with 40 at once and a history of 1 s, 211 of 256 requests of a
// blackout run went unserved). A link that loses a third of what it is sent cannot carry
// that third again beside the stream: when the half-rate link overflowed, retransmissions
// reached 1.6 Mb/s in a second, beside 1.2 Mb/s of video, over a link of 1.3, and the
// reports said 42 to 50 % lost for seconds. A request over the budget is not
// served now (it counts as unserved, which asks for a keyframe); the receiver asks again.
#define INGEST_RTX_COST 5
#define INGEST_RTX_BUDGET_MAX (128 * INGEST_RTX_COST)
// Second copies of retransmissions (ingest_rtx_request_probe): one costs 20 video packets sent,
// at most 8 in a burst, and only while the last report's fraction lost is at most 13/256 (5 %).
#define INGEST_COPY_COST 20
#define INGEST_COPY_BUDGET_MAX (8 * INGEST_COPY_COST)
#define INGEST_COPY_MAX_FRACTION 13
// Asking the receiver for its list of missing packets again (ingest_delivery_poll_due): aiortc
// sends its list only when it sees a new gap, and only of the last 128 packets; a list lost on
// the way (or a retransmission lost after it) with no new gap in the next 128 packets is never
// asked for again, and its jitter buffer holds every later frame until 512 packets came (some
// 2 s), then asks for a keyframe. So while loss is about (a NACK, or a report counting loss,
// in the last INGEST_POLL_LOSS_WINDOW µs) but light (the last report's fraction lost at most
// INGEST_COPY_MAX_FRACTION: under heavier loss every packet or two leaves a new gap anyway,
// and after a blackout a list asked again brings retransmissions of packets the receiver may
// have given up on), a video packet goes out one place late once
// INGEST_POLL_PACKETS followed the last request or poll: the gap it leaves for a moment makes
// the receiver send its list again. The request for the late packet itself, made before it
// arrived, is not answered (ingest_order_probe).
#define INGEST_POLL_PACKETS 64
#define INGEST_POLL_LOSS_WINDOW 3000000
// At a low rate 64 packets take a second (0.8 Mb/s at start-up): a poll is due after a round
// trip and 50 ms too (100 to INGEST_POLL_INTERVAL µs), once INGEST_POLL_MIN_PACKETS followed:
// by then a lost retransmission would have been asked for again by a receiver that repeats
// its requests (a retransmission lost in the start-up climb stopped aiortc's picture for 537
// ms; with a poll 200 ms on at a 100 ms round trip, 480 ms).
#define INGEST_POLL_INTERVAL 200000
#define INGEST_POLL_MIN_PACKETS 8
// Covering a keyframe (ingest_order_probe): libwebrtc (Chromium) drops every frame still
// incomplete when a newer keyframe is whole ("has no GoP, dropping frame"), so a packet lost in
// the last round trip before a periodic keyframe (its request comes after the keyframe is
// whole), or a retransmission lost, costs the frames from it to the keyframe although all
// their packets arrive: 1 to 2 % of the frames at 2 % loss. So while loss is about but light
// (as for polls), the video packets sent, asked for or sent again in the last round trip and
// INGEST_COVER_MARGIN µs before a keyframe (among the INGEST_COVER_SCAN before it) go out again
// beside its first packet (at most INGEST_COVER_MAX), as retransmissions: a lost one, or one
// whose retransmission is lost or leaves after the keyframe, is there before it is whole.
// Holding the keyframe back a round trip instead kept every frame but made a freeze of some
// 200 ms at each one (20 in 45 s). Not within INGEST_COVER_AFTER_REQUEST µs of the receiver
// asking for a keyframe: the frames before that one are given up. Only among the
// INGEST_COVER_SCAN packets before the keyframe: aiortc takes a packet 100 or more behind the
// oldest it holds for a new stream, empties its jitter buffer and asks for a keyframe
// (covering 512 back, a copy of a packet retransmitted long before did that: its buffer then
// waited from that packet on for packets already gone, a 1.6 s gap and two keyframe requests
// at 2 % loss). At 8 Mb/s the last round trip may hold more: its last 90 packets are covered.
#define INGEST_COVER_MARGIN 40000
#define INGEST_COVER_MAX 64
#define INGEST_COVER_SCAN 90
#define INGEST_COVER_AFTER_REQUEST 1000000

// Transport-wide congestion control (transport-cc): every packet that leaves (video, audio,
// retransmissions) by its transport-wide sequence number, and what the receiver's feedback says
// of it. 8192 packets: some 40 s at 2 Mb/s, 10 s at 8 Mb/s, more than the figures look back.
#define INGEST_TWCC_SLOTS 8192
// The figures' windows (µs): the received rate and the loss over the feedback of the last
// second (a feedback covers a dozen packets or so: one loss in it reads 8 %), the one-way delay
// of the arrivals in the last 200 ms against its least over the last 10 s.
#define INGEST_TWCC_RATE_WINDOW 1000000
#define INGEST_TWCC_RECENT_WINDOW 200000
#define INGEST_TWCC_BASE_WINDOW 10000000
// A feedback reports on at most this many packets here (Chromium's cover some 100 ms).
#define INGEST_TWCC_MAX_REPORTED 4096

typedef struct {
  guint64 ext;        // extended transport-wide sequence number held here (0: none)
  gint64 sent;        // when it left (µs, monotonic)
  gint64 arrival;     // when it arrived, on the receiver's clock (µs), once reported received
  gint64 reported;    // when a feedback last reported on it (µs, monotonic; 0: not yet)
  guint32 size;
  gboolean received;  // the last feedback about it said received
} ingest_twcc_slot;

typedef struct {
  guint64 number;  // frame number held here (from 1; 0: none)
  guint64 first_ext;
  guint64 last_ext;
  gint64 sent_time;
  gboolean keyframe;
} ingest_frame_slot;

/// The figures `ingest_delivery_collect` gives.
typedef struct {
  guint64 video_packets;
  guint64 video_bytes;
  guint64 audio_bytes;
  /// The last receiver report's loss fraction (0...1) for the video and the audio stream,
  /// -1 before one came.
  double video_fraction_lost;
  double audio_fraction_lost;
  guint64 video_frames;
  /// Frames whose fate is known: every packet confirmed by a receiver report, and either
  /// arrived (or recovered by retransmission) with every frame it depends on, or not.
  guint64 frames_delivered;
  guint64 frames_lost;
  /// Of the frames lost, those decided at the end with no receiver report covering them: sent
  /// after its last report, their fate is not known (possibly lost).
  guint64 frames_unconfirmed;
  guint64 audio_packets;
  /// Audio packets the receiver's reports say it has (up to its highest sequence number, less
  /// those it reports lost).
  guint64 audio_received;
  guint64 nack_requests;   // sequence numbers the receiver asked for (repeats within the window not counted)
  guint64 nack_repeats;    // asked again within the window after a retransmission: not sent again
  guint64 nack_unserved;   // asked for and never sent again (no longer in the history, or no RTX)
  guint64 rtx_packets;
  guint64 rtx_bytes;
  guint64 rtx_copies;      // requests answered with a second copy of the retransmission
  guint64 polls;           // packets sent one place late to have the receiver list its losses
  guint64 keyframes_covered;  // keyframes whose last round trip before went out again
  guint64 cover_packets;      // packets sent again for that
  guint64 rtx_refused;     // requests not served for the retransmission budget
  guint64 history_bytes;   // bytes of video packets the retransmission history holds now
  guint64 history_packets;
  gint64 video_lost_reported;  // the receiver's cumulative lost for the video stream
  gint64 audio_lost_reported;
  gint64 rtx_lost_reported;
  gboolean have_video_report;
  gboolean rtx_active;
  guint64 new_unserved;  // unserved requests since the last collect
  guint64 presumed_lost;  // video packets reported lost that the receiver never asked for
  guint64 unconfirmed_packets;  // video packets sent past the receiver's last report
  // Transport-wide congestion control feedback, when the receiver sends it.
  guint64 twcc_feedback;   // feedback packets read
  guint64 twcc_reported;   // packets reported on (each once, at its last report)
  guint64 twcc_lost;       // of those, reported not received (before any retransmission)
  /// Over the feedback of the last second: bits per second received (from the receiver's own
  /// arrival times), and the share of the packets reported on that did not arrive; -1 without
  /// enough feedback (the rate wants 200 ms of arrivals).
  double twcc_received_bps;
  double twcc_loss;
  /// The one-way delay of the last 200 ms of arrivals above its least over the last 10 s, in
  /// milliseconds: what waits in the path's queues (the delay gradient, summed); -1 without.
  double twcc_queue_ms;
  /// The one-way delay's trend over the last second (ms per second: the arrival deltas less
  /// the send deltas, over the send time): a queue filling up is positive. 0 without.
  double twcc_gradient;
} ingest_delivery_figures;

typedef struct {
  GMutex lock;
  // Retransmission history bounds (rtprtxsend's max-size-packets and max-size-time, ms).
  guint history_packets;
  guint history_ms;
  // Requests for a packet sent again less than this ago are repeats (µs): the retransmission
  // may still be on its way.
  gint64 repeat_window;
  // The video stream.
  gboolean have_video;
  guint32 video_ssrc;
  gboolean hevc;
  guint64 last_ext;
  guint32 last_rtp_time;
  guint64 frames;  // frames numbered so far
  guint64 packets;
  guint64 video_bytes;
  guint64 audio_bytes;
  gint video_fraction;  // the last report's, in 256ths; -1 before one
  gint audio_fraction;
  ingest_seq_slot seqs[INGEST_SEQ_SLOTS];
  ingest_frame_slot frame_slots[INGEST_FRAME_SLOTS];
  // Finalising, in frame order.
  guint64 next_final;  // the next frame to decide (from 1)
  gboolean broken;     // the last decided frame could not be decoded (a reference was lost)
  guint64 delivered;
  guint64 lost;
  guint64 unconfirmed;  // of `lost`: decided at the end, past the receiver's last report
  // The receiver's reports of the video stream, from the oldest not yet placed.
  ingest_report_slot reports[INGEST_REPORT_SLOTS];
  guint report_head;
  guint report_count;
  gboolean have_placed;
  guint64 placed_ext;   // losses are placed up to here
  gint64 placed_lost;   // the cumulative lost of that report
  guint64 presumed_lost;
  // The receiver's reports.
  gboolean have_video_report;
  guint64 video_highest_ext;
  gint64 video_lost_reported;
  gboolean have_audio;
  guint32 audio_ssrc;
  guint64 audio_packets;
  guint64 audio_first_ext;
  guint64 audio_last_ext;
  gboolean have_audio_report;
  guint64 audio_highest_ext;
  gint64 audio_lost_reported;
  guint32 rtx_ssrc;
  gboolean have_rtx_ssrc;
  gint64 rtx_lost_reported;
  // Requests.
  gboolean rtx_active;
  guint64 nack_requests;
  guint64 nack_repeats;
  guint64 nack_unserved;
  guint64 rtx_packets;
  guint64 rtx_bytes;
  // Second copies of a retransmission (see ingest_rtx_request_probe): a budget in 20ths of a
  // copy, one for each video packet sent, so that copies stay within 5 % of the packets.
  guint copy_budget;
  guint64 rtx_copies;
  // Polls (ingest_delivery_poll_due): video packets since the last NACK or poll, when loss was
  // last seen (µs; 0: not yet), polls made.
  guint64 since_request;
  gint64 request_time;  // the last NACK or poll (µs)
  gint64 loss_seen;
  guint64 polls;
  GstBuffer *poll_held;   // the packet held back, until the next one has left
  gboolean pushing;       // held packets are being pushed (the probe lets them pass)
  // Keyframes covered (INGEST_COVER_MARGIN): the round trip (µs; 0: not yet measured), the
  // receiver's last keyframe request (PLI or FIR), the RTP time of the last keyframe seen.
  gint64 round_trip;
  gint64 key_requested;
  gboolean have_key_time;
  guint32 key_time;
  guint64 keyframes_covered;
  guint64 cover_packets;
  // Retransmissions: a budget in fifths of one, one for each video packet sent.
  guint rtx_budget;
  guint64 rtx_refused;  // requests not served for the budget
  gint64 unserved_checked;  // requests up to this time were checked for service
  guint64 new_unserved;
  // Transport-wide congestion control: the header extension's id (0: not negotiated), the
  // packets as they left (rtpbin's output, once rtpsession numbered them) and the feedback.
  guint twcc_id;
  gboolean have_twcc;
  guint64 twcc_last_ext;
  guint64 twcc_feedback;
  guint64 twcc_reported;
  guint64 twcc_lost;
  ingest_twcc_slot twcc[INGEST_TWCC_SLOTS];
  ingest_twcc_packet twcc_scratch[INGEST_TWCC_MAX_REPORTED];
} ingest_delivery;

static inline ingest_delivery *ingest_delivery_new(guint history_packets, guint history_ms) {
  ingest_delivery *delivery = g_new0(ingest_delivery, 1);
  g_mutex_init(&delivery->lock);
  delivery->history_packets = history_packets;
  delivery->history_ms = history_ms;
  delivery->repeat_window = 90 * 1000;
  delivery->next_final = 1;
  // Nothing decodes before the first keyframe.
  delivery->broken = TRUE;
  delivery->video_fraction = -1;
  delivery->audio_fraction = -1;
  return delivery;
}

/// Sets the window within which a request for a packet already sent again is a repeat: the
/// round trip the receiver reports measure (at least INGEST_REPEAT_WINDOW_MIN). A list of
/// missing packets made before the retransmission could arrive comes back within a round trip
/// of it (aiortc repeats its whole list at each new gap); a receiver that asks again because
/// the retransmission was lost does so a round trip of its own after its last request
/// (Chromium), at the earliest.
static inline void ingest_delivery_set_round_trip(ingest_delivery *delivery, double seconds) {
  gint64 window = (gint64)(seconds * 0.9e6);
  if (window < INGEST_REPEAT_WINDOW_MIN) window = INGEST_REPEAT_WINDOW_MIN;
  g_mutex_lock(&delivery->lock);
  delivery->repeat_window = window;
  delivery->round_trip = (gint64)(seconds * 1e6);
  g_mutex_unlock(&delivery->lock);
}

/// The extended number of a 16-bit one near `reference` (at most half a cycle either side).
static inline guint64 ingest_extend_seq(guint64 reference, guint16 seq) {
  gint16 delta = (gint16)(seq - (guint16)reference);
  return (guint64)((gint64)reference + delta);
}

/// Whether an H.264 (or HEVC) RTP payload holds a picture a decoder can start from (IDR,
/// IRAP) or its parameter sets.
static inline gboolean ingest_payload_is_key(const guint8 *data, gsize size, gboolean hevc) {
  if (size < 2) return FALSE;
  if (!hevc) {
    guint type = data[0] & 0x1f;
    if (type == 28 || type == 29) return size >= 2 && ((data[1] & 0x1f) == 5 || (data[1] & 0x1f) == 7);
    if (type == 24) {
      gsize offset = 1;
      while (offset + 3 <= size) {
        guint length = ((guint)data[offset] << 8) | data[offset + 1];
        guint inner = data[offset + 2] & 0x1f;
        if (inner == 5 || inner == 7) return TRUE;
        offset += 2 + length;
      }
      return FALSE;
    }
    return type == 5 || type == 7;
  }
  guint type = (data[0] >> 1) & 0x3f;
  if (type == 49) return size >= 3 && (((data[2] & 0x3f) >= 16 && (data[2] & 0x3f) <= 21) || (data[2] & 0x3f) == 32 || (data[2] & 0x3f) == 33);
  if (type == 48) {
    gsize offset = 2;
    while (offset + 3 <= size) {
      guint length = ((guint)data[offset] << 8) | data[offset + 1];
      guint inner = (data[offset + 2] >> 1) & 0x3f;
      if ((inner >= 16 && inner <= 21) || inner == 32 || inner == 33) return TRUE;
      offset += 2 + length;
    }
    return FALSE;
  }
  return (type >= 16 && type <= 21) || type == 32 || type == 33;
}

static inline void ingest_delivery_video_packet(ingest_delivery *delivery, GstBuffer *buffer) {
  GstRTPBuffer rtp = GST_RTP_BUFFER_INIT;
  if (!gst_rtp_buffer_map(buffer, GST_MAP_READ, &rtp)) return;
  guint16 seq = gst_rtp_buffer_get_seq(&rtp);
  guint32 time = gst_rtp_buffer_get_timestamp(&rtp);
  guint32 ssrc = gst_rtp_buffer_get_ssrc(&rtp);
  gboolean key = ingest_payload_is_key(gst_rtp_buffer_get_payload(&rtp),
                                       gst_rtp_buffer_get_payload_len(&rtp), delivery->hevc);
  guint32 size = (guint32)gst_buffer_get_size(buffer);
  gst_rtp_buffer_unmap(&rtp);
  gint64 now = g_get_monotonic_time();
  g_mutex_lock(&delivery->lock);
  guint64 ext;
  if (!delivery->have_video || ssrc != delivery->video_ssrc) {
    // The first packet (or a new stream): numbering starts a cycle in, so that it never wraps
    // below zero.
    ext = delivery->have_video ? delivery->last_ext + 1 : 65536 + seq;
    delivery->have_video = TRUE;
    delivery->video_ssrc = ssrc;
    delivery->last_ext = ext;
  } else {
    ext = ingest_extend_seq(delivery->last_ext, seq);
    if (ext > delivery->last_ext) delivery->last_ext = ext;
  }
  delivery->packets++;
  delivery->since_request++;
  if (delivery->copy_budget < INGEST_COPY_BUDGET_MAX) delivery->copy_budget++;
  if (delivery->rtx_budget < INGEST_RTX_BUDGET_MAX) delivery->rtx_budget++;
  delivery->video_bytes += size;
  if (delivery->frames == 0 || time != delivery->last_rtp_time) {
    delivery->frames++;
    delivery->last_rtp_time = time;
    ingest_frame_slot *frame = &delivery->frame_slots[delivery->frames % INGEST_FRAME_SLOTS];
    // A frame that was never decided leaves the ring: it counts as not delivered.
    if (frame->number != 0 && frame->number >= delivery->next_final) {
      delivery->lost += frame->number - delivery->next_final + 1;
      delivery->next_final = frame->number + 1;
      delivery->broken = TRUE;
    }
    frame->number = delivery->frames;
    frame->first_ext = ext;
    frame->last_ext = ext;
    frame->sent_time = now;
    frame->keyframe = FALSE;
  }
  ingest_frame_slot *frame = &delivery->frame_slots[delivery->frames % INGEST_FRAME_SLOTS];
  if (ext > frame->last_ext) frame->last_ext = ext;
  if (ext < frame->first_ext) frame->first_ext = ext;
  if (key) frame->keyframe = TRUE;
  ingest_seq_slot *slot = &delivery->seqs[ext % INGEST_SEQ_SLOTS];
  slot->ext = ext;
  slot->frame = delivery->frames;
  slot->nack_time = 0;
  slot->served_time = 0;
  slot->presumed_lost = FALSE;
  slot->covered = FALSE;
  slot->size = size;
  slot->rtp_time = time;
  g_mutex_unlock(&delivery->lock);
}

static inline void ingest_delivery_audio_packet(ingest_delivery *delivery, GstBuffer *buffer) {
  GstRTPBuffer rtp = GST_RTP_BUFFER_INIT;
  if (!gst_rtp_buffer_map(buffer, GST_MAP_READ, &rtp)) return;
  guint16 seq = gst_rtp_buffer_get_seq(&rtp);
  guint32 ssrc = gst_rtp_buffer_get_ssrc(&rtp);
  gst_rtp_buffer_unmap(&rtp);
  g_mutex_lock(&delivery->lock);
  delivery->audio_bytes += gst_buffer_get_size(buffer);
  if (!delivery->have_audio || ssrc != delivery->audio_ssrc) {
    delivery->have_audio = TRUE;
    delivery->audio_ssrc = ssrc;
    delivery->audio_first_ext = 65536 + seq;
    delivery->audio_last_ext = delivery->audio_first_ext;
    delivery->audio_packets = 0;
  } else {
    guint64 ext = ingest_extend_seq(delivery->audio_last_ext, seq);
    if (ext > delivery->audio_last_ext) delivery->audio_last_ext = ext;
  }
  delivery->audio_packets++;
  g_mutex_unlock(&delivery->lock);
}

typedef struct {
  gint open;
  ingest_delivery *delivery;
  gboolean video;
} ingest_tracked_gate;

static inline gboolean ingest_tracked_gate_each(GstBuffer **buffer, guint index, gpointer data) {
  ingest_tracked_gate *gate = (ingest_tracked_gate *)data;
  if (gate->video) {
    ingest_delivery_video_packet(gate->delivery, *buffer);
  } else {
    ingest_delivery_audio_packet(gate->delivery, *buffer);
  }
  return TRUE;
}

static inline GstPadProbeReturn ingest_tracked_gate_probe(GstPad *pad, GstPadProbeInfo *info,
                                                          gpointer data) {
  ingest_tracked_gate *gate = (ingest_tracked_gate *)data;
  if (!g_atomic_int_get(&gate->open)) return GST_PAD_PROBE_DROP;
  if (info->type & GST_PAD_PROBE_TYPE_BUFFER_LIST) {
    gst_buffer_list_foreach(GST_PAD_PROBE_INFO_BUFFER_LIST(info), ingest_tracked_gate_each, gate);
  } else if (info->type & GST_PAD_PROBE_TYPE_BUFFER) {
    GstBuffer *buffer = GST_PAD_PROBE_INFO_BUFFER(info);
    ingest_tracked_gate_each(&buffer, 0, gate);
  }
  return GST_PAD_PROBE_OK;
}

/// A closed gate on a payloader's source pad (buffers pass only once it is open; events always
/// do, so caps still reach webrtcbin for the offer) that numbers what passes: the video
/// payloader's packets and frames, the audio one's packets. Owned by the pad's probe.
static inline ingest_tracked_gate *ingest_gst_add_tracked_gate(GstPad *pad,
                                                               ingest_delivery *delivery,
                                                               gboolean video, gboolean hevc) {
  ingest_tracked_gate *gate = g_new0(ingest_tracked_gate, 1);
  gate->delivery = delivery;
  gate->video = video;
  if (video) delivery->hevc = hevc;
  gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST,
                    ingest_tracked_gate_probe, gate, g_free);
  return gate;
}

static inline void ingest_tracked_gate_open(ingest_tracked_gate *gate) {
  g_atomic_int_set(&gate->open, 1);
}

/// Whether a request for `seq` (extended) now is a repeat of one already answered within the
/// window. Called with the lock held.
static inline gboolean ingest_delivery_is_repeat(ingest_delivery *delivery, ingest_seq_slot *slot,
                                                 gint64 now) {
  return delivery->rtx_active && slot->served_time != 0 &&
         now - slot->served_time < delivery->repeat_window;
}

/// Notes a request for the packet in `slot` made at `time`. One placed as lost without being
/// asked for (a poll made the receiver list it) is no longer: its fate is the request's.
/// Called with the lock held.
static inline void ingest_delivery_asked(ingest_delivery *delivery, ingest_seq_slot *slot,
                                         gint64 time) {
  delivery->nack_requests++;
  slot->nack_time = time;
  if (slot->presumed_lost) {
    slot->presumed_lost = FALSE;
    delivery->presumed_lost--;
  }
}

/// One NACK's packet (RTCP thread): noted as asked for, unless it is a repeat.
static inline void ingest_delivery_nacked(ingest_delivery *delivery, guint16 seq, gint64 now) {
  if (!delivery->have_video) return;
  guint64 ext = ingest_extend_seq(delivery->last_ext, seq);
  ingest_seq_slot *slot = &delivery->seqs[ext % INGEST_SEQ_SLOTS];
  if (slot->ext != ext) return;
  if (ingest_delivery_is_repeat(delivery, slot, now)) {
    if (slot->covered && slot->nack_time == 0) {
      // The first request for a packet a keyframe's cover sent again: it was lost, and the
      // copy on its way answers it (not sent a third time), as if asked for then.
      ingest_delivery_asked(delivery, slot, slot->served_time);
      return;
    }
    delivery->nack_repeats++;
    return;
  }
  ingest_delivery_asked(delivery, slot, now);
}

/// One packet leaving rtpbin: its transport-wide sequence number (written by rtpsession, across
/// the bundle: video, audio, retransmissions), when and how large.
static inline void ingest_delivery_twcc_sent(ingest_delivery *delivery, GstBuffer *buffer,
                                             gint64 now) {
  guint id = delivery->twcc_id;
  if (id == 0) return;
  GstRTPBuffer rtp = GST_RTP_BUFFER_INIT;
  if (!gst_rtp_buffer_map(buffer, GST_MAP_READ, &rtp)) return;
  gpointer data = NULL;
  guint size = 0;
  gboolean found =
      gst_rtp_buffer_get_extension_onebyte_header(&rtp, (guint8)id, 0, &data, &size) && size >= 2;
  guint16 seq = found ? GST_READ_UINT16_BE(data) : 0;
  gst_rtp_buffer_unmap(&rtp);
  if (!found) return;
  g_mutex_lock(&delivery->lock);
  guint64 ext;
  if (!delivery->have_twcc) {
    ext = 65536 + seq;
    delivery->have_twcc = TRUE;
    delivery->twcc_last_ext = ext;
  } else {
    ext = ingest_extend_seq(delivery->twcc_last_ext, seq);
    if (ext > delivery->twcc_last_ext) delivery->twcc_last_ext = ext;
  }
  ingest_twcc_slot *slot = &delivery->twcc[ext % INGEST_TWCC_SLOTS];
  memset(slot, 0, sizeof(*slot));
  slot->ext = ext;
  slot->sent = now;
  slot->size = (guint32)gst_buffer_get_size(buffer);
  g_mutex_unlock(&delivery->lock);
}

typedef struct {
  ingest_delivery *delivery;
  gint64 now;
} ingest_twcc_probe_each;

static inline gboolean ingest_twcc_sent_each(GstBuffer **buffer, guint index, gpointer data) {
  ingest_twcc_probe_each *each = (ingest_twcc_probe_each *)data;
  ingest_delivery_twcc_sent(each->delivery, *buffer, each->now);
  return TRUE;
}

static inline GstPadProbeReturn ingest_twcc_sent_probe(GstPad *pad, GstPadProbeInfo *info,
                                                       gpointer data) {
  ingest_twcc_probe_each each = {(ingest_delivery *)data, g_get_monotonic_time()};
  if (info->type & GST_PAD_PROBE_TYPE_BUFFER_LIST) {
    gst_buffer_list_foreach(GST_PAD_PROBE_INFO_BUFFER_LIST(info), ingest_twcc_sent_each, &each);
  } else if (info->type & GST_PAD_PROBE_TYPE_BUFFER) {
    GstBuffer *buffer = GST_PAD_PROBE_INFO_BUFFER(info);
    ingest_twcc_sent_each(&buffer, 0, &each);
  }
  return GST_PAD_PROBE_OK;
}

/// Reads transport-cc feedback (extension `id`, as the answer accepted it) from now on: what
/// leaves `rtpbin` (webrtcbin's, session 0: bundled) on its way to DTLS and the network is
/// numbered there. FALSE when rtpbin has no such pad.
static inline gboolean ingest_delivery_watch_twcc(ingest_delivery *delivery, GstElement *webrtc,
                                                  guint id) {
  GstElement *rtpbin = gst_bin_get_by_name(GST_BIN(webrtc), "rtpbin");
  if (rtpbin == NULL) return FALSE;
  GstPad *pad = gst_element_get_static_pad(rtpbin, "send_rtp_src_0");
  gst_object_unref(rtpbin);
  if (pad == NULL) return FALSE;
  g_mutex_lock(&delivery->lock);
  delivery->twcc_id = id;
  g_mutex_unlock(&delivery->lock);
  gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST,
                    ingest_twcc_sent_probe, delivery, NULL);
  gst_object_unref(pad);
  return TRUE;
}

/// One transport-cc feedback's FCI (`length` bytes): each packet it reports on is marked
/// received (with its arrival on the receiver's clock) or not. A later feedback may report a
/// packet again (one that arrived late, out of order): the last word counts. Called with the
/// lock held.
static inline void ingest_delivery_twcc_feedback(ingest_delivery *delivery, const guint8 *fci,
                                                 gsize length, gint64 now) {
  if (fci == NULL || !delivery->have_twcc) return;
  ingest_twcc_header header;
  int count = ingest_twcc_parse(fci, length, &header, delivery->twcc_scratch,
                                INGEST_TWCC_MAX_REPORTED);
  if (count < 0) return;
  delivery->twcc_feedback++;
  for (int i = 0; i < count; i++) {
    const ingest_twcc_packet *packet = &delivery->twcc_scratch[i];
    guint64 ext = ingest_extend_seq(delivery->twcc_last_ext, packet->sequence);
    ingest_twcc_slot *slot = &delivery->twcc[ext % INGEST_TWCC_SLOTS];
    if (slot->ext != ext) continue;
    gboolean received = packet->status != INGEST_TWCC_NOT_RECEIVED;
    if (slot->reported == 0) {
      delivery->twcc_reported++;
      if (!received) delivery->twcc_lost++;
    } else if (slot->received != received) {
      // Reported again, the other way (Chromium reports a packet that came late as received).
      if (received) delivery->twcc_lost--; else delivery->twcc_lost++;
    }
    slot->reported = now;
    slot->received = received;
    if (received) slot->arrival = packet->arrival_us;
  }
}

/// The transport-cc figures now (see ingest_delivery_figures). Called with the lock held.
static inline void ingest_delivery_twcc_figures(ingest_delivery *delivery, gint64 now,
                                                ingest_delivery_figures *out) {
  out->twcc_feedback = delivery->twcc_feedback;
  out->twcc_reported = delivery->twcc_reported;
  out->twcc_lost = delivery->twcc_lost;
  out->twcc_received_bps = -1;
  out->twcc_loss = -1;
  out->twcc_queue_ms = -1;
  out->twcc_gradient = 0;
  if (!delivery->have_twcc || delivery->twcc_feedback == 0) return;
  // Pass 1, newest first, over what left in the last 10 s: the rate and loss of what the last
  // second's feedback reported on, the least one-way delay, the newest arrival.
  guint64 received = 0, lost = 0, bytes = 0;
  gint64 first_arrival = G_MAXINT64, last_arrival = G_MININT64, first_size = 0;
  gint64 least = G_MAXINT64;
  guint64 low = delivery->twcc_last_ext >= INGEST_TWCC_SLOTS ? delivery->twcc_last_ext - INGEST_TWCC_SLOTS + 1 : 0;
  for (guint64 ext = delivery->twcc_last_ext; ext >= low && ext > 0; ext--) {
    ingest_twcc_slot *slot = &delivery->twcc[ext % INGEST_TWCC_SLOTS];
    if (slot->ext != ext) break;
    if (now - slot->sent > INGEST_TWCC_BASE_WINDOW) break;
    if (slot->reported == 0) continue;
    if (slot->received) {
      gint64 delay = slot->arrival - slot->sent;
      if (delay < least) least = delay;
    }
    if (now - slot->reported > INGEST_TWCC_RATE_WINDOW) continue;
    if (!slot->received) {
      lost++;
      continue;
    }
    received++;
    bytes += slot->size;
    if (slot->arrival < first_arrival) {
      first_arrival = slot->arrival;
      first_size = slot->size;
    }
    if (slot->arrival > last_arrival) last_arrival = slot->arrival;
  }
  if (received + lost > 0) out->twcc_loss = (double)lost / (double)(received + lost);
  // The rate over the arrivals' span: what arrived after the first of them.
  if (received >= 2 && last_arrival - first_arrival >= 200000) {
    out->twcc_received_bps =
        (double)(bytes - (guint64)first_size) * 8e6 / (double)(last_arrival - first_arrival);
  }
  // No queue figure from feedback older than the window (a receiver gone quiet): it would
  // describe the path as it was.
  if (received == 0 || least == G_MAXINT64) return;
  // Pass 2: the one-way delay of the last 200 ms of arrivals against the least, and its trend
  // over the last second of sends (least squares of delay on send time).
  double sum = 0, count = 0;
  double n = 0, st = 0, sd = 0, stt = 0, std = 0;
  for (guint64 ext = delivery->twcc_last_ext; ext >= low && ext > 0; ext--) {
    ingest_twcc_slot *slot = &delivery->twcc[ext % INGEST_TWCC_SLOTS];
    if (slot->ext != ext || now - slot->sent > INGEST_TWCC_BASE_WINDOW) break;
    if (slot->reported == 0 || !slot->received) continue;
    double delay = (double)(slot->arrival - slot->sent - least) / 1000.0;
    if (last_arrival - slot->arrival <= INGEST_TWCC_RECENT_WINDOW) {
      sum += delay;
      count++;
    }
    if (now - slot->sent <= INGEST_TWCC_RATE_WINDOW + INGEST_TWCC_RECENT_WINDOW) {
      double t = (double)(slot->sent - now) / 1e6;
      n++;
      st += t;
      sd += delay;
      stt += t * t;
      std += t * delay;
    }
  }
  if (count > 0) out->twcc_queue_ms = sum / count;
  double spread = n * stt - st * st;
  if (n >= 10 && spread > 0) out->twcc_gradient = (n * std - st * sd) / spread;
}

/// Reads one RTCP compound packet from the receiver: its report blocks about our streams, its
/// NACKs for the video stream and its transport-cc feedback.
static inline void ingest_delivery_rtcp(ingest_delivery *delivery, GstBuffer *buffer) {
  GstRTCPBuffer rtcp = GST_RTCP_BUFFER_INIT;
  if (!gst_rtcp_buffer_map(buffer, GST_MAP_READ, &rtcp)) return;
  gint64 now = g_get_monotonic_time();
  g_mutex_lock(&delivery->lock);
  GstRTCPPacket packet;
  gboolean more = gst_rtcp_buffer_get_first_packet(&rtcp, &packet);
  while (more) {
    GstRTCPType type = gst_rtcp_packet_get_type(&packet);
    if (type == GST_RTCP_TYPE_RR || type == GST_RTCP_TYPE_SR) {
      guint count = gst_rtcp_packet_get_rb_count(&packet);
      for (guint i = 0; i < count; i++) {
        guint32 ssrc, highest, jitter, lsr, dlsr;
        guint8 fraction;
        gint32 lost;
        gst_rtcp_packet_get_rb(&packet, i, &ssrc, &fraction, &lost, &highest, &jitter, &lsr, &dlsr);
        if (delivery->have_video && ssrc == delivery->video_ssrc) {
          guint64 ext = ingest_extend_seq(delivery->last_ext, (guint16)highest);
          if (!delivery->have_video_report || ext > delivery->video_highest_ext) {
            delivery->video_highest_ext = ext;
          }
          delivery->have_video_report = TRUE;
          delivery->video_lost_reported = lost;
          delivery->video_fraction = fraction;
          if (fraction > 0) delivery->loss_seen = now;
          if (delivery->report_count < INGEST_REPORT_SLOTS) {
            ingest_report_slot *report =
                &delivery->reports[(delivery->report_head + delivery->report_count) % INGEST_REPORT_SLOTS];
            report->time = now;
            report->highest_ext = ext;
            report->lost = lost;
            delivery->report_count++;
          }
        } else if (delivery->have_audio && ssrc == delivery->audio_ssrc) {
          guint64 ext = ingest_extend_seq(delivery->audio_last_ext, (guint16)highest);
          if (!delivery->have_audio_report || ext > delivery->audio_highest_ext) {
            delivery->audio_highest_ext = ext;
          }
          delivery->have_audio_report = TRUE;
          delivery->audio_lost_reported = lost;
          delivery->audio_fraction = fraction;
        } else if (delivery->have_rtx_ssrc && ssrc == delivery->rtx_ssrc) {
          delivery->rtx_lost_reported = lost;
        }
      }
    } else if (type == GST_RTCP_TYPE_RTPFB &&
               gst_rtcp_packet_fb_get_type(&packet) == GST_RTCP_RTPFB_TYPE_NACK &&
               delivery->have_video &&
               gst_rtcp_packet_fb_get_media_ssrc(&packet) == delivery->video_ssrc) {
      guint8 *fci = gst_rtcp_packet_fb_get_fci(&packet);
      guint words = gst_rtcp_packet_fb_get_fci_length(&packet);
      delivery->since_request = 0;
      delivery->request_time = now;
      delivery->loss_seen = now;
      for (guint i = 0; fci != NULL && i < words; i++) {
        guint16 pid = GST_READ_UINT16_BE(fci + 4 * i);
        guint16 blp = GST_READ_UINT16_BE(fci + 4 * i + 2);
        ingest_delivery_nacked(delivery, pid, now);
        for (guint bit = 0; bit < 16; bit++) {
          if (blp & (1u << bit)) ingest_delivery_nacked(delivery, (guint16)(pid + bit + 1), now);
        }
      }
    }
    if (type == GST_RTCP_TYPE_PSFB &&
        (gst_rtcp_packet_fb_get_type(&packet) == GST_RTCP_PSFB_TYPE_PLI ||
         gst_rtcp_packet_fb_get_type(&packet) == GST_RTCP_PSFB_TYPE_FIR)) {
      delivery->key_requested = now;
    }
    if (type == GST_RTCP_TYPE_RTPFB &&
        gst_rtcp_packet_fb_get_type(&packet) == GST_RTCP_RTPFB_TYPE_TWCC) {
      ingest_delivery_twcc_feedback(delivery, gst_rtcp_packet_fb_get_fci(&packet),
                                    gst_rtcp_packet_fb_get_fci_length(&packet) * 4, now);
    }
    more = gst_rtcp_packet_move_to_next(&packet);
  }
  g_mutex_unlock(&delivery->lock);
  gst_rtcp_buffer_unmap(&rtcp);
}

/// rtprtxsend's source pad, upstream: a retransmission request for a packet sent again within
/// the window is dropped (the receiver repeats its list of missing packets; aiortc in every
/// NACK), so that one loss costs one retransmission per round trip, not a burst.
///
/// A first request is answered twice while the path loses little (the last report's fraction
/// lost at most INGEST_COPY_MAX_FRACTION) and the budget allows (a copy for every 20 video
/// packets sent, at most INGEST_COPY_BUDGET_MAX / 20 in a burst): a retransmission lost on a
/// path that loses 2 % is otherwise mended only when the receiver asks again, which aiortc does
/// only when it sees a new gap, so its picture stops for up to a second; two copies are both
/// lost with the square of the loss. Under heavier loss (congestion, a blackout's backlog) the
/// copies would add to what the link cannot carry, so each request gets one.
static inline GstPadProbeReturn ingest_rtx_request_probe(GstPad *pad, GstPadProbeInfo *info,
                                                         gpointer data) {
  GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
  const GstStructure *structure = event ? gst_event_get_structure(event) : NULL;
  if (structure == NULL || !gst_structure_has_name(structure, "GstRTPRetransmissionRequest") ||
      gst_structure_has_field(structure, "ingest-copy")) {
    return GST_PAD_PROBE_OK;
  }
  ingest_delivery *delivery = (ingest_delivery *)data;
  guint seqnum = 0, ssrc = 0;
  if (!gst_structure_get_uint(structure, "seqnum", &seqnum) ||
      !gst_structure_get_uint(structure, "ssrc", &ssrc)) {
    return GST_PAD_PROBE_OK;
  }
  gint64 now = g_get_monotonic_time();
  gboolean repeat = FALSE, copy = FALSE, refused = FALSE;
  g_mutex_lock(&delivery->lock);
  if (delivery->have_video && ssrc == delivery->video_ssrc) {
    guint64 ext = ingest_extend_seq(delivery->last_ext, (guint16)seqnum);
    ingest_seq_slot *slot = &delivery->seqs[ext % INGEST_SEQ_SLOTS];
    repeat = slot->ext == ext && ingest_delivery_is_repeat(delivery, slot, now);
    if (!repeat && slot->ext == ext) {
      if (delivery->rtx_budget < INGEST_RTX_COST) {
        refused = TRUE;
        delivery->rtx_refused++;
      } else {
        delivery->rtx_budget -= INGEST_RTX_COST;
      }
    }
    copy = !refused && !repeat && slot->ext == ext &&
           delivery->video_fraction <= INGEST_COPY_MAX_FRACTION &&
           delivery->copy_budget >= INGEST_COPY_COST;
    if (copy) {
      delivery->copy_budget -= INGEST_COPY_COST;
      delivery->rtx_copies++;
    }
  }
  g_mutex_unlock(&delivery->lock);
  if (repeat || refused) return GST_PAD_PROBE_DROP;
  if (copy) {
    // Marked, so that this probe lets it through as it is.
    GstEvent *second = gst_event_copy(event);
    gst_structure_set(gst_event_writable_structure(second), "ingest-copy", G_TYPE_BOOLEAN, TRUE,
                      NULL);
    gst_pad_send_event(pad, second);
  }
  return GST_PAD_PROBE_OK;
}

/// rtprtxsend's source pad, downstream: each retransmission (its original sequence number is
/// the payload's first two bytes, RFC 4588) marks that packet as sent again.
static inline gboolean ingest_rtx_sent_each(GstBuffer **buffer, guint index, gpointer data) {
  ingest_delivery *delivery = (ingest_delivery *)data;
  if (!GST_BUFFER_FLAG_IS_SET(*buffer, GST_RTP_BUFFER_FLAG_RETRANSMISSION)) return TRUE;
  GstRTPBuffer rtp = GST_RTP_BUFFER_INIT;
  if (!gst_rtp_buffer_map(*buffer, GST_MAP_READ, &rtp)) return TRUE;
  guint8 *payload = gst_rtp_buffer_get_payload(&rtp);
  guint length = gst_rtp_buffer_get_payload_len(&rtp);
  guint32 ssrc = gst_rtp_buffer_get_ssrc(&rtp);
  guint16 original = length >= 2 ? GST_READ_UINT16_BE(payload) : 0;
  gst_rtp_buffer_unmap(&rtp);
  if (length < 2) return TRUE;
  gint64 now = g_get_monotonic_time();
  g_mutex_lock(&delivery->lock);
  delivery->rtx_ssrc = ssrc;
  delivery->have_rtx_ssrc = TRUE;
  delivery->rtx_packets++;
  delivery->rtx_bytes += gst_buffer_get_size(*buffer);
  if (delivery->have_video) {
    guint64 ext = ingest_extend_seq(delivery->last_ext, original);
    ingest_seq_slot *slot = &delivery->seqs[ext % INGEST_SEQ_SLOTS];
    if (slot->ext == ext) slot->served_time = now;
  }
  g_mutex_unlock(&delivery->lock);
  return TRUE;
}

static inline GstPadProbeReturn ingest_rtx_sent_probe(GstPad *pad, GstPadProbeInfo *info,
                                                      gpointer data) {
  if (info->type & GST_PAD_PROBE_TYPE_BUFFER_LIST) {
    gst_buffer_list_foreach(GST_PAD_PROBE_INFO_BUFFER_LIST(info), ingest_rtx_sent_each, data);
  } else if (info->type & GST_PAD_PROBE_TYPE_BUFFER) {
    GstBuffer *buffer = GST_PAD_PROBE_INFO_BUFFER(info);
    ingest_rtx_sent_each(&buffer, 0, data);
  }
  return GST_PAD_PROBE_OK;
}

/// Whether loss is about but light, the condition of polls and covers: retransmission on, a
/// NACK or a report counting loss in the last INGEST_POLL_LOSS_WINDOW µs, the last report's
/// fraction lost at most INGEST_COPY_MAX_FRACTION. Called with the lock held.
static inline gboolean ingest_delivery_loss_light(ingest_delivery *delivery, gint64 now) {
  return delivery->rtx_active && delivery->loss_seen != 0 &&
         now - delivery->loss_seen < INGEST_POLL_LOSS_WINDOW && delivery->video_fraction >= 0 &&
         delivery->video_fraction <= INGEST_COPY_MAX_FRACTION;
}

/// Whether a poll is due (see INGEST_POLL_PACKETS); counted as made when it is. Called with the
/// lock held.
static inline gboolean ingest_delivery_poll_due(ingest_delivery *delivery, gint64 now) {
  gboolean due = ingest_delivery_loss_light(delivery, now) &&
                 (delivery->since_request >= INGEST_POLL_PACKETS ||
                  (delivery->since_request >= INGEST_POLL_MIN_PACKETS &&
                   now - delivery->request_time >=
                       CLAMP(delivery->round_trip + 50000, 100000, INGEST_POLL_INTERVAL)));
  if (due) {
    delivery->since_request = 0;
    delivery->request_time = now;
    delivery->polls++;
  }
  return due;
}

/// Whether the keyframe starting now is covered (see INGEST_COVER_MARGIN). Called with the
/// lock held.
static inline gboolean ingest_delivery_cover_due(ingest_delivery *delivery, gint64 now) {
  return ingest_delivery_loss_light(delivery, now) && delivery->round_trip > 0 &&
         (delivery->key_requested == 0 ||
          now - delivery->key_requested >= INGEST_COVER_AFTER_REQUEST);
}

/// The packets before `first` (extended) that cover a keyframe starting there: sent, asked for
/// or sent again within the last round trip and INGEST_COVER_MARGIN, newest first, into `seqs`
/// (INGEST_COVER_MAX). Called with the lock held.
static inline guint ingest_delivery_cover(ingest_delivery *delivery, guint64 first, gint64 now,
                                          guint16 *seqs) {
  gint64 since = now - delivery->round_trip - INGEST_COVER_MARGIN;
  guint count = 0;
  for (guint64 ext = first - 1; ext > 0 && first - ext <= INGEST_COVER_SCAN &&
                                count < INGEST_COVER_MAX; ext--) {
    ingest_seq_slot *slot = &delivery->seqs[ext % INGEST_SEQ_SLOTS];
    if (slot->ext != ext) break;
    ingest_frame_slot *frame = &delivery->frame_slots[slot->frame % INGEST_FRAME_SLOTS];
    gboolean recent = frame->number == slot->frame && frame->sent_time >= since;
    if (!recent && slot->nack_time < since && slot->served_time < since) continue;
    if (slot->nack_time == 0 && slot->served_time == 0) slot->covered = TRUE;
    seqs[count++] = (guint16)ext;
  }
  return count;
}

/// rtprtxsend's source pad (after its history, which must stay in order: it finds a packet by
/// a binary search), for video packets as they leave one by one:
///
/// - a poll: when one is due, a packet that is not its frame's last is held back and goes out
///   right after the next one. The held packet counts as just sent again: the request the
///   poll provokes for it (made before it arrived) is a repeat, not answered with a
///   retransmission that aiortc, once 100 packets past it, would take for a new stream.
/// - a keyframe covered (INGEST_COVER_MARGIN): at its first packet, rtprtxsend is asked to
///   send the packets before it again, as a receiver's request asks.
static inline GstPadProbeReturn ingest_order_probe(GstPad *pad, GstPadProbeInfo *info,
                                                   gpointer data) {
  ingest_delivery *delivery = (ingest_delivery *)data;
  if (!(info->type & GST_PAD_PROBE_TYPE_BUFFER)) return GST_PAD_PROBE_OK;
  GstBuffer *buffer = GST_PAD_PROBE_INFO_BUFFER(info);
  GstRTPBuffer rtp = GST_RTP_BUFFER_INIT;
  if (!gst_rtp_buffer_map(buffer, GST_MAP_READ, &rtp)) return GST_PAD_PROBE_OK;
  guint32 ssrc = gst_rtp_buffer_get_ssrc(&rtp);
  guint16 seq = gst_rtp_buffer_get_seq(&rtp);
  guint32 time = gst_rtp_buffer_get_timestamp(&rtp);
  gboolean last_of_frame = gst_rtp_buffer_get_marker(&rtp);
  gboolean key = ingest_payload_is_key(gst_rtp_buffer_get_payload(&rtp),
                                       gst_rtp_buffer_get_payload_len(&rtp), delivery->hevc);
  gst_rtp_buffer_unmap(&rtp);
  gint64 now = g_get_monotonic_time();
  guint16 cover[INGEST_COVER_MAX];
  guint covered = 0;
  GstBuffer *held = NULL;
  gboolean hold = FALSE;
  g_mutex_lock(&delivery->lock);
  // Media packets only (retransmissions leave with their own SSRC, from rtprtxsend's thread);
  // the two pushed below come through here again, and pass.
  if (delivery->have_video && ssrc == delivery->video_ssrc && !delivery->pushing) {
    guint64 ext = ingest_extend_seq(delivery->last_ext, seq);
    if (key && (!delivery->have_key_time || time != delivery->key_time)) {
      delivery->have_key_time = TRUE;
      delivery->key_time = time;
      if (ingest_delivery_cover_due(delivery, now)) {
        covered = ingest_delivery_cover(delivery, ext, now, cover);
        delivery->keyframes_covered++;
        delivery->cover_packets += covered;
      }
    }
    if (delivery->poll_held != NULL) {
      held = delivery->poll_held;
      delivery->poll_held = NULL;
      delivery->pushing = TRUE;
    } else if (!last_of_frame && ingest_delivery_poll_due(delivery, now)) {
      delivery->poll_held = gst_buffer_ref(buffer);
      ingest_seq_slot *slot = &delivery->seqs[ext % INGEST_SEQ_SLOTS];
      if (slot->ext == ext) slot->served_time = now;
      hold = TRUE;
    }
  }
  g_mutex_unlock(&delivery->lock);
  // Marked as copies, so that the request probe lets them through as they are.
  for (guint i = 0; i < covered; i++) {
    GstStructure *request = gst_structure_new(
        "GstRTPRetransmissionRequest", "seqnum", G_TYPE_UINT, (guint)cover[i], "ssrc",
        G_TYPE_UINT, ssrc, "ingest-copy", G_TYPE_BOOLEAN, TRUE, NULL);
    gst_pad_send_event(pad, gst_event_new_custom(GST_EVENT_CUSTOM_UPSTREAM, request));
  }
  if (held != NULL) {
    // This packet first, then the one held back.
    gst_pad_push(pad, gst_buffer_ref(buffer));
    gst_pad_push(pad, held);
    g_mutex_lock(&delivery->lock);
    delivery->pushing = FALSE;
    g_mutex_unlock(&delivery->lock);
    return GST_PAD_PROBE_DROP;
  }
  return hold ? GST_PAD_PROBE_DROP : GST_PAD_PROBE_OK;
}

/// Bounds the history of an rtprtxsend webrtcbin made (it sets 500 packets and no time
/// bound) and watches what it is asked for and sends.
static inline void ingest_delivery_take_rtxsend(ingest_delivery *delivery, GstElement *rtx) {
  g_object_set(rtx, "max-size-packets", delivery->history_packets, "max-size-time",
               delivery->history_ms, NULL);
  GstPad *src = gst_element_get_static_pad(rtx, "src");
  if (src != NULL) {
    gst_pad_add_probe(src, GST_PAD_PROBE_TYPE_EVENT_UPSTREAM, ingest_rtx_request_probe, delivery,
                      NULL);
    gst_pad_add_probe(src, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST,
                      ingest_rtx_sent_probe, delivery, NULL);
    gst_pad_add_probe(src, GST_PAD_PROBE_TYPE_BUFFER, ingest_order_probe, delivery, NULL);
    gst_object_unref(src);
  }
  g_mutex_lock(&delivery->lock);
  delivery->rtx_active = TRUE;
  g_mutex_unlock(&delivery->lock);
}

/// Whether the packet in `slot` was asked for and never sent again (`grace` µs after the
/// request: the retransmission leaves from rtprtxsend's own thread).
static inline gboolean ingest_slot_unserved(const ingest_seq_slot *slot, gint64 now, gint64 grace) {
  return slot->nack_time != 0 && slot->nack_time > slot->served_time &&
         now - slot->nack_time >= grace;
}

/// Places the packets the receiver reported lost but never asked for (a receiver asks for what
/// it misses, but not for a long gap: aiortc for the last 128 packets, Chromium not past 1000,
/// and a NACK can be lost too). Between two reports, the lost count grew by more than the
/// packets asked for: that many packets not asked for are marked lost, just before the first
/// one asked for in that span (the tail of a gap is what gets asked for), or from its start.
/// Reports are taken once `wait` µs old, so that the NACKs sent beside them have come.
static inline void ingest_delivery_place_losses(ingest_delivery *delivery, gint64 now, gint64 wait) {
  while (delivery->report_count > 0) {
    ingest_report_slot *report = &delivery->reports[delivery->report_head];
    if (now - report->time < wait) break;
    delivery->report_head = (delivery->report_head + 1) % INGEST_REPORT_SLOTS;
    delivery->report_count--;
    if (!delivery->have_placed) {
      // The first report: what it says lost so far has no span to be placed in; from the start.
      delivery->have_placed = TRUE;
      delivery->placed_ext = delivery->frame_slots[1 % INGEST_FRAME_SLOTS].number == 1
                                 ? delivery->frame_slots[1 % INGEST_FRAME_SLOTS].first_ext - 1
                                 : report->highest_ext;
      delivery->placed_lost = 0;
    }
    if (report->highest_ext <= delivery->placed_ext) continue;
    guint64 low = delivery->placed_ext + 1, high = report->highest_ext;
    if (high - low >= INGEST_SEQ_SLOTS) low = high - INGEST_SEQ_SLOTS + 1;
    gint64 grown = report->lost - delivery->placed_lost;
    gint64 asked = 0;
    guint64 first_asked = 0;
    for (guint64 ext = low; ext <= high; ext++) {
      ingest_seq_slot *slot = &delivery->seqs[ext % INGEST_SEQ_SLOTS];
      if (slot->ext == ext && slot->nack_time != 0) {
        asked++;
        if (first_asked == 0) first_asked = ext;
      }
    }
    gint64 unasked = grown - asked;
    if (first_asked != 0) {
      for (guint64 ext = first_asked; unasked > 0 && ext > low; ext--) {
        ingest_seq_slot *slot = &delivery->seqs[(ext - 1) % INGEST_SEQ_SLOTS];
        if (slot->ext != ext - 1 || slot->nack_time != 0 || slot->presumed_lost) continue;
        slot->presumed_lost = TRUE;
        delivery->presumed_lost++;
        unasked--;
      }
    }
    for (guint64 ext = low; unasked > 0 && ext <= high; ext++) {
      ingest_seq_slot *slot = &delivery->seqs[ext % INGEST_SEQ_SLOTS];
      if (slot->ext != ext || slot->nack_time != 0 || slot->presumed_lost) continue;
      slot->presumed_lost = TRUE;
      delivery->presumed_lost++;
      unasked--;
    }
    delivery->placed_ext = high;
    delivery->placed_lost = report->lost;
  }
}

/// Decides the frames whose packets the receiver's reports cover and that are `settle` µs old
/// (every frame when `all`): delivered when each packet arrived or was sent again after its
/// last request, and the frames it depends on were delivered (back to its keyframe).
static inline void ingest_delivery_decide(ingest_delivery *delivery, gint64 now, gint64 settle,
                                          gboolean all) {
  while (delivery->next_final <= delivery->frames) {
    ingest_frame_slot *frame = &delivery->frame_slots[delivery->next_final % INGEST_FRAME_SLOTS];
    if (frame->number != delivery->next_final) {
      delivery->next_final++;
      continue;
    }
    gboolean confirmed = delivery->have_placed && frame->last_ext <= delivery->placed_ext;
    if (!all && (!confirmed || now - frame->sent_time < settle)) break;
    gboolean whole = confirmed;
    for (guint64 ext = frame->first_ext; whole && ext <= frame->last_ext; ext++) {
      ingest_seq_slot *slot = &delivery->seqs[ext % INGEST_SEQ_SLOTS];
      if (slot->ext != ext) continue;
      if (slot->presumed_lost || ingest_slot_unserved(slot, now, all ? 0 : 100000)) whole = FALSE;
    }
    if (frame->keyframe) delivery->broken = FALSE;
    if (!whole) delivery->broken = TRUE;
    if (delivery->broken) {
      delivery->lost++;
      if (!confirmed) delivery->unconfirmed++;
    } else {
      delivery->delivered++;
    }
    delivery->next_final++;
  }
}

/// The figures now; frames older than `settle_ms` are decided (all of them when `final`).
static inline void ingest_delivery_collect(ingest_delivery *delivery, guint settle_ms,
                                           gboolean final, ingest_delivery_figures *out) {
  gint64 now = g_get_monotonic_time();
  g_mutex_lock(&delivery->lock);
  // Requests not answered by a retransmission (100 ms on, and once each).
  gint64 until = now - 100000;
  if (delivery->have_video) {
    guint64 low = delivery->last_ext >= INGEST_SEQ_SLOTS ? delivery->last_ext - INGEST_SEQ_SLOTS + 1 : 0;
    for (guint64 ext = low; ext <= delivery->last_ext; ext++) {
      ingest_seq_slot *slot = &delivery->seqs[ext % INGEST_SEQ_SLOTS];
      if (slot->ext != ext || slot->nack_time == 0) continue;
      if (slot->nack_time > delivery->unserved_checked && slot->nack_time <= until &&
          slot->nack_time > slot->served_time) {
        delivery->nack_unserved++;
        delivery->new_unserved++;
      }
    }
  }
  delivery->unserved_checked = until;
  ingest_delivery_place_losses(delivery, now, final ? 0 : 300000);
  ingest_delivery_decide(delivery, now, (gint64)settle_ms * 1000, final);
  memset(out, 0, sizeof(*out));
  out->video_packets = delivery->packets;
  out->video_bytes = delivery->video_bytes;
  out->audio_bytes = delivery->audio_bytes;
  out->video_fraction_lost = delivery->video_fraction < 0 ? -1 : delivery->video_fraction / 256.0;
  out->audio_fraction_lost = delivery->audio_fraction < 0 ? -1 : delivery->audio_fraction / 256.0;
  out->video_frames = delivery->frames;
  out->frames_delivered = delivery->delivered;
  out->frames_lost = delivery->lost;
  out->frames_unconfirmed = delivery->unconfirmed;
  out->audio_packets = delivery->audio_packets;
  if (delivery->have_audio_report && delivery->audio_highest_ext >= delivery->audio_first_ext) {
    gint64 received = (gint64)(delivery->audio_highest_ext - delivery->audio_first_ext + 1) -
                      delivery->audio_lost_reported;
    out->audio_received = received > 0 ? (guint64)received : 0;
  }
  out->nack_requests = delivery->nack_requests;
  out->nack_repeats = delivery->nack_repeats;
  out->nack_unserved = delivery->nack_unserved;
  out->rtx_packets = delivery->rtx_packets;
  out->rtx_bytes = delivery->rtx_bytes;
  out->rtx_copies = delivery->rtx_copies;
  out->polls = delivery->polls;
  out->keyframes_covered = delivery->keyframes_covered;
  out->cover_packets = delivery->cover_packets;
  out->rtx_refused = delivery->rtx_refused;
  out->video_lost_reported = delivery->video_lost_reported;
  out->audio_lost_reported = delivery->audio_lost_reported;
  out->rtx_lost_reported = delivery->rtx_lost_reported;
  out->have_video_report = delivery->have_video_report;
  out->rtx_active = delivery->rtx_active;
  out->new_unserved = delivery->new_unserved;
  out->presumed_lost = delivery->presumed_lost;
  delivery->new_unserved = 0;
  ingest_delivery_twcc_figures(delivery, now, out);
  if (delivery->have_video) {
    out->unconfirmed_packets =
        delivery->have_video_report && delivery->video_highest_ext <= delivery->last_ext
            ? delivery->last_ext - delivery->video_highest_ext
            : delivery->packets;
    // What rtprtxsend holds: the newest packets, within its packet count and time span.
    if (delivery->rtx_active) {
      guint32 newest = delivery->last_rtp_time;
      guint64 span = (guint64)delivery->history_ms * 90;
      for (guint64 i = 0; i < delivery->history_packets && i < INGEST_SEQ_SLOTS &&
                          i <= delivery->last_ext; i++) {
        ingest_seq_slot *slot = &delivery->seqs[(delivery->last_ext - i) % INGEST_SEQ_SLOTS];
        if (slot->ext != delivery->last_ext - i) break;
        if (delivery->history_ms != 0 && (guint32)(newest - slot->rtp_time) > span) break;
        out->history_bytes += slot->size;
        out->history_packets++;
      }
    }
  }
  g_mutex_unlock(&delivery->lock);
}

/// Whether the receiver's reports cover every video packet sent so far.
static inline gboolean ingest_delivery_confirmed(ingest_delivery *delivery) {
  g_mutex_lock(&delivery->lock);
  gboolean done = !delivery->have_video ||
                  (delivery->have_video_report && delivery->video_highest_ext >= delivery->last_ext);
  g_mutex_unlock(&delivery->lock);
  return done;
}

#endif
