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

#include <stdarg.h>
#include <stdio.h>

/// Receives each libav log line at error level or worse, already formatted (va_list cannot cross
/// into Swift on Linux). Defined in Swift with @_cdecl by IngestOutputs (RTMPLog.swift); a module
/// that calls cffmpeg_install_log_handler must link IngestOutputs.
void cffmpeg_ingest_log_line(int level, const char *line);

static inline void cffmpeg_log_callback(void *avcl, int level, const char *fmt, va_list args) {
  (void)avcl;
  if (level > AV_LOG_ERROR || fmt == NULL) return;
  char line[256];
  vsnprintf(line, sizeof line, fmt, args);
  cffmpeg_ingest_log_line(level, line);
}
/// Replaces libav's logger, which prints to stderr, with cffmpeg_ingest_log_line.
static inline void cffmpeg_install_log_handler(void) { av_log_set_callback(cffmpeg_log_callback); }
#endif
