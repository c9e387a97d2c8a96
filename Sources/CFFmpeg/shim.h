#ifndef INGEST_CFFMPEG_SHIM_H
#define INGEST_CFFMPEG_SHIM_H
// libavformat and its dependencies are loaded with dlopen on first use, not linked: linking them
// maps about 140 shared libraries and costs ~27 MB of resident memory in every run, while only
// `ingest capture` and RTMP output need them. Swift calls the cffmpeg_* wrappers below, which
// resolve each function once with dlsym. Call cffmpeg_load() first and fail cleanly when it is 0.
#include <dlfcn.h>
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/error.h>
#include <libavutil/dict.h>
#include <libavutil/mem.h>
#include <libavutil/mathematics.h>
#include <libavutil/channel_layout.h>
#include <stdarg.h>
#include <stdio.h>

#define CFFMPEG_STRING2(x) #x
#define CFFMPEG_STRING(x) CFFMPEG_STRING2(x)
/// The soname of the libavformat these headers describe (libavformat.so.59 for ffmpeg 5.1).
#define CFFMPEG_SONAME "libavformat.so." CFFMPEG_STRING(LIBAVFORMAT_VERSION_MAJOR)

static inline void *cffmpeg_handle(void) {
  static void *handle;
  void *loaded = __atomic_load_n(&handle, __ATOMIC_ACQUIRE);
  if (loaded == NULL) {
    loaded = dlopen(CFFMPEG_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (loaded != NULL) __atomic_store_n(&handle, loaded, __ATOMIC_RELEASE);
  }
  return loaded;
}

/// 1 when libavformat (with libavcodec and libavutil, its dependencies) is loaded.
static inline int cffmpeg_load(void) { return cffmpeg_handle() != NULL; }

/// The library name cffmpeg_load() looks for, for error messages.
static inline const char *cffmpeg_soname(void) { return CFFMPEG_SONAME; }

/// dlsym searches the loaded library and its dependencies, so libavutil symbols resolve too.
static inline void *cffmpeg_resolve(const char *name) {
  void *handle = cffmpeg_handle();
  return handle != NULL ? dlsym(handle, name) : NULL;
}

#define CFFMPEG_POINTER(ret, name, params)                                      \
  static ret (*function) params;                                               \
  ret (*resolved) params = __atomic_load_n(&function, __ATOMIC_ACQUIRE);       \
  if (resolved == NULL) {                                                      \
    resolved = (ret (*) params)cffmpeg_resolve(#name);                         \
    __atomic_store_n(&function, resolved, __ATOMIC_RELEASE);                   \
  }
#define CFFMPEG_LAZY(ret, name, params, args)                                   \
  static inline ret cffmpeg_##name params {                                    \
    CFFMPEG_POINTER(ret, name, params)                                         \
    return resolved args;                                                      \
  }
#define CFFMPEG_LAZY_VOID(name, params, args)                                   \
  static inline void cffmpeg_##name params {                                   \
    CFFMPEG_POINTER(void, name, params)                                        \
    resolved args;                                                             \
  }

CFFMPEG_LAZY(int, avformat_open_input,
             (AVFormatContext **context, const char *url, const AVInputFormat *format,
              AVDictionary **options),
             (context, url, format, options))
CFFMPEG_LAZY(int, avformat_find_stream_info, (AVFormatContext *context, AVDictionary **options),
             (context, options))
CFFMPEG_LAZY_VOID(avformat_close_input, (AVFormatContext **context), (context))
CFFMPEG_LAZY(int, avformat_alloc_output_context2,
             (AVFormatContext **context, const AVOutputFormat *format, const char *name,
              const char *filename),
             (context, format, name, filename))
CFFMPEG_LAZY(AVStream *, avformat_new_stream, (AVFormatContext *context, const AVCodec *codec),
             (context, codec))
CFFMPEG_LAZY_VOID(avformat_free_context, (AVFormatContext *context), (context))
CFFMPEG_LAZY(int, avformat_write_header, (AVFormatContext *context, AVDictionary **options),
             (context, options))
CFFMPEG_LAZY(int, av_write_trailer, (AVFormatContext *context), (context))
CFFMPEG_LAZY(int, av_write_frame, (AVFormatContext *context, AVPacket *packet), (context, packet))
CFFMPEG_LAZY(int, av_read_frame, (AVFormatContext *context, AVPacket *packet), (context, packet))
CFFMPEG_LAZY(int, avio_open2,
             (AVIOContext **io, const char *url, int flags, const AVIOInterruptCB *interrupt,
              AVDictionary **options),
             (io, url, flags, interrupt, options))
CFFMPEG_LAZY(int, avio_closep, (AVIOContext **io), (io))
CFFMPEG_LAZY(AVPacket *, av_packet_alloc, (void), ())
CFFMPEG_LAZY_VOID(av_packet_free, (AVPacket **packet), (packet))
CFFMPEG_LAZY_VOID(av_packet_unref, (AVPacket *packet), (packet))
CFFMPEG_LAZY(uint8_t *, av_packet_new_side_data,
             (AVPacket *packet, enum AVPacketSideDataType type, size_t size),
             (packet, type, size))
CFFMPEG_LAZY_VOID(av_packet_free_side_data, (AVPacket *packet), (packet))
CFFMPEG_LAZY(const char *, avcodec_get_name, (enum AVCodecID id), (id))
CFFMPEG_LAZY(int, av_dict_set, (AVDictionary **dictionary, const char *key, const char *value,
                                int flags),
             (dictionary, key, value, flags))
CFFMPEG_LAZY_VOID(av_dict_free, (AVDictionary **dictionary), (dictionary))
CFFMPEG_LAZY(int, av_strerror, (int code, char *buffer, size_t size), (code, buffer, size))
CFFMPEG_LAZY(void *, av_mallocz, (size_t size), (size))
CFFMPEG_LAZY(int64_t, av_rescale_q_rnd, (int64_t value, AVRational from, AVRational to,
                                         enum AVRounding rounding),
             (value, from, to, rounding))
CFFMPEG_LAZY_VOID(av_channel_layout_default, (AVChannelLayout *layout, int channels),
                  (layout, channels))
CFFMPEG_LAZY_VOID(av_log_set_callback, (void (*callback)(void *, int, const char *, va_list)),
                  (callback))

/// AVERROR_EOF and AVERROR(e) are macros Swift cannot import.
static inline int cffmpeg_averror_eof(void) { return AVERROR_EOF; }
static inline int cffmpeg_averror(int e) { return AVERROR(e); }
static inline int cffmpeg_averror_exit(void) { return AVERROR_EXIT; }

/// Receives each libav log line at error level or worse, already formatted (va_list cannot cross
/// into Swift on Linux). Defined in Swift with @_cdecl by IngestRTMP (RTMPLog.swift); a module
/// that calls cffmpeg_install_log_handler must link IngestRTMP.
void cffmpeg_ingest_log_line(int level, const char *line);

static inline void cffmpeg_log_callback(void *avcl, int level, const char *fmt, va_list args) {
  (void)avcl;
  if (level > AV_LOG_ERROR || fmt == NULL) return;
  char line[256];
  vsnprintf(line, sizeof line, fmt, args);
  cffmpeg_ingest_log_line(level, line);
}
/// Replaces libav's logger, which prints to stderr, with cffmpeg_ingest_log_line.
static inline void cffmpeg_install_log_handler(void) {
  cffmpeg_av_log_set_callback(cffmpeg_log_callback);
}
#endif
