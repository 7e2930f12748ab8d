#include "measure.h"

#include <stdio.h>
#include <string.h>

#include "common/clock.h"

typedef bool (*op_sampler)(bench_target *target, double *samples, size_t count, unsigned batch);

typedef struct op_spec {
    const char *key;
    const char *label;
    tp_native_op native;
    const char *native_call;
    op_sampler sample;
} op_spec;

/* Records the library's message for a failed call; returns false for the caller. */
static bool call_failed(bench_target *target, const char *call, tp_status status)
{
    snprintf(target->error, sizeof target->error, "%s: %s: %s (%s)", target->device, call, tp_last_error(),
             tp_status_name(status));
    return false;
}

/* Leaves `event` recorded on the target's stream and reached. */
static bool record_and_wait(bench_target *target, tp_event *event)
{
    tp_status status = tp_event_record(event, target->stream);
    if (status != TP_OK)
        return call_failed(target, "tp_event_record", status);
    status = tp_event_synchronize(event);
    if (status != TP_OK)
        return call_failed(target, "tp_event_synchronize", status);
    return true;
}

/* The mean of a batch, in ns per call. */
static double per_call(uint64_t before, uint64_t after, unsigned batch)
{
    return (double)(after - before) / batch;
}

static bool sample_record_event(bench_target *target, tp_event *event, double *samples, size_t count, unsigned batch)
{
    for (size_t i = 0; i < count; i++) {
        tp_status status = TP_OK;
        uint64_t before = tp_now_ns();
        for (unsigned b = 0; b < batch && status == TP_OK; b++)
            status = tp_event_record(event, target->stream);
        uint64_t after = tp_now_ns();
        if (status != TP_OK)
            return call_failed(target, "tp_event_record", status);
        samples[i] = per_call(before, after, batch);
    }
    /* Leave the stream idle for the next op. */
    tp_status status = tp_stream_synchronize(target->stream);
    if (status != TP_OK)
        return call_failed(target, "tp_stream_synchronize", status);
    return true;
}

static bool sample_record(bench_target *target, double *samples, size_t count, unsigned batch)
{
    return sample_record_event(target, target->plain_event, samples, count, batch);
}

static bool sample_record_timing(bench_target *target, double *samples, size_t count, unsigned batch)
{
    return sample_record_event(target, target->timing_start, samples, count, batch);
}

static bool sample_query(bench_target *target, double *samples, size_t count, unsigned batch)
{
    if (!record_and_wait(target, target->plain_event))
        return false;
    bool always_done = true;
    for (size_t i = 0; i < count; i++) {
        tp_status status = TP_OK;
        bool done = true;
        uint64_t before = tp_now_ns();
        for (unsigned b = 0; b < batch && status == TP_OK; b++) {
            bool reached = false;
            status = tp_event_query(target->plain_event, &reached);
            done &= reached;
        }
        uint64_t after = tp_now_ns();
        if (status != TP_OK)
            return call_failed(target, "tp_event_query", status);
        always_done = always_done && done;
        samples[i] = per_call(before, after, batch);
    }
    if (!always_done) {
        snprintf(target->error, sizeof target->error,
                 "%s: tp_event_query: an event already synchronized was reported not done", target->device);
        return false;
    }
    return true;
}

static bool sample_synchronize(bench_target *target, double *samples, size_t count, unsigned batch)
{
    if (!record_and_wait(target, target->plain_event))
        return false;
    for (size_t i = 0; i < count; i++) {
        tp_status status = TP_OK;
        uint64_t before = tp_now_ns();
        for (unsigned b = 0; b < batch && status == TP_OK; b++)
            status = tp_event_synchronize(target->plain_event);
        uint64_t after = tp_now_ns();
        if (status != TP_OK)
            return call_failed(target, "tp_event_synchronize", status);
        samples[i] = per_call(before, after, batch);
    }
    return true;
}

static bool sample_stream_wait(bench_target *target, double *samples, size_t count, unsigned batch)
{
    if (!record_and_wait(target, target->plain_event))
        return false;
    for (size_t i = 0; i < count; i++) {
        tp_status status = TP_OK;
        uint64_t before = tp_now_ns();
        for (unsigned b = 0; b < batch && status == TP_OK; b++)
            status = tp_stream_wait_event(target->waiting_stream, target->plain_event);
        uint64_t after = tp_now_ns();
        if (status != TP_OK)
            return call_failed(target, "tp_stream_wait_event", status);
        samples[i] = per_call(before, after, batch);
    }
    tp_status status = tp_stream_synchronize(target->waiting_stream);
    if (status != TP_OK)
        return call_failed(target, "tp_stream_synchronize", status);
    return true;
}

