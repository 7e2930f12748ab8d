/*
 * The raw side of the trace benchmark (trace_raw.h): the runtime's calls through
 * tp_native_sample where the backend has them (CUDA, HIP, the fake GPU), OpenCL's
 * through trace_raw_opencl.c, none on the CPU.
 */
#include "trace_raw.h"

#include <tpevent/tpevent_diagnostics.h>

#include <stdio.h>
#include <string.h>

static const struct {
    tp_native_op op;
    const char *call; /* after the runtime's prefix */
} native_ops[] = {
    {TP_NATIVE_RECORD, "EventRecord"},
    {TP_NATIVE_RECORD_TIMING, "EventRecord (timing)"},
    {TP_NATIVE_QUERY, "EventQuery"},
    {TP_NATIVE_SYNCHRONIZE, "EventSynchronize"},
    {TP_NATIVE_STREAM_WAIT, "StreamWaitEvent"},
    {TP_NATIVE_RECORD_SYNCHRONIZE, "EventRecord+Synchronize"},
};

static char native_names[sizeof native_ops / sizeof native_ops[0]][TP_DEVICE_TYPE_COUNT][48];

bool raw_side_open(raw_side *raw, const char *device, tp_stream *stream, char *error, size_t error_size)
{
    memset(raw, 0, sizeof *raw);
    raw->timing_record = -1;
    snprintf(raw->device, sizeof raw->device, "%s", device);
    tp_device parsed;
    tp_status status = tp_stream_device(stream, &parsed);
    if (status != TP_OK) {
        snprintf(error, error_size, "%s: tp_stream_device: %s", device, tp_last_error());
        return false;
    }
    raw->type = parsed.type;
    if (raw->type == TP_DEVICE_OPENCL)
        return raw_opencl_open(raw, stream, error, error_size);
    uint64_t probe = 0;
    status = tp_native_sample(device, TP_NATIVE_QUERY, &probe, 1);
    if (status == TP_ERR_UNSUPPORTED) {
        snprintf(raw->why, sizeof raw->why, "no runtime underneath (%s)", tp_last_error());
        return true;
    }
    if (status != TP_OK) {
        snprintf(error, error_size, "%s: tp_native_sample: %s", device, tp_last_error());
        return false;
    }
    /* "cuda" -> "cuda", the runtime's prefix as the tool writes it (cudaEventRecord). */
    const char *prefix = tp_device_type_name(raw->type);
    for (size_t i = 0; i < sizeof native_ops / sizeof native_ops[0]; i++) {
        char *name = native_names[i][raw->type];
        snprintf(name, sizeof native_names[i][raw->type], "%s%s", prefix, native_ops[i].call);
        raw->names[i] = name;
        raw->ops[i] = (int)native_ops[i].op;
        if (native_ops[i].op == TP_NATIVE_RECORD_TIMING)
            raw->timing_record = (int)i;
    }
    raw->op_count = sizeof native_ops / sizeof native_ops[0];
    return true;
}

void raw_side_close(raw_side *raw)
{
    if (raw->type == TP_DEVICE_OPENCL)
        raw_opencl_close(raw);
    memset(raw, 0, sizeof *raw);
}

bool raw_side_sample(raw_side *raw, size_t i, uint64_t *samples_ns, size_t count, char *error, size_t error_size)
{
    if (raw->type == TP_DEVICE_OPENCL)
        return raw_opencl_sample(raw, i, samples_ns, count, error, error_size);
    tp_status status = tp_native_sample(raw->device, (tp_native_op)raw->ops[i], samples_ns, count);
    if (status != TP_OK) {
        snprintf(error, error_size, "%s: tp_native_sample(%s): %s", raw->device, raw->names[i], tp_last_error());
        return false;
    }
    return true;
}
