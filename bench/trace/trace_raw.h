/*
 * The raw runtime's own calls, for the trace benchmark (trace_bench.c): timed while
 * a trace runs and while none does, in one process, to see whether anything of the
 * trace slows the runtime down for everyone (issue 52, item 2).
 *
 * CUDA and HIP: tp_native_sample (the backend times the runtime's call on objects of
 * its own, one call per sample). OpenCL: the ICD loader's calls on the native queue
 * of a tpevent stream (trace_raw_opencl.c, where the OpenCL backend is built). The
 * CPU has no runtime underneath: no raw side.
 */
#ifndef TPEVENT_BENCH_TRACE_RAW_H
#define TPEVENT_BENCH_TRACE_RAW_H

#include <tpevent/tpevent.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RAW_OPS_MAX 8

typedef struct raw_side {
    tp_device_type type;
    char device[TP_DEVICE_STRING_MAX];
    size_t op_count;                /* 0: no runtime underneath */
    const char *names[RAW_OPS_MAX]; /* "cudaEventRecord", ... */
    int ops[RAW_OPS_MAX];           /* the side's own numbering */
    int timing_record;              /* index of the timing record in ops, or -1 */
    void *opencl;                   /* trace_raw_opencl.c's state */
    char why[160];                  /* op_count 0: why there is no raw side */
} raw_side;

/* The raw side of `device`, whose stream `stream` the raw calls may use the native
 * queue of (OpenCL). False with the message in `error` on a failure. */
bool raw_side_open(raw_side *raw, const char *device, tp_stream *stream, char *error, size_t error_size);
void raw_side_close(raw_side *raw);
/* `count` samples of op i (ns per call). */
bool raw_side_sample(raw_side *raw, size_t i, uint64_t *samples_ns, size_t count, char *error, size_t error_size);

/* trace_raw_opencl.c: the same for an OpenCL queue; false (and no raw side) where the
 * benchmark was built without OpenCL. */
bool raw_opencl_open(raw_side *raw, tp_stream *stream, char *error, size_t error_size);
void raw_opencl_close(raw_side *raw);
bool raw_opencl_sample(raw_side *raw, size_t i, uint64_t *samples_ns, size_t count, char *error, size_t error_size);

#endif /* TPEVENT_BENCH_TRACE_RAW_H */
