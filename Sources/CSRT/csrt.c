#include "shim.h"

#include <pthread.h>

// One handle for the process (see shim.h): a function-local static in a header would be one
// copy per translation unit, each free to choose a different libsrt.
static void *handle;
static pthread_once_t once = PTHREAD_ONCE_INIT;

// The GnuTLS build comes first whenever it is installed (it is wherever libavformat is, as its
// dependency): libavformat, loaded later by an RTMP output or capture, then finds its libsrt
// already loaded by its soname and the process holds exactly one libsrt. Two builds side by
// side broke the SRT output of runs that also published over RTMP. The OpenSSL build is the
// fallback for machines without libavformat.
static void choose(void) {
  handle = dlopen(CSRT_GNUTLS_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) handle = dlopen(CSRT_SONAME, RTLD_NOW | RTLD_LOCAL);
}

void *csrt_handle(void) {
  pthread_once(&once, choose);
  return handle;
}
