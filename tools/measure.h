/*
 * Timing tpevent's event calls on one device with the tool's clock (clock.h): a
 * sample is `batch` calls back to back between two clock reads, its value the mean
 * per call, so that calls much shorter than the clock's step (and than a clock read)
 * are not rounded to it. batch 1: one call per sample.
 */
#ifndef TPEVENT_TOOL_MEASURE_H
#define TPEVENT_TOOL_MEASURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tpevent/tpevent.h>
#include <tpevent/tpevent_diagnostics.h> /* tp_native_op */

typedef enum bench_op {
    BENCH_RECORD = 0,         /* tp_event_record, event without timing, idle stream */
    BENCH_RECORD_TIMING,      /* tp_event_record, event with timing */
    BENCH_QUERY,              /* tp_event_query of a completed event */
    BENCH_SYNCHRONIZE,        /* tp_event_synchronize of a completed event */
    BENCH_STREAM_WAIT,        /* tp_stream_wait_event on a completed event */
    BENCH_ELAPSED,            /* tp_event_elapsed_time of two completed events */
    BENCH_CREATE_DESTROY,     /* tp_event_create + tp_event_destroy */
    BENCH_RECORD_SYNCHRONIZE, /* record on an idle stream, then synchronize */
} bench_op;
#define BENCH_OP_COUNT (BENCH_RECORD_SYNCHRONIZE + 1)

/* "record_timing": the op's key in --json output. */
const char *bench_op_key(bench_op op);
/* "record (timing on)": the op's label in the table. */
const char *bench_op_label(bench_op op);
/* The raw runtime call tp_native_sample times for the op. */
tp_native_op bench_op_native(bench_op op);
/* The runtime call's name without its prefix ("EventRecord" for cudaEventRecord). */
const char *bench_op_native_call(bench_op op);

#define TOOL_ERROR_SIZE 512

/* One device and what timing its calls needs: two streams and three events. */
typedef struct bench_target {
    char device[TP_DEVICE_STRING_MAX]; /* resolved: "cuda:0", never "cuda" */
    tp_device_type type;
    tp_stream *stream;
    tp_stream *waiting_stream;
    tp_event *plain_event;
    tp_event *timing_start;
    tp_event *timing_end;
    char error[TOOL_ERROR_SIZE]; /* why the last call on the target failed */
} bench_target;

/* Creates the streams and events on `device` ("cpu", "cuda:1"). On failure the
 * target holds nothing and target->error says why. */
bool bench_target_open(bench_target *target, const char *device);
void bench_target_close(bench_target *target);

/* Fills samples[0..count) with the op's latency per call in ns, `batch` calls per
 * sample, after `warmup` untimed samples. On failure target->error says why. */
bool bench_target_sample(bench_target *target, bench_op op, double *samples, size_t count, size_t warmup,
                         unsigned batch);

/*
 * The smallest nonzero elapsed time between two timing events recorded back to back
 * on an idle stream of `device`, over `tries` tries, in ns. *resolution_ns is 0 when
 * every try measured 0. On failure `error` says why.
 */
bool measure_timer_resolution(const char *device, int tries, double *resolution_ns, char *error, size_t error_size);

#endif /* TPEVENT_TOOL_MEASURE_H */
