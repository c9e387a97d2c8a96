#include "transport_cc.h"

int ingest_twcc_parse(const uint8_t *fci, size_t length, ingest_twcc_header *header,
                      ingest_twcc_packet *packets, size_t capacity) {
  if (fci == NULL || length < 8) return -1;
  ingest_twcc_header head;
  head.base_sequence = (uint16_t)((fci[0] << 8) | fci[1]);
  head.status_count = (uint16_t)((fci[2] << 8) | fci[3]);
  int32_t reference = (int32_t)(((uint32_t)fci[4] << 16) | ((uint32_t)fci[5] << 8) | fci[6]);
  if (reference & 0x800000) reference -= 0x1000000;  // 24 bits, signed
  head.reference_us = (int64_t)reference * 64000;
  head.feedback_count = fci[7];
  if (header != NULL) *header = head;
  size_t count = head.status_count;
  if (count > capacity) return -1;
  // The packet chunks: a status for each packet, in sequence order.
  size_t offset = 8, filled = 0;
  while (filled < count) {
    if (offset + 2 > length) return -1;
    uint16_t chunk = (uint16_t)((fci[offset] << 8) | fci[offset + 1]);
    offset += 2;
    if ((chunk & 0x8000) == 0) {
      // Run length: one status (2 bits) for the next `run` packets (13 bits).
      uint8_t status = (chunk >> 13) & 3;
      size_t run = chunk & 0x1fff;
      if (status == 3) return -1;
      for (size_t i = 0; i < run && filled < count; i++) packets[filled++].status = status;
    } else if ((chunk & 0x4000) == 0) {
      // Status vector of 14 one-bit symbols: received with a small delta, or not.
      for (int bit = 13; bit >= 0 && filled < count; bit--) {
        packets[filled++].status = (chunk >> bit) & 1;
      }
    } else {
      // Status vector of 7 two-bit symbols.
      for (int shift = 12; shift >= 0 && filled < count; shift -= 2) {
        uint8_t status = (chunk >> shift) & 3;
        if (status == 3) return -1;
        packets[filled++].status = status;
      }
    }
  }
  // The receive deltas, one for each packet received, in units of 250 µs: each from the
  // previous packet received (the first from the reference time).
  int64_t arrival = head.reference_us;
  for (size_t i = 0; i < count; i++) {
    packets[i].sequence = (uint16_t)(head.base_sequence + i);
    packets[i].arrival_us = 0;
    if (packets[i].status == INGEST_TWCC_SMALL_DELTA) {
      if (offset + 1 > length) return -1;
      arrival += (int64_t)fci[offset] * 250;
      offset += 1;
    } else if (packets[i].status == INGEST_TWCC_LARGE_DELTA) {
      if (offset + 2 > length) return -1;
      arrival += (int64_t)(int16_t)((fci[offset] << 8) | fci[offset + 1]) * 250;
      offset += 2;
    } else {
      continue;
    }
    packets[i].arrival_us = arrival;
  }
  return (int)count;
}