static bool sample_elapsed(bench_target *target, double *samples, size_t count, unsigned batch)
{
    tp_status status = tp_event_record(target->timing_start, target->stream);
    if (status != TP_OK)
        return call_failed(target, "tp_event_record", status);
    if (!record_and_wait(target, target->timing_end))
        return false;
    for (size_t i = 0; i < count; i++) {
        float milliseconds = 0.0f;
        uint64_t before = tp_now_ns();
        for (unsigned b = 0; b < batch && status == TP_OK; b++)
            status = tp_event_elapsed_time(target->timing_start, target->timing_end, &milliseconds);
        uint64_t after = tp_now_ns();
        if (status != TP_OK)
            return call_failed(target, "tp_event_elapsed_time", status);
        samples[i] = per_call(before, after, batch);
    }
    return true;
}

static bool sample_create_destroy(bench_target *target, double *samples, size_t count, unsigned batch)
{
    for (size_t i = 0; i < count; i++) {
        tp_status created = TP_OK, destroyed = TP_OK;
        uint64_t before = tp_now_ns();
        for (unsigned b = 0; b < batch && destroyed == TP_OK; b++) {
            tp_event *event = NULL;
            created = tp_event_create(&event, target->device, TP_EVENT_DEFAULT);
            destroyed = created == TP_OK ? tp_event_destroy(event) : created;
        }
        uint64_t after = tp_now_ns();
        if (created != TP_OK)
            return call_failed(target, "tp_event_create", created);
        if (destroyed != TP_OK)
            return call_failed(target, "tp_event_destroy", destroyed);
        samples[i] = per_call(before, after, batch);
    }
    return true;
}

static bool sample_record_synchronize(bench_target *target, double *samples, size_t count, unsigned batch)
{
    for (size_t i = 0; i < count; i++) {
        tp_status recorded = TP_OK, reached = TP_OK;
        uint64_t before = tp_now_ns();
        for (unsigned b = 0; b < batch && reached == TP_OK; b++) {
            recorded = tp_event_record(target->plain_event, target->stream);
            reached = recorded == TP_OK ? tp_event_synchronize(target->plain_event) : recorded;
        }
        uint64_t after = tp_now_ns();
        if (recorded != TP_OK)
            return call_failed(target, "tp_event_record", recorded);
        if (reached != TP_OK)
            return call_failed(target, "tp_event_synchronize", reached);
        samples[i] = per_call(before, after, batch);
    }
    return true;
}

static const op_spec op_specs[BENCH_OP_COUNT] = {
    [BENCH_RECORD] = {"record", "record (timing off)", TP_NATIVE_RECORD, "EventRecord", sample_record},
    [BENCH_RECORD_TIMING] = {"record_timing", "record (timing on)", TP_NATIVE_RECORD_TIMING, "EventRecord",
                             sample_record_timing},
    [BENCH_QUERY] = {"query", "query (completed)", TP_NATIVE_QUERY, "EventQuery", sample_query},
    [BENCH_SYNCHRONIZE] = {"synchronize", "synchronize (completed)", TP_NATIVE_SYNCHRONIZE, "EventSynchronize",
                           sample_synchronize},
    [BENCH_STREAM_WAIT] = {"stream_wait", "stream wait", TP_NATIVE_STREAM_WAIT, "StreamWaitEvent", sample_stream_wait},
    [BENCH_ELAPSED] = {"elapsed_time", "elapsed time", TP_NATIVE_ELAPSED, "EventElapsedTime", sample_elapsed},
    [BENCH_CREATE_DESTROY] = {"create_destroy", "create + destroy", TP_NATIVE_CREATE_DESTROY, "EventCreate+Destroy",
                              sample_create_destroy},
    [BENCH_RECORD_SYNCHRONIZE] = {"record_synchronize", "record + synchronize", TP_NATIVE_RECORD_SYNCHRONIZE,
                                  "EventRecord+Synchronize", sample_record_synchronize},
};

const char *bench_op_key(bench_op op)
{
    return op_specs[op].key;
}

const char *bench_op_label(bench_op op)
{
    return op_specs[op].label;
}

tp_native_op bench_op_native(bench_op op)
{
    return op_specs[op].native;
}

