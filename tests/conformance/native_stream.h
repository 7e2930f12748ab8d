/*
 * A native stream used as another library that holds its handle uses it, after
 * tpevent let it go (rule 19): a record of a native event on it, as torch's caching
 * host allocator makes when it frees a pinned block; and, on the fake GPU, how many
 * native streams the runtime has not destroyed.
 *
 * The calls come from the runtime behind the device: the fake GPU's own, exported
 * by its module (tests/gpu_fake/runtime_fake_event.c), OpenCL's ICD loader, or CUDA's driver API
 * (libcuda.so.1), which cannot count its streams.
 */
#ifndef TPEVENT_TESTS_CONFORMANCE_NATIVE_STREAM_H
#define TPEVENT_TESTS_CONFORMANCE_NATIVE_STREAM_H

#include "tests/gpu_fake/native_stream_calls.h"

#include <stdbool.h>

typedef struct native_stream_runtime {
    const char *runtime; /* for messages */
    native_stream_calls calls;
} native_stream_runtime;

/* The native-stream calls of `device`'s runtime. False after printing "skipped:
 * why" (the CPU's handle is the tp stream itself; HIP is not done here). The
 * device's backend must be loaded first (a stream of it made). */
bool native_stream_find(const char *device, native_stream_runtime *out);

#endif /* TPEVENT_TESTS_CONFORMANCE_NATIVE_STREAM_H */
