/*
 * Calls the fake GPU answers with an error, as CUDA does, that tpevent should
 * never make (issue 47, item 9: compute-sanitizer reports each as an API error on
 * the GPU machine), and a count of the runtime calls made (issue 52). The fake
 * GPU module exports a table of counters
 * (runtime_fake_event.c), so that a test proves on every CI run that tpevent asks
 * a cheaper question instead.
 */
#ifndef TPEVENT_TESTS_GPU_FAKE_PROBE_CALLS_H
#define TPEVENT_TESTS_GPU_FAKE_PROBE_CALLS_H

#define PROBE_CALLS_FAKE_SYMBOL "tpevent_fake_probe_calls"

typedef struct probe_calls {
    /* Event queries of a native event whose latest record was made inside a capture
     * now ended: CUDA answers cudaErrorInvalidValue ("invalid argument"), the
     * record being a node of the capture's graph, never run. */
    unsigned long (*captured_record_queries)(void);
    /* Every call of the runtime's event and stream calls (create, destroy, record,
     * query, synchronize, wait, elapsed time; stream query, synchronize and
     * is-capturing) by any
     * thread: what a traced op costs in runtime calls, and proof that nothing of
     * tpevent's asks the runtime while nothing is to be done (issue 52). */
    unsigned long (*runtime_calls)(void);
    /* Questions for the SM's maximum clock (NVML's on CUDA): asked once per device,
     * when its SM clock kernel is made, never per measurement (gpu_sm_clock.c). */
    unsigned long (*sm_clock_max_queries)(void);
    /* runtime_calls made by the calling thread only: what a call costs, apart from
     * what tpevent's own threads (the device's poller) ask meanwhile. */
    unsigned long (*thread_runtime_calls)(void);
} probe_calls;

#endif /* TPEVENT_TESTS_GPU_FAKE_PROBE_CALLS_H */
