/*
 * gpu_timeline_wait.c's entries (core/backend.h's timeline_import_support and
 * stream_wait_timeline), for gpu_backend.c's tables; gpu_forked.c's stand-ins for a
 * child of fork().
 */
#ifndef TPEVENT_BACKENDS_GPU_GPU_TIMELINE_WAIT_H
#define TPEVENT_BACKENDS_GPU_GPU_TIMELINE_WAIT_H

#include "backends/gpu/gpu_internal.h"

tp_status gpu_timeline_import_support(int device, const unsigned char uuid[16], char *how, size_t how_size);
tp_status gpu_stream_wait_timeline(tp_stream *stream, const tp_timeline_export *timeline);

#endif /* TPEVENT_BACKENDS_GPU_GPU_TIMELINE_WAIT_H */
