#ifndef INGEST_CPROCESSCONTROL_SHIM_H
#define INGEST_CPROCESSCONTROL_SHIM_H

// prctl is variadic, which Swift cannot call: one typed wrapper for the one option we use.
// Nothing to link: prctl is in the C library.

#ifdef __linux__
#include <sys/prctl.h>

/// Sets whether the process may dump core and be read by its user's other processes
/// (/proc/PID/mem, ptrace): 0 forbids both. Returns prctl's result (0, or -1 with errno).
static inline int ingest_set_dumpable(int dumpable) {
  return prctl(PR_SET_DUMPABLE, (unsigned long)dumpable, 0UL, 0UL, 0UL);
}

/// Whether the process may dump core (prctl's PR_GET_DUMPABLE: 1, 2, or 0 when it may not).
static inline int ingest_get_dumpable(void) { return prctl(PR_GET_DUMPABLE, 0UL, 0UL, 0UL, 0UL); }
#endif

#endif
