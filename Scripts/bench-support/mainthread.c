/*
 * What the main thread (the replay loop: the capture thread of `ingest replay`) cost a run:
 * its CPU time and its heap allocations, written at exit to the file named by
 * INGEST_MAIN_THREAD_REPORT as "cpu_ns allocations". Other threads (the senders, the file
 * writer, the audio mix) are left out, which is the point: it tells what stays on the capture
 * thread. Counting is alloccount.c's, included here (LD_PRELOAD this one library).
 *
 * Build: cc -O2 -shared -fPIC -o mainthread.so mainthread.c
 */
#include "alloccount.c"

#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Runs at exit, on the thread that calls exit: `ingest` does so on its main thread (checked:
 * another thread writes "-1 -1"). */
__attribute__((destructor)) static void report(void) {
  const char *path = getenv("INGEST_MAIN_THREAD_REPORT");
  if (path == NULL) return;
  FILE *file = fopen(path, "w");
  if (file == NULL) return;
  if (syscall(SYS_gettid) != getpid()) {
    fprintf(file, "-1 -1\n");
  } else {
    struct timespec spec = {0, 0};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec);
    fprintf(file, "%lld %lu\n", (long long)spec.tv_sec * 1000000000LL + spec.tv_nsec, thread_count);
  }
  fclose(file);
}
