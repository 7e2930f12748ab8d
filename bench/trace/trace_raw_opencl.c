/*
 * The raw OpenCL calls of the trace benchmark (trace_raw.h), on the native queue of
 * a tpevent stream of the device (the context and queue tpevent made), each as the
 * backend makes it (bench/opencl/opencl_bench.c says why): a record is a marker,
 * a flush and the release of the marker it replaces. Timed one call per sample, as
 * tp_native_sample times CUDA's. Without OpenCL in the build (TRACE_BENCH_OPENCL
 * unset), an OpenCL device has no raw side, and says so.
 */
#define _POSIX_C_SOURCE 200809L
#include "trace_raw.h"

#include "bench_rounds.h" /* bench_now_ns */

#include <stdio.h>
#include <string.h>

#ifdef TRACE_BENCH_OPENCL
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <stdlib.h>

enum { RAW_RECORD, RAW_QUERY, RAW_SYNCHRONIZE, RAW_RECORD_SYNCHRONIZE, RAW_OPENCL_OPS };

static const char *const opencl_names[RAW_OPENCL_OPS] = {
    [RAW_RECORD] = "clEnqueueMarker+clFlush",
    [RAW_QUERY] = "clGetEventInfo (complete)",
    [RAW_SYNCHRONIZE] = "clWaitForEvents (complete)",
    [RAW_RECORD_SYNCHRONIZE] = "marker+flush+clWaitForEvents",
};

typedef struct opencl_raw {
    cl_command_queue queue;
    cl_event latest; /* the last marker, reached before each query/synchronize op */
} opencl_raw;

static bool cl_failed(const char *call, cl_int err, char *error, size_t error_size)
{
    snprintf(error, error_size, "%s: OpenCL error %d", call, (int)err);
    return false;
}

/* A marker on the queue, flushed; the one it replaces released. */
static cl_int record(opencl_raw *cl)
{
    cl_event marker = NULL;
    cl_int err = clEnqueueMarkerWithWaitList(cl->queue, 0, NULL, &marker);
    if (err == CL_SUCCESS)
        err = clFlush(cl->queue);
    if (err == CL_SUCCESS && cl->latest)
        err = clReleaseEvent(cl->latest);
    cl->latest = marker;
    return err;
}

bool raw_opencl_open(raw_side *raw, tp_stream *stream, char *error, size_t error_size)
{
    void *queue = NULL;
    if (tp_stream_native(stream, &queue) != TP_OK || !queue) {
        snprintf(error, error_size, "%s: tp_stream_native: %s", raw->device, tp_last_error());
        return false;
    }
    opencl_raw *cl = calloc(1, sizeof *cl);
    if (!cl) {
        snprintf(error, error_size, "out of memory");
        return false;
    }
    cl->queue = queue;
    cl_int err = record(cl);
    if (err == CL_SUCCESS)
        err = clWaitForEvents(1, &cl->latest);
    if (err != CL_SUCCESS) {
        raw->opencl = cl;
        raw_opencl_close(raw);
        return cl_failed("clEnqueueMarkerWithWaitList/clWaitForEvents", err, error, error_size);
    }
    raw->opencl = cl;
    for (int i = 0; i < RAW_OPENCL_OPS; i++) {
        raw->names[i] = opencl_names[i];
        raw->ops[i] = i;
    }
    raw->op_count = RAW_OPENCL_OPS;
    return true;
}

void raw_opencl_close(raw_side *raw)
{
    opencl_raw *cl = raw->opencl;
    if (!cl)
        return;
    if (cl->latest) {
        (void)clWaitForEvents(1, &cl->latest);
        (void)clReleaseEvent(cl->latest);
    }
    free(cl);
    raw->opencl = NULL;
}

bool raw_opencl_sample(raw_side *raw, size_t i, uint64_t *samples_ns, size_t count, char *error, size_t error_size)
{
    opencl_raw *cl = raw->opencl;
    cl_int err = CL_SUCCESS;
    if (raw->ops[i] == RAW_QUERY || raw->ops[i] == RAW_SYNCHRONIZE)
        err = clWaitForEvents(1, &cl->latest); /* completed, as the op says */
    for (size_t s = 0; s < count && err == CL_SUCCESS; s++) {
        cl_int status = 0;
        uint64_t t0 = bench_now_ns();
        switch (raw->ops[i]) {
        case RAW_RECORD:
            err = record(cl);
            break;
        case RAW_QUERY:
            err = clGetEventInfo(cl->latest, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
            break;
        case RAW_SYNCHRONIZE:
            err = clWaitForEvents(1, &cl->latest);
            break;
        default:
            err = record(cl);
            if (err == CL_SUCCESS)
                err = clWaitForEvents(1, &cl->latest);
            break;
        }
        samples_ns[s] = bench_now_ns() - t0;
    }
    if (err == CL_SUCCESS && raw->ops[i] == RAW_RECORD)
        err = clFinish(cl->queue); /* the queue idle for the next op */
    return err == CL_SUCCESS || cl_failed(raw->names[i], err, error, error_size);
}

#else /* no OpenCL in this build */

bool raw_opencl_open(raw_side *raw, tp_stream *stream, char *error, size_t error_size)
{
    (void)stream, (void)error, (void)error_size;
    snprintf(raw->why, sizeof raw->why, "built without OpenCL: no raw calls");
    return true;
}

void raw_opencl_close(raw_side *raw)
{
    (void)raw;
}

bool raw_opencl_sample(raw_side *raw, size_t i, uint64_t *samples_ns, size_t count, char *error, size_t error_size)
{
    (void)raw, (void)i, (void)samples_ns, (void)count;
    snprintf(error, error_size, "built without OpenCL");
    return false;
}

#endif
