/*
 * The calls a test needs to capture a native stream as someone other than tpevent
 * would (torch.cuda.graph on a stream tpevent wraps): begin in a mode (CUDA's
 * CUstreamCaptureMode values), end and instantiate, launch, destroy. Each answers 0
 * or the runtime's error code. The fake GPU module exports a table of them
 * (runtime_fake_graph.c); tests/conformance/foreign_capture.c fills one from it or
 * from CUDA's driver API.
 */
#ifndef TPEVENT_TESTS_GPU_FAKE_FOREIGN_CAPTURE_CALLS_H
#define TPEVENT_TESTS_GPU_FAKE_FOREIGN_CAPTURE_CALLS_H

#define FOREIGN_CAPTURE_FAKE_SYMBOL "tpevent_fake_foreign_capture"

typedef struct foreign_capture_calls {
    int (*begin)(void *stream, int mode);
    /* Nonzero if the capture was invalidated meanwhile. */
    int (*end)(void *stream, void **exec);
    int (*launch)(void *exec, void *stream);
    void (*destroy)(void *exec);
} foreign_capture_calls;

#endif /* TPEVENT_TESTS_GPU_FAKE_FOREIGN_CAPTURE_CALLS_H */
