#ifndef INGEST_TRANSPORT_CC_H
#define INGEST_TRANSPORT_CC_H
// Transport-wide congestion control feedback (draft-holmer-rmcat-transport-wide-cc-extensions-01,
// section 3.1: RTCP RTPFB, FMT 15), parsed. Plain C without GLib or GStreamer, so that the unit
// tests reach it; `ingest-whip` calls it from the RTCP thread (CGStreamer's delivery.h).

#include <stddef.h>
#include <stdint.h>

/// A packet's status in a feedback: not received, received with a one-byte (small) or a
/// two-byte (large or negative) arrival delta.
enum {
  INGEST_TWCC_NOT_RECEIVED = 0,
  INGEST_TWCC_SMALL_DELTA = 1,
  INGEST_TWCC_LARGE_DELTA = 2,
};

/// One packet a feedback reports on.
typedef struct {
  /// Its transport-wide sequence number.
  uint16_t sequence;
  /// INGEST_TWCC_NOT_RECEIVED, _SMALL_DELTA or _LARGE_DELTA.
  uint8_t status;
  /// When it arrived, on the receiver's clock in microseconds (the reference time plus the
  /// deltas so far); 0 when not received.
  int64_t arrival_us;
} ingest_twcc_packet;

/// The feedback's header fields.
typedef struct {
  uint16_t base_sequence;
  uint16_t status_count;
  /// The reference time, in microseconds (the field counts 64 ms units, 24 bits signed).
  int64_t reference_us;
  /// The feedback packet count (8 bits, wraps): a gap says a feedback was lost.
  uint8_t feedback_count;
} ingest_twcc_header;

/// Parses one feedback's FCI (the bytes after the media source SSRC) into `packets` (room for
/// `capacity`), in sequence order. Returns how many packets it reports on, or -1 when the FCI
/// is malformed (too short for its chunks or deltas, a reserved status) or reports on more
/// than `capacity`.
int ingest_twcc_parse(const uint8_t *fci, size_t length, ingest_twcc_header *header,
                      ingest_twcc_packet *packets, size_t capacity);

#endif
