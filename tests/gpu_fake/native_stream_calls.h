/*
 * The calls a test needs to use a native stream as another library holding its
 * handle would (rule 19: torch's caching host allocator records an event on a
 * stream long after its owner let it go), and to count the runtime's live streams.
 * Each answers 0 or the runtime's error code. The fake GPU module exports a table
 * of them (runtime_fake_event.c); tests/conformance/native_stream.c fills one from
 * it or from CUDA's driver API.
 */
#ifndef TPEVENT_TESTS_GPU_FAKE_NATIVE_STREAM_CALLS_H
#define TPEVENT_TESTS_GPU_FAKE_NATIVE_STREAM_CALLS_H

#define NATIVE_STREAM_FAKE_SYMBOL "tpevent_fake_native_stream"

typedef struct native_stream_calls {
    /* Records a native event, made for the occasion, on the native stream and waits
     * for it; a destroyed stream answers the runtime's error. */
    int (*record_and_wait)(void *stream);
    /* Native streams of the device not destroyed, the default one included; -1
     * where the runtime cannot tell. */
    int (*live_streams)(int device);
} native_stream_calls;

#endif /* TPEVENT_TESTS_GPU_FAKE_NATIVE_STREAM_CALLS_H */
