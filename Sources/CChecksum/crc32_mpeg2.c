// CRC-32/MPEG-2 by carry-less multiplication ("folding"), as described in Intel's "Fast CRC
// Computation for Generic Polynomials Using PCLMULQDQ Instruction" (2009), for a CRC that is
// not reflected: every 16 bytes, loaded most significant byte first, are a polynomial of degree
// below 128, and a 128-bit remainder X moves over the next block as
// X * x^128 = X_hi * (x^192 mod P) + X_lo * (x^128 mod P), both products below degree 96.
// Four remainders fold in parallel, 64 bytes apart, to hide the multiply's latency. At the end
// the 128-bit remainder goes through the tables as sixteen message bytes, which multiplies
// it by x^32 and reduces it mod P: the running CRC.

#include "CChecksum.h"

// table[k][b]: the CRC of byte b followed by k zero bytes ("slicing-by-16"), for the bytes
// the folding leaves (its 128-bit remainder and a tail under 16 bytes) and inputs under 64.
static uint32_t table[16][256];
// Set once, before main, with the tables: read-only afterwards, from any thread.
static int accelerated;

static int cpu_can_fold(void);

__attribute__((constructor)) static void set_up(void) {
  accelerated = cpu_can_fold();
  for (uint32_t index = 0; index < 256; index++) {
    uint32_t crc = index << 24;
    for (int bit = 0; bit < 8; bit++) crc = (crc & 0x80000000u) ? (crc << 1) ^ 0x04C11DB7u : crc << 1;
    table[0][index] = crc;
  }
  for (int slice = 1; slice < 16; slice++) {
    for (int index = 0; index < 256; index++) {
      uint32_t previous = table[slice - 1][index];
      table[slice][index] = (previous << 8) ^ table[0][previous >> 24];
    }
  }
}

static uint32_t by_bytes(uint32_t crc, const uint8_t *bytes, size_t count) {
  size_t i = 0;
  for (; i + 16 <= count; i += 16) {
    const uint8_t *b = bytes + i;
    crc = table[15][b[0] ^ (crc >> 24)] ^ table[14][b[1] ^ (uint8_t)(crc >> 16)] ^
          table[13][b[2] ^ (uint8_t)(crc >> 8)] ^ table[12][b[3] ^ (uint8_t)crc] ^
          table[11][b[4]] ^ table[10][b[5]] ^ table[9][b[6]] ^ table[8][b[7]] ^
          table[7][b[8]] ^ table[6][b[9]] ^ table[5][b[10]] ^ table[4][b[11]] ^
          table[3][b[12]] ^ table[2][b[13]] ^ table[1][b[14]] ^ table[0][b[15]];
  }
  for (; i < count; i++) crc = (crc << 8) ^ table[0][(uint8_t)(crc >> 24) ^ bytes[i]];
  return crc;
}

#if defined(__x86_64__)
#include <immintrin.h>

#define FOLDING __attribute__((target("pclmul,ssse3")))

// x^n mod P for the fold distances: {x^n, x^(n+64)}, low lane multiplies X_lo, high lane X_hi.
#define DISTANCE(low, high) _mm_set_epi64x((long long)(high), (long long)(low))

FOLDING static inline __m128i load(const uint8_t *at, __m128i reverse) {
  return _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)at), reverse);
}

FOLDING static inline __m128i fold(__m128i x, __m128i distance) {
  return _mm_xor_si128(
      _mm_clmulepi64_si128(x, distance, 0x00), _mm_clmulepi64_si128(x, distance, 0x11));
}

FOLDING static uint32_t by_folding(uint32_t crc, const uint8_t *bytes, size_t count) {
  const __m128i reverse = _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m128i by128 = DISTANCE(0xE8A45605u, 0xC5B9CD4Cu);
  const __m128i by256 = DISTANCE(0x75BE46B7u, 0x569700E5u);
  const __m128i by384 = DISTANCE(0x8C3828A8u, 0x64BF7A9Bu);
  const __m128i by512 = DISTANCE(0xE6228B11u, 0x8833794Cu);
  // The running CRC enters as the first 32 bits of the message.
  __m128i x0 = _mm_xor_si128(load(bytes, reverse), _mm_set_epi32((int)crc, 0, 0, 0));
  __m128i x1 = load(bytes + 16, reverse);
  __m128i x2 = load(bytes + 32, reverse);
  __m128i x3 = load(bytes + 48, reverse);
  size_t offset = 64;
  for (; offset + 64 <= count; offset += 64) {
    x0 = _mm_xor_si128(fold(x0, by512), load(bytes + offset, reverse));
    x1 = _mm_xor_si128(fold(x1, by512), load(bytes + offset + 16, reverse));
    x2 = _mm_xor_si128(fold(x2, by512), load(bytes + offset + 32, reverse));
    x3 = _mm_xor_si128(fold(x3, by512), load(bytes + offset + 48, reverse));
  }
  __m128i x = _mm_xor_si128(
      _mm_xor_si128(fold(x0, by384), fold(x1, by256)), _mm_xor_si128(fold(x2, by128), x3));
  for (; offset + 16 <= count; offset += 16) {
    x = _mm_xor_si128(fold(x, by128), load(bytes + offset, reverse));
  }
  uint8_t remainder[16];
  _mm_storeu_si128((__m128i *)remainder, _mm_shuffle_epi8(x, reverse));
  return by_bytes(by_bytes(0, remainder, 16), bytes + offset, count - offset);
}

static int cpu_can_fold(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("ssse3");
}

uint32_t cchecksum_crc32_mpeg2(uint32_t crc, const void *bytes, size_t count) {
  if (count >= 64 && accelerated) return by_folding(crc, bytes, count);
  return by_bytes(crc, bytes, count);
}

#else

static int cpu_can_fold(void) { return 0; }

uint32_t cchecksum_crc32_mpeg2(uint32_t crc, const void *bytes, size_t count) {
  return by_bytes(crc, bytes, count);
}

#endif

int cchecksum_crc32_mpeg2_is_accelerated(void) { return accelerated; }
