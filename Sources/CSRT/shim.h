#ifndef INGEST_CSRT_SHIM_H
#define INGEST_CSRT_SHIM_H
#include <srt/srt.h>
#endif
