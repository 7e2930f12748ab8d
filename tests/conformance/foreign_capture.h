/*
 * Captures begun by someone other than tpevent (torch.cuda.graph, or any code
 * calling the runtime's capture) on a native stream that tpevent wraps, for rule
 * 16's "tpevent never invalidates a capture, whoever began it".
 *
 * The calls come from the runtime behind the device: CUDA's driver API
 * (libcuda.so.1), or the fake GPU's own, exported by its module
 * (tests/gpu_fake/runtime_fake_graph.c, which models capture modes as CUDA does).
 */
#ifndef TPEVENT_TESTS_CONFORMANCE_FOREIGN_CAPTURE_H
#define TPEVENT_TESTS_CONFORMANCE_FOREIGN_CAPTURE_H

#include "tests/gpu_fake/foreign_capture_calls.h"

#include <stdbool.h>

/* CUDA's capture modes (CUstreamCaptureMode), which the fake shares. */
#define FOREIGN_MODE_GLOBAL 0
#define FOREIGN_MODE_THREAD_LOCAL 1
#define FOREIGN_MODE_RELAXED 2

typedef struct foreign_capture {
    const char *runtime; /* for messages */
    foreign_capture_calls calls;
} foreign_capture;

/* The capture calls of `device`'s runtime. False after printing "skipped: why"
 * (the CPU has no foreign captures: every capture there is tpevent's). The device's
 * backend must be loaded first (a stream of it made). */
bool foreign_capture_find(const char *device, foreign_capture *out);

#endif /* TPEVENT_TESTS_CONFORMANCE_FOREIGN_CAPTURE_H */
