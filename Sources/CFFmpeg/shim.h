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
#include <libavutil/frame.h>
#include <libswresample/swresample.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>

#define CFFMPEG_STRING2(x) #x
#define CFFMPEG_STRING(x) CFFMPEG_STRING2(x)
/// The soname of the libavformat these headers describe (libavformat.so.59 for ffmpeg 5.1).
#define CFFMPEG_SONAME "libavformat.so." CFFMPEG_STRING(LIBAVFORMAT_VERSION_MAJOR)

/// The reason the last failed dlopen of these wrappers gave (dlerror's text), for messages: a
/// library that is installed can still fail to load (no address space left under ulimit -v).
static inline char *cffmpeg_load_error_buffer(void) {
  static char text[512];
  return text;
}

static inline const char *cffmpeg_load_error(void) { return cffmpeg_load_error_buffer(); }

static inline void *cffmpeg_open(const char *soname) {
  void *loaded = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (loaded == NULL) {
    const char *reason = dlerror();
    snprintf(cffmpeg_load_error_buffer(), 512, "%s", reason != NULL ? reason : "");
  }
  return loaded;
}

static inline void *cffmpeg_handle(void) {
  static void *handle;
  void *loaded = __atomic_load_n(&handle, __ATOMIC_ACQUIRE);
  if (loaded == NULL) {
    loaded = cffmpeg_open(CFFMPEG_SONAME);
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
CFFMPEG_LAZY_VOID(avio_write, (AVIOContext *io, const unsigned char *buffer, int size),
                  (io, buffer, size))
CFFMPEG_LAZY_VOID(avio_flush, (AVIOContext *io), (io))
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

// The audio mix (IngestAudioMix) needs libavcodec and libswresample only: a run that mixes into
// a .ts file or HLS loads libavcodec (and its dependencies, libswresample and libavutil among
// them) without libavformat and its network libraries. These wrappers resolve from that handle.
#define CFFMPEG_CODEC_SONAME "libavcodec.so." CFFMPEG_STRING(LIBAVCODEC_VERSION_MAJOR)

static inline void *cffmpeg_codec_handle(void) {
  static void *handle;
  void *loaded = __atomic_load_n(&handle, __ATOMIC_ACQUIRE);
  if (loaded == NULL) {
    loaded = cffmpeg_open(CFFMPEG_CODEC_SONAME);
    if (loaded != NULL) __atomic_store_n(&handle, loaded, __ATOMIC_RELEASE);
  }
  return loaded;
}

/// 1 when libavcodec (with libswresample and libavutil, its dependencies) is loaded.
static inline int cffmpeg_codec_load(void) { return cffmpeg_codec_handle() != NULL; }

/// The library name cffmpeg_codec_load() looks for, for error messages.
static inline const char *cffmpeg_codec_soname(void) { return CFFMPEG_CODEC_SONAME; }

#define CFFMPEG_CODEC_POINTER(ret, name, params)                                \
  static ret (*function) params;                                               \
  ret (*resolved) params = __atomic_load_n(&function, __ATOMIC_ACQUIRE);       \
  if (resolved == NULL) {                                                      \
    void *handle = cffmpeg_codec_handle();                                     \
    resolved = handle != NULL ? (ret (*) params)dlsym(handle, #name) : NULL;   \
    __atomic_store_n(&function, resolved, __ATOMIC_RELEASE);                   \
  }
#define CFFMPEG_CODEC_LAZY(ret, name, params, args)                             \
  static inline ret cffmpeg_codec_##name params {                              \
    CFFMPEG_CODEC_POINTER(ret, name, params)                                   \
    return resolved args;                                                      \
  }
#define CFFMPEG_CODEC_LAZY_VOID(name, params, args)                             \
  static inline void cffmpeg_codec_##name params {                             \
    CFFMPEG_CODEC_POINTER(void, name, params)                                  \
    resolved args;                                                             \
  }

CFFMPEG_CODEC_LAZY(const AVCodec *, avcodec_find_decoder, (enum AVCodecID id), (id))
CFFMPEG_CODEC_LAZY(const AVCodec *, avcodec_find_encoder, (enum AVCodecID id), (id))
CFFMPEG_CODEC_LAZY(AVCodecContext *, avcodec_alloc_context3, (const AVCodec *codec), (codec))
CFFMPEG_CODEC_LAZY_VOID(avcodec_free_context, (AVCodecContext **context), (context))
CFFMPEG_CODEC_LAZY(int, avcodec_open2,
                   (AVCodecContext *context, const AVCodec *codec, AVDictionary **options),
                   (context, codec, options))
CFFMPEG_CODEC_LAZY(int, avcodec_send_packet, (AVCodecContext *context, const AVPacket *packet),
                   (context, packet))
CFFMPEG_CODEC_LAZY(int, avcodec_receive_frame, (AVCodecContext *context, AVFrame *frame),
                   (context, frame))
CFFMPEG_CODEC_LAZY(int, avcodec_send_frame, (AVCodecContext *context, const AVFrame *frame),
                   (context, frame))
CFFMPEG_CODEC_LAZY(int, avcodec_receive_packet, (AVCodecContext *context, AVPacket *packet),
                   (context, packet))
CFFMPEG_CODEC_LAZY(AVPacket *, av_packet_alloc, (void), ())
CFFMPEG_CODEC_LAZY_VOID(av_packet_free, (AVPacket **packet), (packet))
CFFMPEG_CODEC_LAZY_VOID(av_packet_unref, (AVPacket *packet), (packet))
CFFMPEG_CODEC_LAZY(AVFrame *, av_frame_alloc, (void), ())
CFFMPEG_CODEC_LAZY_VOID(av_frame_free, (AVFrame **frame), (frame))
CFFMPEG_CODEC_LAZY_VOID(av_frame_unref, (AVFrame *frame), (frame))
CFFMPEG_CODEC_LAZY(int, av_frame_get_buffer, (AVFrame *frame, int align), (frame, align))
CFFMPEG_CODEC_LAZY(int, av_frame_make_writable, (AVFrame *frame), (frame))
CFFMPEG_CODEC_LAZY(void *, av_mallocz, (size_t size), (size))
CFFMPEG_CODEC_LAZY(int, av_strerror, (int code, char *buffer, size_t size), (code, buffer, size))
CFFMPEG_CODEC_LAZY_VOID(av_channel_layout_default, (AVChannelLayout *layout, int channels),
                        (layout, channels))
CFFMPEG_CODEC_LAZY(int, av_channel_layout_copy, (AVChannelLayout *destination,
                                                 const AVChannelLayout *source),
                   (destination, source))
CFFMPEG_CODEC_LAZY_VOID(av_channel_layout_uninit, (AVChannelLayout *layout), (layout))
CFFMPEG_CODEC_LAZY(int, swr_alloc_set_opts2,
                   (struct SwrContext **context, const AVChannelLayout *outLayout,
                    enum AVSampleFormat outFormat, int outRate, const AVChannelLayout *inLayout,
                    enum AVSampleFormat inFormat, int inRate, int logOffset, void *logContext),
                   (context, outLayout, outFormat, outRate, inLayout, inFormat, inRate, logOffset,
                    logContext))
CFFMPEG_CODEC_LAZY(int, swr_init, (struct SwrContext *context), (context))
CFFMPEG_CODEC_LAZY_VOID(swr_free, (struct SwrContext **context), (context))
CFFMPEG_CODEC_LAZY(int, swr_convert,
                   (struct SwrContext *context, uint8_t **out, int outCount, const uint8_t **in,
                    int inCount),
                   (context, out, outCount, in, inCount))
CFFMPEG_CODEC_LAZY_VOID(av_log_set_level, (int level), (level))
CFFMPEG_CODEC_LAZY(int64_t, swr_get_delay, (struct SwrContext *context, int64_t base),
                   (context, base))
CFFMPEG_CODEC_LAZY(AVBufferRef *, av_buffer_alloc, (size_t size), (size))
CFFMPEG_CODEC_LAZY_VOID(av_buffer_unref, (AVBufferRef **buffer), (buffer))
CFFMPEG_CODEC_LAZY(int, av_buffer_is_writable, (const AVBufferRef *buffer), (buffer))
CFFMPEG_CODEC_LAZY(AVBufferPool *, av_buffer_pool_init,
                   (size_t size, AVBufferRef *(*alloc)(size_t size)), (size, alloc))
CFFMPEG_CODEC_LAZY(AVBufferRef *, av_buffer_pool_get, (AVBufferPool *pool), (pool))
CFFMPEG_CODEC_LAZY_VOID(av_buffer_pool_uninit, (AVBufferPool **pool), (pool))
CFFMPEG_CODEC_LAZY(int, avcodec_default_get_buffer2,
                   (AVCodecContext *context, AVFrame *frame, int flags), (context, frame, flags))
CFFMPEG_CODEC_LAZY(int, av_get_bytes_per_sample, (enum AVSampleFormat format), (format))
CFFMPEG_CODEC_LAZY(int, av_sample_fmt_is_planar, (enum AVSampleFormat format), (format))

/// Where an audio frame's planes start: 64 bytes apart at least, as av_malloc aligns.
static inline size_t cffmpeg_plane_bytes(size_t bytes) { return (bytes + 63) & ~(size_t)63; }

/// Backs every plane of an audio frame with one buffer, `line` bytes apart (AVFrame allows one
/// buffer for several planes): av_frame_ref, which avcodec_send_frame makes of its input, then
/// allocates one AVBufferRef rather than one per channel. The frame takes `buffer`. At most
/// AV_NUM_DATA_POINTERS planes.
static inline void cffmpeg_frame_set_planes(AVFrame *frame, AVBufferRef *buffer, int planes,
                                            int line) {
  frame->buf[0] = buffer;
  for (int plane = 0; plane < planes; plane++)
    frame->data[plane] = buffer->data + (size_t)plane * line;
  frame->extended_data = frame->data;
  frame->linesize[0] = line;
}

/// AV_NUM_DATA_POINTERS, the planes an AVFrame holds without extended_data of its own.
static inline int cffmpeg_frame_planes_max(void) { return AV_NUM_DATA_POINTERS; }

/// The buffers a decoder's frames are given by cffmpeg_pooled_get_buffer2: `size` bytes each,
/// from `pool`.
typedef struct CFFmpegFramePool {
  AVBufferPool *pool;
  size_t size;
} CFFmpegFramePool;

/// get_buffer2 for an audio decoder: every plane of a frame in one buffer from the
/// CFFmpegFramePool in context->opaque. A pooled buffer costs one allocation each time it is
/// handed out (its AVBufferRef), and avcodec_default_get_buffer2 hands out one per plane; this,
/// one per frame. Frames its buffers cannot hold go to avcodec_default_get_buffer2.
static inline int cffmpeg_pooled_get_buffer2(AVCodecContext *context, AVFrame *frame, int flags) {
  const CFFmpegFramePool *pool = context->opaque;
  enum AVSampleFormat format = (enum AVSampleFormat)frame->format;
  int bytes = format < 0 ? 0 : cffmpeg_codec_av_get_bytes_per_sample(format);
  int channels = frame->ch_layout.nb_channels;
  int planar = bytes > 0 && cffmpeg_codec_av_sample_fmt_is_planar(format);
  int planes = planar ? channels : 1;
  size_t line = cffmpeg_plane_bytes((size_t)frame->nb_samples * bytes * (planar ? 1 : channels));
  if (pool == NULL || pool->pool == NULL || bytes <= 0 || channels <= 0 || frame->nb_samples <= 0
      || planes > AV_NUM_DATA_POINTERS || line * planes > pool->size || line > INT_MAX)
    return cffmpeg_codec_avcodec_default_get_buffer2(context, frame, flags);
  AVBufferRef *buffer = cffmpeg_codec_av_buffer_pool_get(pool->pool);
  if (buffer == NULL) return AVERROR(ENOMEM);
  cffmpeg_frame_set_planes(frame, buffer, planes, (int)line);
  return 0;
}

/// Makes `context`'s decoder take its frames' buffers from `pool` (cffmpeg_pooled_get_buffer2),
/// before avcodec_open2. 0 when its decoder does not let the caller allocate (no
/// AV_CODEC_CAP_DR1): it keeps libavcodec's own.
static inline int cffmpeg_use_frame_pool(AVCodecContext *context, const AVCodec *codec,
                                         CFFmpegFramePool *pool) {
  if (!(codec->capabilities & AV_CODEC_CAP_DR1)) return 0;
  context->opaque = pool;
  context->get_buffer2 = cffmpeg_pooled_get_buffer2;
  return 1;
}

/// AV_LOG_ERROR, for av_log_set_level: libav's notices (the AAC encoder's "Qavg" line on close)
/// would otherwise go to standard error.
static inline int cffmpeg_log_error_level(void) { return AV_LOG_ERROR; }
/// AV_CODEC_FLAG_GLOBAL_HEADER is a macro: the encoder then puts its AudioSpecificConfig in
/// extradata, not in ADTS headers.
static inline int cffmpeg_codec_flag_global_header(void) { return AV_CODEC_FLAG_GLOBAL_HEADER; }
/// AV_INPUT_BUFFER_PADDING_SIZE: libavcodec reads this far past the end of extradata and of a
/// packet's data.
static inline int cffmpeg_input_padding(void) { return AV_INPUT_BUFFER_PADDING_SIZE; }

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
