#ifndef CCHECKSUM_H
#define CCHECKSUM_H

#include <stddef.h>
#include <stdint.h>

/// Whether this CPU has carry-less multiplication (x86-64 PCLMULQDQ with SSSE3) and
/// `cchecksum_crc32_mpeg2` folds with it.
int cchecksum_crc32_mpeg2_is_accelerated(void);

/// Continues a CRC-32/MPEG-2 (polynomial 0x04C11DB7, not reflected) over `count` bytes.
/// Start with 0xFFFFFFFF. Table lookups, sixteen bytes a step, where the CPU has no carry-less
/// multiply and for fewer than 64 bytes.
uint32_t cchecksum_crc32_mpeg2(uint32_t crc, const void *bytes, size_t count);

#endif
