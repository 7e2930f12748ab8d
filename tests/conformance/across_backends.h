/*
 * What the tests of waits across backends share (rules 6, 9 and 14 across backends):
 * a record of one backend held back by a gate, and a stream of another waiting on
 * it; each test runs both ways.
 *
 * Progress on the waiting stream is seen through records on it, never host
 * functions: where a GPU device falls back on the runtime's host functions (the
 * "fake-runtime-host-fns" and TPEVENT_GPU_WAIT=host-fn variants), a wait holds the
 * runtime's one callback thread, and a host function queued behind it would show
 * nothing but that. The record waited for is held back by a gate (a host
 * function) on a stream of the event's backend.
 */
#ifndef TPEVENT_TESTS_CONFORMANCE_ACROSS_BACKENDS_H
#define TPEVENT_TESTS_CONFORMANCE_ACROSS_BACKENDS_H

#include "support.h"

/* The test body: check(event_device, stream_device, ...) both ways, a stream of
 * the device under test waiting on the other backend's event, then the reverse
 * (other_backend: the peer where it is of another backend; else the CPU for a GPU
 * device, a usable GPU for a CPU device, or the test skips). */
#define BOTH_WAYS(env, check, ...)                 \
    do {                                           \
        const char *other_ = other_backend(env);   \
        if (!other_)                               \
            return TEST_SKIP;                      \
        check(other_, (env)->device, __VA_ARGS__); \
        check((env)->device, other_, __VA_ARGS__); \
        return 0;                                  \
    } while (0)

/* A record of `event_device`, pending behind a closed gate, and a stream of
 * `stream_device` to wait on it. */
typedef struct across {
    gate gate;
    tp_stream *source;  /* of event_device, gated */
    tp_stream *waiting; /* of stream_device */
    tp_event *event;    /* of event_device, recorded on source behind the gate */
    tp_event *after;    /* of stream_device: recorded on waiting after the wait */
} across;

void across_make(across *a, const char *event_device, const char *stream_device, unsigned flags);
/* Opens the gate (if not yet), then checks the waiting stream goes on, and frees
 * whatever is left. */
void across_finish(across *a);

#endif /* TPEVENT_TESTS_CONFORMANCE_ACROSS_BACKENDS_H */
