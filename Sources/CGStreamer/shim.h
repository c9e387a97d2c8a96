#ifndef INGEST_CGSTREAMER_SHIM_H
#define INGEST_CGSTREAMER_SHIM_H
// webrtcbin's library is marked unstable API; the calls used here are the ones it has kept
// since 1.16.
#define GST_USE_UNSTABLE_API
#include <gst/gst.h>
#include <gst/app/gstappsrc.h>
#include <gst/rtp/gstrtcpbuffer.h>
#include <string.h>
#include <gst/sdp/sdp.h>
#include <gst/webrtc/webrtc.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include "delivery.h"

// GLib and GStreamer reach much of their API through macros (casts, type checks) and variadic
// functions (g_object_set, g_signal_emit_by_name, gst_structure_get), which Swift cannot call:
// one typed wrapper for each use, nothing more.

static inline void ingest_gst_unref(gpointer object) { gst_object_unref(object); }

static inline GstElement *ingest_gst_bin_child(GstElement *bin, const char *name) {
  return gst_bin_get_by_name(GST_BIN(bin), name);
}

static inline gulong ingest_g_signal_connect(gpointer instance, const char *signal,
                                             GCallback callback, gpointer data) {
  return g_signal_connect(instance, signal, callback, data);
}

static inline void ingest_g_set_string(gpointer object, const char *name, const char *value) {
  g_object_set(object, name, value, NULL);
}

static inline void ingest_g_set_uint(gpointer object, const char *name, guint value) {
  g_object_set(object, name, value, NULL);
}

static inline void ingest_g_set_caps(gpointer object, const char *name, GstCaps *caps) {
  g_object_set(object, name, caps, NULL);
}

static inline gint ingest_g_get_enum(gpointer object, const char *name) {
  gint value = -1;
  g_object_get(object, name, &value, NULL);
  return value;
}

static inline guint64 ingest_g_get_uint64(gpointer object, const char *name) {
  guint64 value = 0;
  g_object_get(object, name, &value, NULL);
  return value;
}

/// The element's running time now (clock time less base time), GST_CLOCK_TIME_NONE before it
/// has a clock.
static inline GstClockTime ingest_gst_running_time(GstElement *element) {
  GstClock *clock = gst_element_get_clock(element);
  if (clock == NULL) return GST_CLOCK_TIME_NONE;
  GstClockTime now = gst_clock_get_time(clock);
  gst_object_unref(clock);
  return now - gst_element_get_base_time(element);
}

/// A buffer holding a copy of `size` bytes, stamped with `pts` and `dts` (nanoseconds of
/// running time) and flagged as a delta unit unless `keyframe`.
static inline GstBuffer *ingest_gst_buffer(const void *data, gsize size, GstClockTime pts,
                                           GstClockTime dts, gboolean keyframe) {
  GstBuffer *buffer = gst_buffer_new_memdup(data, size);
  GST_BUFFER_PTS(buffer) = pts;
  GST_BUFFER_DTS(buffer) = dts;
  if (!keyframe) GST_BUFFER_FLAG_SET(buffer, GST_BUFFER_FLAG_DELTA_UNIT);
  return buffer;
}

typedef void (*ingest_keyframe_callback)(gpointer data);

typedef struct {
  ingest_keyframe_callback callback;
  gpointer data;
} ingest_keyframe_probe;

static inline GstPadProbeReturn ingest_keyframe_probe_function(GstPad *pad, GstPadProbeInfo *info,
                                                               gpointer data) {
  GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
  const GstStructure *structure = event ? gst_event_get_structure(event) : NULL;
  if (structure != NULL && gst_structure_has_name(structure, "GstForceKeyUnit")) {
    ingest_keyframe_probe *probe = (ingest_keyframe_probe *)data;
    probe->callback(probe->data);
  }
  return GST_PAD_PROBE_OK;
}

