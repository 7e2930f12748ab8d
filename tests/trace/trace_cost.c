/*
 * What a trace costs in runtime calls (issue 52), counted by the fake GPU's runtime
 * (tests/gpu_fake/probe_calls.h), so that it is checked on every CI run without a
 * GPU and without timing anything:
 *
 *   - a traced record, wait, range push and range pop each make at most one runtime
 *     call more than untraced (the trace's one timing record: docs/timeline.md);
 *   - a traced query or synchronize makes none more;
 *   - on a stream wrapped with tp_stream_from_native, a traced record makes at
 *     most two more (its mark, and one question whether the stream captures: the
 *     backend's event_record_uncaptured asks it once for both), a range push and
 *     pop two each, and waits again on one record, which draw no flow, none more;
 *   - while a trace runs, with a range open, after traced work, and while none runs,
 *     nothing of tpevent's calls the runtime when the caller does not: no poller,
 *     no clock loop, nothing that could contend with the caller's own calls.
 *
 * Usage: tpevent_trace_cost DEVICE   (a fake GPU device; exit 77 elsewhere: no counter)
 */
#define _POSIX_C_SOURCE 200809L
#include <tpevent/tpevent.h>

#include "tests/conformance/native_runtime.h" /* fake_gpu_symbol */
#include "tests/gpu_fake/probe_calls.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define OPS 200
#define IDLE_MS 300

static const probe_calls *probes;
static int failures;

static void check_ok(tp_status status, const char *what)
{
    if (status != TP_OK) {
        fprintf(stderr, "trace_cost: %s: %s\n", what, tp_last_error());
        exit(1);
    }
}

static unsigned long calls(void)
{
    return probes->runtime_calls();
}

typedef enum op { RECORD, WAIT, RECORD_WAIT, RANGE, QUERY, SYNCHRONIZE, OP_COUNT } op;
static const struct {
    const char *name;
    unsigned traced_calls; /* traced calls per op: each may add one runtime call */
} ops[OP_COUNT] = {
    [RECORD] = {"record", 1},
    [WAIT] = {"wait (same record)", 1},
    [RECORD_WAIT] = {"record + wait", 2},
    [RANGE] = {"range push + pop", 2},
    [QUERY] = {"query", 0},
    [SYNCHRONIZE] = {"synchronize", 0},
};

typedef struct objects {
    tp_stream *stream, *waiting;
    tp_event *event;
} objects;

/* The runtime calls of OPS of op, the streams idle before and after (not counted). */
static unsigned long count_op(objects *o, op which)
{
    check_ok(tp_event_record(o->event, o->stream), "tp_event_record");
    check_ok(tp_stream_synchronize(o->stream), "tp_stream_synchronize");
    bool done = false;
    unsigned long before = calls();
    for (int i = 0; i < OPS; i++) {
        switch (which) {
        case RECORD:
            check_ok(tp_event_record(o->event, o->stream), "tp_event_record");
            break;
        case WAIT:
            check_ok(tp_stream_wait_event(o->waiting, o->event), "tp_stream_wait_event");
            break;
        case RECORD_WAIT:
            check_ok(tp_event_record(o->event, o->stream), "tp_event_record");
            check_ok(tp_stream_wait_event(o->waiting, o->event), "tp_stream_wait_event");
            break;
        case RANGE:
            check_ok(tp_range_push(o->stream, "r"), "tp_range_push");
            check_ok(tp_range_pop(o->stream), "tp_range_pop");
            break;
        case QUERY:
            check_ok(tp_event_query(o->event, &done), "tp_event_query");
            break;
        default:
            check_ok(tp_event_synchronize(o->event), "tp_event_synchronize");
            break;
        }
    }
    unsigned long made = calls() - before;
    check_ok(tp_stream_synchronize(o->stream), "tp_stream_synchronize");
    check_ok(tp_stream_synchronize(o->waiting), "tp_stream_synchronize");
    return made;
}

/* No runtime call by anyone while the caller makes none. */
static void check_idle(const char *when)
{
    unsigned long before = calls();
    struct timespec pause = {0, IDLE_MS * 1000000L};
    nanosleep(&pause, NULL);
    unsigned long made = calls() - before;
    printf("  idle %d ms %s: %lu runtime calls\n", IDLE_MS, when, made);
    if (made != 0) {
        fprintf(stderr, "FAIL: %lu runtime calls in %d ms %s, with nothing to do\n", made, IDLE_MS, when);
        failures++;
    }
}

/* A record on a stream wrapped with tp_stream_from_native (a PyTorch stream): the
 * runtime is asked whether it captures, by the record's own capture layer untraced,
 * and traced also by its mark's record, once (docs/timeline.md; it was asked twice,
 * by the trace and by the mark's record, before the backend's event_record_uncaptured).
 * Counted and held to that: one timing record and one capture question more, and as
 * much for each range push and pop. */
