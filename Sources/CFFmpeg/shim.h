#ifndef INGEST_CFFMPEG_SHIM_H
#define INGEST_CFFMPEG_SHIM_H
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/error.h>
#include <libavutil/dict.h>
#include <libavutil/mem.h>

/// AVERROR_EOF and AVERROR(e) are macros Swift cannot import.
static inline int cffmpeg_averror_eof(void) { return AVERROR_EOF; }
static inline int cffmpeg_averror(int e) { return AVERROR(e); }
static inline int cffmpeg_averror_exit(void) { return AVERROR_EXIT; }
#endif
