#ifndef INGEST_CSRT_SHIM_H
#define INGEST_CSRT_SHIM_H
// libsrt is loaded with dlopen(RTLD_LOCAL) on first use, not linked. libavformat (loaded the
// same way for RTMP and capture) depends on Debian's GnuTLS build of libsrt; with ours (the
// OpenSSL build) linked into the executable, both libraries' identical symbols were in the
// global scope, libsrt-gnutls's internal references bound to ours, and the process crashed in
// libsrt at exit. Two builds loaded side by side, each locally, still broke the SRT output of
// runs that also loaded libavformat. So the process holds one libsrt: the GnuTLS build when it
// is installed (libavformat then reuses it), the OpenSSL build otherwise; the headers are the
// same API and ABI (libsrt 1.5).
//
// The choice is made once for the whole process, in csrt.c: a socket made by one libsrt is
// unknown to the other, so every csrt_* call must resolve into the same one. Swift calls the
// csrt_* wrappers below, which resolve each function once with dlsym from that one handle.
// Call csrt_load() first and fail cleanly when it is 0.
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <srt/srt.h>
#include <syslog.h>

/// The soname of the OpenSSL build of libsrt (package libsrt1.5-openssl), the fallback.
#define CSRT_SONAME "libsrt.so.1.5"
/// The soname of the GnuTLS build that Debian's libavformat depends on, the first choice.
#define CSRT_GNUTLS_SONAME "libsrt-gnutls.so.1.5"

/// The process's one libsrt handle, chosen and loaded on the first call (thread-safe); NULL when
/// neither build can be loaded.
void *csrt_handle(void);

/// 1 when libsrt is loaded.
static inline int csrt_load(void) { return csrt_handle() != NULL; }

/// The library name csrt_load() looks for, for error messages.
static inline const char *csrt_soname(void) { return CSRT_SONAME; }

#define CSRT_POINTER(ret, name, params)                                         \
  static ret (*function) params;                                               \
  ret (*resolved) params = __atomic_load_n(&function, __ATOMIC_ACQUIRE);       \
  if (resolved == NULL) {                                                      \
    void *handle = csrt_handle();                                              \
    resolved = handle != NULL ? (ret (*) params)dlsym(handle, #name) : NULL;   \
    __atomic_store_n(&function, resolved, __ATOMIC_RELEASE);                   \
  }
#define CSRT_LAZY(ret, name, params, args)                                      \
  static inline ret c##name params {                                           \
    CSRT_POINTER(ret, name, params)                                            \
    return resolved args;                                                      \
  }
#define CSRT_LAZY_VOID(name, params, args)                                      \
  static inline void c##name params {                                          \
    CSRT_POINTER(void, name, params)                                           \
    resolved args;                                                             \
  }

CSRT_LAZY(int, srt_startup, (void), ())
CSRT_LAZY_VOID(srt_setloglevel, (int level), (level))
CSRT_LAZY(SRTSOCKET, srt_create_socket, (void), ())
CSRT_LAZY(int, srt_close, (SRTSOCKET u), (u))
CSRT_LAZY(int, srt_setsockflag, (SRTSOCKET u, SRT_SOCKOPT opt, const void *value, int length),
          (u, opt, value, length))
CSRT_LAZY(int, srt_getsockflag, (SRTSOCKET u, SRT_SOCKOPT opt, void *value, int *length),
          (u, opt, value, length))
CSRT_LAZY(int, srt_getlasterror, (int *errno_loc), (errno_loc))
CSRT_LAZY(const char *, srt_getlasterror_str, (void), ())
CSRT_LAZY(int, srt_getrejectreason, (SRTSOCKET u), (u))
CSRT_LAZY(const char *, srt_rejectreason_str, (int id), (id))
CSRT_LAZY(int, srt_bind, (SRTSOCKET u, const struct sockaddr *name, int length), (u, name, length))
CSRT_LAZY(int, srt_listen, (SRTSOCKET u, int backlog), (u, backlog))
CSRT_LAZY(SRTSOCKET, srt_accept, (SRTSOCKET u, struct sockaddr *address, int *length),
          (u, address, length))
CSRT_LAZY(int, srt_connect, (SRTSOCKET u, const struct sockaddr *name, int length),
          (u, name, length))
CSRT_LAZY(int, srt_sendmsg2, (SRTSOCKET u, const char *buffer, int length, SRT_MSGCTRL *control),
          (u, buffer, length, control))
CSRT_LAZY(int, srt_getsndbuffer, (SRTSOCKET u, size_t *blocks, size_t *bytes), (u, blocks, bytes))
CSRT_LAZY(int, srt_bistats, (SRTSOCKET u, SRT_TRACEBSTATS *stats, int clear, int instantaneous),
          (u, stats, clear, instantaneous))
CSRT_LAZY(SRT_SOCKSTATUS, srt_getsockstate, (SRTSOCKET u), (u))
CSRT_LAZY(int, srt_epoll_create, (void), ())
CSRT_LAZY(int, srt_epoll_add_usock, (int eid, SRTSOCKET u, const int *events), (eid, u, events))
CSRT_LAZY(int, srt_epoll_uwait, (int eid, SRT_EPOLL_EVENT *ready, int size, int64_t timeout),
          (eid, ready, size, timeout))
CSRT_LAZY(int, srt_epoll_release, (int eid), (eid))
#endif
