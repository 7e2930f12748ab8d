/*
 * gpu_timeline_wait.c's entries (core/backend.h's timeline_import_support and
 * stream_wait_timeline), for gpu_backend.c's tables; gpu_forked.c's stand-ins for a
 * child of fork().
 */
#ifndef TPEVENT_BACKENDS_GPU_GPU_TIMELINE_WAIT_H
#define TPEVENT_BACKENDS_GPU_GPU_TIMELINE_WAIT_H

#include "backends/gpu/gpu_internal.h"

tp_status gpu_timeline_import_support(int device, const unsigned char uuid[16], char *how, size_t how_size);
tp_status gpu_stream_wait_timeline(tp_stream *stream, const tp_timeline_export *timeline, void (**passed)(void *),
                                   void **arg);

/* gpu_hold.c's, for the waits above: a place in the stream's window of holds (rule
 * 17), given back by *release(*arg) once the wait queued in it passed; later holds of
 * the stream pass only after it. TP_ERR_UNSUPPORTED, with no message and nothing
 * taken, when the window has one place left or none (the last is a hold's). With the
 * stream's device current. */
tp_status gpu_hold_slot(gpu_stream *stream, void (**release)(void *), void **arg);

#endif /* TPEVENT_BACKENDS_GPU_GPU_TIMELINE_WAIT_H */