/// Calls `callback` for every upstream GstForceKeyUnit event that passes `pad` (what the RTP
/// session sends upstream when the receiver asks for a picture with PLI or FIR). The event goes
/// on unchanged.
static inline void ingest_gst_watch_keyframe_requests(GstPad *pad,
                                                      ingest_keyframe_callback callback,
                                                      gpointer data) {
  ingest_keyframe_probe *probe = g_new0(ingest_keyframe_probe, 1);
  probe->callback = callback;
  probe->data = data;
  gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_EVENT_UPSTREAM, ingest_keyframe_probe_function, probe,
                    g_free);
}

/// A fresh self-signed ECDSA (P-256) certificate and its key, as one PEM text (g_free it), for
/// DTLS; NULL when OpenSSL fails. webrtcbin's own is RSA, and WebRTC stacks that offer only
/// ECDSA cipher suites (aiortc, as browsers prefer) then find no shared cipher. `fingerprint`
/// (at least 96 bytes) receives the certificate's SHA-256 as SDP writes it (`AB:CD:...`).
static inline gchar *ingest_dtls_ecdsa_pem(char *fingerprint) {
  EVP_PKEY *key = EVP_EC_gen("P-256");
  X509 *certificate = X509_new();
  BIO *bio = BIO_new(BIO_s_mem());
  gchar *pem = NULL;
  if (key != NULL && certificate != NULL && bio != NULL) {
    X509_set_version(certificate, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(certificate), (long)g_random_int_range(1, G_MAXINT32));
    X509_gmtime_adj(X509_getm_notBefore(certificate), -86400);
    X509_gmtime_adj(X509_getm_notAfter(certificate), 30L * 86400);
    X509_set_pubkey(certificate, key);
    X509_NAME *name = X509_get_subject_name(certificate);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)"ingest-whip", -1,
                               -1, 0);
    X509_set_issuer_name(certificate, name);
    if (X509_sign(certificate, key, EVP_sha256()) > 0 && PEM_write_bio_X509(bio, certificate) &&
        PEM_write_bio_PrivateKey(bio, key, NULL, NULL, 0, NULL, NULL)) {
      char *data = NULL;
      long length = BIO_get_mem_data(bio, &data);
      if (length > 0) pem = g_strndup(data, (gsize)length);
      unsigned char digest[EVP_MAX_MD_SIZE];
      unsigned int size = 0;
      fingerprint[0] = 0;
      if (X509_digest(certificate, EVP_sha256(), digest, &size) && size == 32) {
        for (unsigned int i = 0; i < size; i++) {
          g_snprintf(fingerprint + i * 3, 4, i + 1 < size ? "%02X:" : "%02X", digest[i]);
        }
      }
    }
  }
  if (bio) BIO_free(bio);
  if (certificate) X509_free(certificate);
  if (key) EVP_PKEY_free(key);
  return pem;
}

/// The last receiver estimated maximum bitrate (REMB) the receiver sent, in bits per second
/// (0 before any), updated from RTCP's streaming thread.
typedef struct {
  guint64 bits_per_second;
  guint64 count;
  /// When the last RTCP packet came from the receiver (g_get_monotonic_time, µs; 0: none).
  gint64 last_rtcp;
  /// Where its reports and NACKs are read (`delivery.h`), or NULL.
  ingest_delivery *delivery;
} ingest_remb;

static inline void ingest_rtcp_received(GObject *session, GstBuffer *buffer, gpointer data) {
  ingest_remb *remb = (ingest_remb *)data;
  __atomic_store_n(&remb->last_rtcp, g_get_monotonic_time(), __ATOMIC_RELAXED);
  if (remb->delivery != NULL) ingest_delivery_rtcp(remb->delivery, buffer);
}

/// Microseconds since the receiver's last RTCP packet (a report, a NACK, a PLI); -1 before any.
static inline gint64 ingest_rtcp_silence(ingest_remb *remb) {
  gint64 last = __atomic_load_n(&remb->last_rtcp, __ATOMIC_RELAXED);
  return last == 0 ? -1 : g_get_monotonic_time() - last;
}

