/*
 * Counts heap allocations per thread, for `ingest bench` (loaded with LD_PRELOAD).
 *
 * Every malloc, calloc, realloc, memalign, aligned_alloc, posix_memalign and valloc call
 * increments a thread-local counter and a process-wide one, then forwards to glibc's own
 * implementation (the __libc_* entry points, so no dlsym bootstrapping is needed). The benchmark
 * finds `ingest_alloc_count_thread` with dlsym and reads it around each Pipeline.append, so
 * allocations of other threads or of the harness itself are not counted against the capture path.
 *
 * Build: gcc -O2 -shared -fPIC -o alloccount.so alloccount.c
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <errno.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static __thread unsigned long thread_count __attribute__((tls_model("initial-exec")));
static unsigned long process_count;

static inline void note(void) {
  thread_count++;
  __atomic_fetch_add(&process_count, 1, __ATOMIC_RELAXED);
}

/* Allocations made by the calling thread so far. */
unsigned long ingest_alloc_count_thread(void) { return thread_count; }

/* Allocations made by every thread so far. */
unsigned long ingest_alloc_count_process(void) {
  return __atomic_load_n(&process_count, __ATOMIC_RELAXED);
}

void *malloc(size_t size) {
  note();
  return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
  note();
  return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
  note();
  return __libc_realloc(pointer, size);
}

void *memalign(size_t alignment, size_t size) {
  note();
  return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
  note();
  return __libc_memalign(alignment, size);
}

void *valloc(size_t size) {
  note();
  return __libc_memalign(4096, size);
}

int posix_memalign(void **out, size_t alignment, size_t size) {
  if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
  note();
  void *pointer = __libc_memalign(alignment, size);
  if (pointer == NULL && size != 0) return ENOMEM;
  *out = pointer;
  return 0;
}