static void count_wrapped(objects *o, const char *device)
{
    void *native = NULL;
    tp_stream *wrapped = NULL;
    check_ok(tp_stream_native(o->stream, &native), "tp_stream_native");
    check_ok(tp_stream_from_native(&wrapped, device, native), "tp_stream_from_native");
    unsigned long made[2], waits[2], ranges[2];
    for (int traced = 0; traced < 2; traced++) {
        if (traced)
            check_ok(tp_trace_start(), "tp_trace_start");
        check_ok(tp_event_record(o->event, wrapped), "tp_event_record"); /* warm-up: the trace's pool */
        unsigned long before = calls();
        for (int i = 0; i < OPS; i++)
            check_ok(tp_event_record(o->event, wrapped), "tp_event_record");
        made[traced] = calls() - before;
        check_ok(tp_stream_synchronize(wrapped), "tp_stream_synchronize");
        /* Waits of the wrapped stream on one record of another: the first draws a flow,
         * the others order nothing new and ask nothing more than untraced. */
        check_ok(tp_event_record(o->event, o->stream), "tp_event_record");
        before = calls();
        for (int i = 0; i < OPS; i++)
            check_ok(tp_stream_wait_event(wrapped, o->event), "tp_stream_wait_event");
        waits[traced] = calls() - before;
        check_ok(tp_stream_synchronize(wrapped), "tp_stream_synchronize");
        before = calls();
        for (int i = 0; i < OPS; i++) {
            check_ok(tp_range_push(wrapped, "r"), "tp_range_push");
            check_ok(tp_range_pop(wrapped), "tp_range_pop");
        }
        ranges[traced] = calls() - before;
        check_ok(tp_stream_synchronize(wrapped), "tp_stream_synchronize");
        if (traced)
            check_ok(tp_trace_stop("/dev/null"), "tp_trace_stop");
    }
    /* One flow's worth: its mark (a question and a record). */
    unsigned long waits_allowed = waits[0] + 2;
    printf("  wait of a wrapped stream, same record, %d ops: untraced %lu runtime calls, traced %lu (allowed %lu)\n",
           OPS, waits[0], waits[1], waits_allowed);
    if (waits[1] > waits_allowed) {
        fprintf(stderr,
                "FAIL: traced waits of a wrapped stream on one record made %lu runtime calls for %d, more than "
                "%lu\n",
                waits[1], OPS, waits_allowed);
        failures++;
    }
    unsigned long allowed = made[0] + 2ul * OPS;
    printf("  record on a wrapped stream %d ops: untraced %lu runtime calls, traced %lu (allowed %lu)\n", OPS, made[0],
           made[1], allowed);
    if (made[1] > allowed) {
        fprintf(stderr, "FAIL: traced records on a wrapped stream made %lu runtime calls for %d, more than %lu\n",
                made[1], OPS, allowed);
        failures++;
    }
    unsigned long ranges_allowed = ranges[0] + 4ul * OPS;
    printf("  range push + pop on a wrapped stream %d ops: untraced %lu runtime calls, traced %lu (allowed %lu)\n", OPS,
           ranges[0], ranges[1], ranges_allowed);
    if (ranges[1] > ranges_allowed) {
        fprintf(stderr, "FAIL: traced ranges on a wrapped stream made %lu runtime calls for %d, more than %lu\n",
                ranges[1], OPS, ranges_allowed);
        failures++;
    }
    tp_stream_destroy(wrapped);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    const char *device = argv[1];
    objects o = {0};
    if (tp_stream_create(&o.stream, device, 0) != TP_OK) {
        printf("skipped: %s\n", tp_last_error());
        return 77;
    }
    probes = fake_gpu_symbol(PROBE_CALLS_FAKE_SYMBOL); /* NULL on a real GPU */
    if (!probes || !probes->runtime_calls) {
        printf("skipped: %s has no runtime call counter (only the fake GPU counts calls)\n", device);
        return 77;
    }
    check_ok(tp_stream_create(&o.waiting, device, 0), "tp_stream_create");
    check_ok(tp_event_create(&o.event, device, TP_EVENT_DEFAULT), "tp_event_create");

    unsigned long untraced[OP_COUNT];
    for (int i = 0; i < OP_COUNT; i++)
        untraced[i] = count_op(&o, (op)i);
    check_idle("with no trace");

    /* A first trace fills the trace's pools (event creation is its warm-up, not a
     * traced op's cost); the second is counted. */
    for (int trace = 0; trace < 2; trace++) {
        check_ok(tp_trace_start(), "tp_trace_start");
        if (trace == 1)
            check_idle("with a trace running, nothing traced yet");
        for (int i = 0; i < OP_COUNT; i++) {
            unsigned long traced = count_op(&o, (op)i);
            if (trace == 0)
                continue;
            unsigned long allowed = untraced[i] + (unsigned long)OPS * ops[i].traced_calls;
            printf("  %-20s %d ops: untraced %lu runtime calls, traced %lu (allowed %lu)\n", ops[i].name, OPS,
                   untraced[i], traced, allowed);
            if (traced > allowed) {
                fprintf(stderr, "FAIL: traced %s made %lu runtime calls for %d ops, more than %lu\n", ops[i].name,
                        traced, OPS, allowed);
                failures++;
            }
        }
        if (trace == 1) {
            check_idle("with a trace running after traced work");
            check_ok(tp_range_push(o.stream, "open"), "tp_range_push");
            check_idle("with a trace running and a range open");
            check_ok(tp_range_pop(o.stream), "tp_range_pop");
        }
        check_ok(tp_trace_stop("/dev/null"), "tp_trace_stop");
    }
    check_idle("after the trace stopped");
    count_wrapped(&o, device);
    tp_event_destroy(o.event);
    tp_stream_destroy(o.waiting);
    tp_stream_destroy(o.stream);
    printf(failures ? "FAILED\n" : "ok\n");
    return failures ? 1 : 0;
}