const char *bench_op_native_call(bench_op op)
{
    return op_specs[op].native_call;
}

bool bench_target_sample(bench_target *target, bench_op op, double *samples, size_t count, size_t warmup,
                         unsigned batch)
{
    /* The warm-up writes into the same buffer; the timed run overwrites it. */
    size_t warmup_count = warmup < count ? warmup : count;
    if (warmup_count > 0 && !op_specs[op].sample(target, samples, warmup_count, batch))
        return false;
    return op_specs[op].sample(target, samples, count, batch);
}

/* The device string as the library resolved it: "cuda" becomes "cuda:0". */
static bool resolve_device(bench_target *target, tp_stream *stream)
{
    tp_device device;
    tp_status status = tp_stream_device(stream, &device);
    if (status != TP_OK)
        return call_failed(target, "tp_stream_device", status);
    status = tp_device_format(device, target->device, sizeof target->device);
    if (status != TP_OK)
        return call_failed(target, "tp_device_format", status);
    target->type = device.type;
    return true;
}

bool bench_target_open(bench_target *target, const char *device)
{
    memset(target, 0, sizeof *target);
    snprintf(target->device, sizeof target->device, "%s", device);

    tp_status status = tp_stream_create(&target->stream, device, 0);
    if (status != TP_OK) {
        target->stream = NULL;
        return call_failed(target, "tp_stream_create", status);
    }
    if (!resolve_device(target, target->stream))
        goto fail;
    status = tp_stream_create(&target->waiting_stream, target->device, 0);
    if (status != TP_OK) {
        call_failed(target, "tp_stream_create", status);
        goto fail;
    }
    /* Their tracks' names in --trace. */
    (void)tp_stream_set_name(target->stream, "bench: calls");
    (void)tp_stream_set_name(target->waiting_stream, "bench: waits");
    status = tp_event_create(&target->plain_event, target->device, TP_EVENT_DEFAULT);
    if (status == TP_OK)
        status = tp_event_create(&target->timing_start, target->device, TP_EVENT_TIMING);
    if (status == TP_OK)
        status = tp_event_create(&target->timing_end, target->device, TP_EVENT_TIMING);
    if (status != TP_OK) {
        call_failed(target, "tp_event_create", status);
        goto fail;
    }
    return true;

fail:;
    /* Keep the message across the clean-up. */
    char error[TOOL_ERROR_SIZE];
    memcpy(error, target->error, sizeof error);
    bench_target_close(target);
    memcpy(target->error, error, sizeof error);
    return false;
}

void bench_target_close(bench_target *target)
{
    /* Destroying with work pending is safe (rule 9); destroy order does not matter. */
    if (target->timing_end != NULL)
        tp_event_destroy(target->timing_end);
    if (target->timing_start != NULL)
        tp_event_destroy(target->timing_start);
    if (target->plain_event != NULL)
        tp_event_destroy(target->plain_event);
    if (target->waiting_stream != NULL)
        tp_stream_destroy(target->waiting_stream);
    if (target->stream != NULL)
        tp_stream_destroy(target->stream);
    memset(target, 0, sizeof *target);
}

static bool try_timer_resolution(bench_target *target, int tries, double *resolution_ns)
{
    double smallest = 0.0;
    for (int i = 0; i < tries; i++) {
        tp_status status = tp_event_record(target->timing_start, target->stream);
        if (status == TP_OK)
            status = tp_event_record(target->timing_end, target->stream);
        if (status != TP_OK)
            return call_failed(target, "tp_event_record", status);
        status = tp_event_synchronize(target->timing_end);
        if (status != TP_OK)
            return call_failed(target, "tp_event_synchronize", status);
        float milliseconds = 0.0f;
        status = tp_event_elapsed_time(target->timing_start, target->timing_end, &milliseconds);
        if (status != TP_OK)
            return call_failed(target, "tp_event_elapsed_time", status);
        double nanoseconds = (double)milliseconds * 1e6;
        if (nanoseconds > 0.0 && (smallest == 0.0 || nanoseconds < smallest))
            smallest = nanoseconds;
    }
    *resolution_ns = smallest;
    return true;
}

bool measure_timer_resolution(const char *device, int tries, double *resolution_ns, char *error, size_t error_size)
{
    bench_target target;
    bool measured = bench_target_open(&target, device) && try_timer_resolution(&target, tries, resolution_ns);
    if (!measured)
        snprintf(error, error_size, "%s", target.error);
    bench_target_close(&target);
    return measured;
}
