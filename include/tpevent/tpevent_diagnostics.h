/*
 * tpevent diagnostics: what the `tpevent bench` tool needs of the library for its
 * baseline column, and nothing a program that uses events needs.
 *
 * NOT PART OF THE STABLE API. What is declared here may change or go in any
 * release, minor or patch, without notice; the library keeps exporting the symbols
 * only for the tool (and benchmarks) of the same release. Programs should include
 * <tpevent/tpevent.h> alone.
 */
#ifndef TPEVENT_TPEVENT_DIAGNOSTICS_H
#define TPEVENT_TPEVENT_DIAGNOSTICS_H

#include <tpevent/tpevent.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ baselines */

/*
 * The raw runtime's own calls, timed by the backend that wraps them, so that a
 * benchmark can put tpevent's cost next to the floor in the same run (the tpevent
 * tool's `bench`). Each sample is one call (or one create+destroy pair) in ns.
 * Backends without a runtime underneath (the CPU) answer TP_ERR_UNSUPPORTED.
 */
typedef enum tp_native_op {
    TP_NATIVE_RECORD = 0,         /* cudaEventRecord, event without timing */
    TP_NATIVE_RECORD_TIMING,      /* cudaEventRecord, event with timing */
    TP_NATIVE_QUERY,              /* cudaEventQuery of a completed event */
    TP_NATIVE_SYNCHRONIZE,        /* cudaEventSynchronize of a completed event */
    TP_NATIVE_STREAM_WAIT,        /* cudaStreamWaitEvent */
    TP_NATIVE_ELAPSED,            /* cudaEventElapsedTime of two completed events */
    TP_NATIVE_CREATE_DESTROY,     /* cudaEventCreateWithFlags + cudaEventDestroy */
    TP_NATIVE_RECORD_SYNCHRONIZE, /* record on an idle stream, then synchronize */
} tp_native_op;
#define TP_NATIVE_OP_COUNT (TP_NATIVE_RECORD_SYNCHRONIZE + 1) /* the number of ops */

/* Times count calls of op on the device, one sample each into samples_ns. */
TP_API tp_status tp_native_sample(const char *device, tp_native_op op, uint64_t *samples_ns, size_t count);

/* ------------------------------------------------- cross-backend waits */

/*
 * What holds a stream of the device while it waits on a record of another backend
 * (rule 14), in words, into buf (NUL-terminated, truncated to size): for CUDA and
 * HIP "stream memory operations (...)" or the fallback and why; for the CPU, the
 * stream's own worker. For `tpevent devices`. TP_ERR_UNSUPPORTED for a backend
 * whose streams cannot wait across backends.
 */
TP_API tp_status tp_device_wait_mechanism(const char *device, char *buf, size_t size);

/*
 * What a stream of `stream_device` waiting on a record of `event_device` (of another
 * backend) uses, in words, into buf: "device: a timeline semaphore: ..." where the
 * event's driver exports its records as timeline semaphores and the stream's waits
 * on them in its queue (Vulkan's records, CUDA's streams), each driver's capability
 * query asked; else "host: <tp_device_wait_mechanism's answer> (the device's path not
 * taken: <why>)". TP_ERR_INVALID_ARGUMENT for two devices of one backend.
 */
TP_API tp_status tp_wait_across_mechanism(const char *event_device, const char *stream_device, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* TPEVENT_TPEVENT_DIAGNOSTICS_H */