static inline void ingest_remb_feedback(GObject *session, guint type, guint fbtype,
                                        guint sender_ssrc, guint media_ssrc, GstBuffer *fci,
                                        gpointer data) {
  // REMB is an application-layer feedback (PSFB, FMT 15) whose FCI starts with "REMB", then
  // the number of SSRCs (8 bits), the exponent (6 bits) and the mantissa (18 bits).
  if (type != GST_RTCP_TYPE_PSFB || fbtype != GST_RTCP_PSFB_TYPE_AFB || fci == NULL) return;
  GstMapInfo map;
  if (!gst_buffer_map(fci, &map, GST_MAP_READ)) return;
  if (map.size >= 8 && memcmp(map.data, "REMB", 4) == 0) {
    guint exponent = map.data[5] >> 2;
    guint64 mantissa = ((guint64)(map.data[5] & 3) << 16) | ((guint64)map.data[6] << 8) | map.data[7];
    ingest_remb *remb = (ingest_remb *)data;
    __atomic_store_n(&remb->bits_per_second, mantissa << exponent, __ATOMIC_RELAXED);
    __atomic_add_fetch(&remb->count, 1, __ATOMIC_RELAXED);
  }
  gst_buffer_unmap(fci, &map);
}

/// The last REMB's bit rate, 0 before any.
static inline guint64 ingest_remb_bits_per_second(ingest_remb *remb) {
  return __atomic_load_n(&remb->bits_per_second, __ATOMIC_RELAXED);
}

/// Listens for REMB, and for any RTCP at all (read into `delivery` when given), on webrtcbin's
/// RTP session (one session: bundled); NULL when the session is not there. The result lives as
/// long as the process.
static inline ingest_remb *ingest_webrtc_watch_remb(GstElement *webrtc, ingest_delivery *delivery) {
  GstElement *rtpbin = gst_bin_get_by_name(GST_BIN(webrtc), "rtpbin");
  if (rtpbin == NULL) return NULL;
  GObject *session = NULL;
  g_signal_emit_by_name(rtpbin, "get-internal-session", 0, &session);
  gst_object_unref(rtpbin);
  if (session == NULL) return NULL;
  // Sender reports every half second or so rather than every 5 s: the round trip a receiver
  // report gives is measured on the last sender report, which crossed the bottleneck's queue
  // when it was sent; at 5 s a queue filling up shows there far too late to steer by.
  g_object_set(session, "rtcp-min-interval", (guint64)(500 * GST_MSECOND), NULL);
  ingest_remb *remb = g_new0(ingest_remb, 1);
  remb->delivery = delivery;
  g_signal_connect(session, "on-feedback-rtcp", G_CALLBACK(ingest_remb_feedback), remb);
  g_signal_connect(session, "on-receiving-rtcp", G_CALLBACK(ingest_rtcp_received), remb);
  g_object_unref(session);
  return remb;
}

/// Adds the header extension of `uri` with `id` to a payloader (rtpbasepayload's
/// `add-extension`): every packet it makes carries it, its caps name it (`extmap-ID`), so that
/// webrtcbin offers it. FALSE when no extension implements `uri`.
static inline gboolean ingest_gst_add_header_extension(GstElement *payloader, const char *uri,
                                                       guint id) {
  GstRTPHeaderExtension *extension = gst_rtp_header_extension_create_from_uri(uri);
  if (extension == NULL) return FALSE;
  gst_rtp_header_extension_set_id(extension, id);
  g_signal_emit_by_name(payloader, "add-extension", extension);
  gst_object_unref(extension);
  return TRUE;
}

/// Removes every header extension from a payloader (`clear-extensions`): its packets carry none
/// from then on.
static inline void ingest_gst_clear_header_extensions(GstElement *payloader) {
  g_signal_emit_by_name(payloader, "clear-extensions");
}

