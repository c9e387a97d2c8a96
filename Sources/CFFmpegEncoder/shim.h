#ifndef INGEST_CFFMPEG_ENCODER_SHIM_H
#define INGEST_CFFMPEG_ENCODER_SHIM_H
// Linked, not dlopen'ed (unlike CFFmpeg): only the `ingest-encode` process uses this module, and
// that process stands outside the pipeline's memory budget, like VideoToolbox on a device.
#include <libavdevice/avdevice.h>
#include <libavfilter/avfilter.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libavutil/opt.h>
#include <libavutil/samplefmt.h>
#include <libavutil/pixdesc.h>

/// AVERROR(e), AVERROR_EOF and the flag macros are macros Swift cannot import.
static inline int cffenc_averror(int e) { return AVERROR(e); }
static inline int cffenc_averror_eof(void) { return AVERROR_EOF; }
static inline int cffenc_flag_global_header(void) { return AV_CODEC_FLAG_GLOBAL_HEADER; }
static inline int cffenc_pkt_flag_key(void) { return AV_PKT_FLAG_KEY; }
static inline int cffenc_buffersrc_keep_ref(void) { return AV_BUFFERSRC_FLAG_KEEP_REF; }
static inline int64_t cffenc_nopts(void) { return AV_NOPTS_VALUE; }
#endif