/// Makes every transceiver send-only: a WHIP client publishes and receives nothing.
static inline void ingest_webrtc_send_only(GstElement *webrtc) {
  GArray *transceivers = NULL;
  g_signal_emit_by_name(webrtc, "get-transceivers", &transceivers);
  if (transceivers == NULL) return;
  for (guint i = 0; i < transceivers->len; i++) {
    GstWebRTCRTPTransceiver *transceiver = g_array_index(transceivers, GstWebRTCRTPTransceiver *, i);
    g_object_set(transceiver, "direction", GST_WEBRTC_RTP_TRANSCEIVER_DIRECTION_SENDONLY, NULL);
  }
  g_array_unref(transceivers);
}

/// Asks webrtcbin for NACK and retransmission (RTX, RFC 4588) on the transceiver fed by the
/// element `payloader` (the video payloader): its offer then carries an `rtx` payload type for
/// the video one (`apt=`) and an RTX SSRC, and once an answer takes them, rtpbin gets an
/// rtprtxsend (see `ingest_webrtc_use_hooks`). FALSE when no sink pad of webrtcbin is fed by
/// it. (A transceiver's `kind` is only known once the offer is made.)
static inline gboolean ingest_webrtc_enable_retransmission(GstElement *webrtc,
                                                           GstElement *payloader) {
  gboolean found = FALSE;
  GstIterator *iterator = gst_element_iterate_sink_pads(webrtc);
  GValue value = G_VALUE_INIT;
  while (iterator != NULL && gst_iterator_next(iterator, &value) == GST_ITERATOR_OK) {
    GstPad *pad = GST_PAD(g_value_get_object(&value));
    GstPad *peer = gst_pad_get_peer(pad);
    if (peer != NULL) {
      GstElement *parent = gst_pad_get_parent_element(peer);
      if (parent == payloader) {
        GstWebRTCRTPTransceiver *transceiver = NULL;
        g_object_get(pad, "transceiver", &transceiver, NULL);
        if (transceiver != NULL) {
          g_object_set(transceiver, "do-nack", TRUE, NULL);
          gst_object_unref(transceiver);
          found = TRUE;
        }
      }
      if (parent != NULL) gst_object_unref(parent);
      gst_object_unref(peer);
    }
    g_value_reset(&value);
  }
  g_value_unset(&value);
  if (iterator != NULL) gst_iterator_free(iterator);
  return found;
}

typedef struct {
  gchar *pem;
  ingest_delivery *delivery;
} ingest_webrtc_hooks;

static inline void ingest_webrtc_hooks_free(gpointer data) {
  ingest_webrtc_hooks *hooks = (ingest_webrtc_hooks *)data;
  g_free(hooks->pem);
  g_free(hooks);
}

static inline gboolean ingest_dtls_element_added(GSignalInvocationHint *hint, guint count,
                                                 const GValue *values, gpointer data) {
  if (count < 2) return TRUE;
  ingest_webrtc_hooks *hooks = (ingest_webrtc_hooks *)data;
  GstElement *element = GST_ELEMENT(g_value_get_object(&values[1]));
  GstElementFactory *factory = element ? gst_element_get_factory(element) : NULL;
  if (factory != NULL && g_strcmp0(GST_OBJECT_NAME(factory), "dtlsdec") == 0) {
    g_object_set(element, "pem", (const gchar *)hooks->pem, NULL);
  }
  // webrtcbin's retransmission sender: added to its bin after webrtcbin set its 500 packets.
  if (factory != NULL && hooks->delivery != NULL &&
      g_strcmp0(GST_OBJECT_NAME(factory), "rtprtxsend") == 0) {
    ingest_delivery_take_rtxsend(hooks->delivery, element);
  }
  // The media is paced already (the pipeline process sends in real time): a nicesink that
  // waits for each buffer's running time plus the pipeline's latency (the audio encoder's,
  // the payloaders') only holds every packet back, by some 340 ms here.
  if (factory != NULL && g_strcmp0(GST_OBJECT_NAME(factory), "nicesink") == 0) {
    g_object_set(element, "sync", FALSE, NULL);
  }
  return TRUE;
}

/// Gives every DTLS decoder created from now on in this process the certificate `pem` (cert and
/// key, copied), makes every nicesink send at once, and bounds and watches every rtprtxsend
/// (`delivery`'s history, NULL: left alone). The certificate has to be set when dtlssrtpdec
/// adds its dtlsdec, before webrtcbin gives it a connection id: a certificate set later leaves
/// the connection on the one generated at creation, while the offer's fingerprint names the new
/// one. Hence an emission hook on every bin's element-added rather than a property of webrtcbin.
static inline void ingest_webrtc_use_hooks(const gchar *pem, ingest_delivery *delivery) {
  ingest_webrtc_hooks *hooks = g_new0(ingest_webrtc_hooks, 1);
  hooks->pem = g_strdup(pem);
  hooks->delivery = delivery;
  guint signal = g_signal_lookup("element-added", GST_TYPE_BIN);
  g_signal_add_emission_hook(signal, 0, ingest_dtls_element_added, hooks,
                             ingest_webrtc_hooks_free);
}

/// Creates an offer and waits for it; NULL when webrtcbin gave none.
static inline GstWebRTCSessionDescription *ingest_webrtc_create_offer(GstElement *webrtc) {
  GstPromise *promise = gst_promise_new();
  g_signal_emit_by_name(webrtc, "create-offer", NULL, promise);
  GstWebRTCSessionDescription *offer = NULL;
  if (gst_promise_wait(promise) == GST_PROMISE_RESULT_REPLIED) {
    const GstStructure *reply = gst_promise_get_reply(promise);
    if (reply != NULL && gst_structure_has_field(reply, "offer")) {
      gst_structure_get(reply, "offer", GST_TYPE_WEBRTC_SESSION_DESCRIPTION, &offer, NULL);
    }
  }
  gst_promise_unref(promise);
  return offer;
}

/// Applies a description ("set-local-description" or "set-remote-description") and waits for
/// webrtcbin to finish; the error's text (g_free it) when it failed, else NULL.
static inline gchar *ingest_webrtc_set_description(GstElement *webrtc, const char *signal,
                                                   GstWebRTCSessionDescription *description) {
  GstPromise *promise = gst_promise_new();
  g_signal_emit_by_name(webrtc, signal, description, promise);
  gchar *failure = NULL;
  if (gst_promise_wait(promise) != GST_PROMISE_RESULT_REPLIED) {
    failure = g_strdup("no reply");
  } else {
    const GstStructure *reply = gst_promise_get_reply(promise);
    GError *error = NULL;
    if (reply != NULL && gst_structure_has_field(reply, "error")) {
      gst_structure_get(reply, "error", G_TYPE_ERROR, &error, NULL);
      failure = g_strdup(error ? error->message : "failed");
      if (error) g_error_free(error);
    }
  }
  gst_promise_unref(promise);
  return failure;
}

/// Gives webrtcbin a remote ICE candidate (`candidate:...`) of media section `section`.
static inline void ingest_webrtc_add_candidate(GstElement *webrtc, guint section,
                                               const char *candidate) {
  g_signal_emit_by_name(webrtc, "add-ice-candidate", section, candidate);
}

/// The SDP text of webrtcbin's local description (g_free it), NULL when it has none.
static inline gchar *ingest_webrtc_local_sdp(GstElement *webrtc) {
  GstWebRTCSessionDescription *description = NULL;
  g_object_get(webrtc, "local-description", &description, NULL);
  if (description == NULL) return NULL;
  gchar *text = gst_sdp_message_as_text(description->sdp);
  gst_webrtc_session_description_free(description);
  return text;
}

/// A description of `type` from its SDP text, NULL when the text does not parse.
static inline GstWebRTCSessionDescription *ingest_webrtc_description(const char *text,
                                                                     GstWebRTCSDPType type) {
  GstSDPMessage *sdp = NULL;
  if (gst_sdp_message_new_from_text(text, &sdp) != GST_SDP_OK) return NULL;
  return gst_webrtc_session_description_new(type, sdp);
}

/// An answer from its SDP text, NULL when the text does not parse.
static inline GstWebRTCSessionDescription *ingest_webrtc_answer(const char *text) {
  return ingest_webrtc_description(text, GST_WEBRTC_SDP_TYPE_ANSWER);
}

/// An offer from its SDP text, NULL when the text does not parse.
static inline GstWebRTCSessionDescription *ingest_webrtc_offer(const char *text) {
  return ingest_webrtc_description(text, GST_WEBRTC_SDP_TYPE_OFFER);
}

/// The SDP text of a description (g_free it).
static inline gchar *ingest_webrtc_description_text(GstWebRTCSessionDescription *description) {
  return gst_sdp_message_as_text(description->sdp);
}

/// webrtcbin's statistics (a structure of structures, one per RTP stream, transport and codec),
/// a copy to free with gst_structure_free; NULL when it gave none.
static inline GstStructure *ingest_webrtc_stats(GstElement *webrtc) {
  GstPromise *promise = gst_promise_new();
  g_signal_emit_by_name(webrtc, "get-stats", NULL, promise);
  GstStructure *stats = NULL;
  if (gst_promise_wait(promise) == GST_PROMISE_RESULT_REPLIED) {
    const GstStructure *reply = gst_promise_get_reply(promise);
    if (reply != NULL) stats = gst_structure_copy(reply);
  }
  gst_promise_unref(promise);
  return stats;
}

static inline gboolean ingest_gst_value_is_structure(const GValue *value) {
  return GST_VALUE_HOLDS_STRUCTURE(value);
}

/// The statistics type of one entry ("outbound-rtp", "remote-inbound-rtp", ...), NULL if none.
static inline const char *ingest_webrtc_stats_type(const GstStructure *entry) {
  gint type = 0;
  if (!gst_structure_get_enum(entry, "type", GST_TYPE_WEBRTC_STATS_TYPE, &type)) return NULL;
  GEnumClass *class = g_type_class_ref(GST_TYPE_WEBRTC_STATS_TYPE);
  GEnumValue *value = g_enum_get_value(class, type);
  const char *nick = value ? value->value_nick : NULL;
  g_type_class_unref(class);
  return nick;
}

/// A numeric field of any integer or floating type as a double; FALSE when it is missing or
/// not a number.
static inline gboolean ingest_gst_structure_number(const GstStructure *structure,
                                                   const char *name, double *out) {
  const GValue *value = gst_structure_get_value(structure, name);
  if (value == NULL) return FALSE;
  GValue converted = G_VALUE_INIT;
  g_value_init(&converted, G_TYPE_DOUBLE);
  gboolean ok = g_value_type_transformable(G_VALUE_TYPE(value), G_TYPE_DOUBLE) &&
                g_value_transform(value, &converted);
  if (ok) *out = g_value_get_double(&converted);
  g_value_unset(&converted);
  return ok;
}

/// The text of an error or warning message (g_free it).
static inline gchar *ingest_gst_message_text(GstMessage *message) {
  GError *error = NULL;
  gchar *debug = NULL;
  if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR) {
    gst_message_parse_error(message, &error, &debug);
  } else {
    gst_message_parse_warning(message, &error, &debug);
  }
  gchar *text = g_strdup_printf("%s: %s", GST_OBJECT_NAME(GST_MESSAGE_SRC(message)),
                                error ? error->message : "unknown");
  if (error) g_error_free(error);
  g_free(debug);
  return text;
}

static inline GstMessageType ingest_gst_message_type(GstMessage *message) {
  return GST_MESSAGE_TYPE(message);
}

#endif
