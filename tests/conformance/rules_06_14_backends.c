/* Conformance, rules 6, 9 and 14 across backends: a stream of one backend waits on
 * a record of another (core/wait_across.c). Each test runs both ways: a stream of
 * the device under test waiting on an event of the other backend, then the
 * reverse (other_backend: the CPU for a GPU device; a usable GPU for a CPU device,
 * else the test skips).
 *
 * Progress on the waiting stream is seen through records on it, never host
 * functions: where a GPU device falls back on the runtime's host functions (the
 * "fake-runtime-host-fns" and TPEVENT_GPU_WAIT=host-fn variants), a wait holds the
 * runtime's one callback thread, and a host function queued behind it would show
 * nothing but that. The record waited for is held back by a gate (a host
 * function) on a stream of the event's backend. */
#include "support.h"

#include <tpevent/tpevent_diagnostics.h> /* tp_device_wait_mechanism */

#include <stdio.h>
#include <stdlib.h>

/* The test body: check(event_device, stream_device, ...) both ways, a stream of
 * the device under test waiting on the other backend's event, then the reverse. */
#define BOTH_WAYS(env, check, ...)                                                                                \
    do {                                                                                                          \
        const char *other_ = other_backend((env)->device);                                                        \
        if (!other_)                                                                                              \
            return TEST_SKIP;                                                                                     \
        check(other_, (env)->device, __VA_ARGS__);                                                                \
        check((env)->device, other_, __VA_ARGS__);                                                                \
        return 0;                                                                                                 \
    } while (0)

/* A record of `event_device`, pending behind a closed gate, and a stream of
 * `stream_device` to wait on it. */
typedef struct across {
    gate gate;
    tp_stream *source; /* of event_device, gated */
    tp_stream *waiting; /* of stream_device */
    tp_event *event;   /* of event_device, recorded on source behind the gate */
    tp_event *after;   /* of stream_device: recorded on waiting after the wait */
} across;

static void across_make(across *a, const char *event_device, const char *stream_device, unsigned flags)
{
    gate_init(&a->gate);
    a->source = new_stream(event_device);
    a->waiting = new_stream(stream_device);
    a->event = new_event(event_device, flags);
    a->after = new_event(stream_device, TP_EVENT_DEFAULT);
    gate_launch(&a->gate, a->source);
    CHECK_OK(tp_event_record(a->event, a->source));
}

/* Opens the gate (if not yet), then checks the waiting stream goes on, and frees
 * whatever is left. */
static void across_finish(across *a)
{
    gate_open(&a->gate);
    if (a->after) {
        CHECK(event_done_within(a->after, EVENTUALLY_SECONDS));
        CHECK_OK(tp_event_destroy(a->after));
    }
    if (a->waiting) {
        CHECK_OK(tp_stream_synchronize(a->waiting));
        CHECK_OK(tp_stream_destroy(a->waiting));
    }
    if (a->source) {
        CHECK_OK(tp_stream_synchronize(a->source));
        CHECK_OK(tp_stream_destroy(a->source));
    }
    if (a->event)
        CHECK_OK(tp_event_destroy(a->event));
    gate_destroy(&a->gate);
}

/* Work after the wait waits for the record, and goes on once it is reached. */
static void later_work_waits(const char *event_device, const char *stream_device, unsigned flags)
{
    across a;
    across_make(&a, event_device, stream_device, flags);
    CHECK_OK(tp_event_wait(a.event, a.waiting));
    CHECK_OK(tp_event_record(a.after, a.waiting));
    CHECK(event_pending_for(a.after, 100));
    CHECK(!stream_is_idle(a.waiting));
    across_finish(&a);
}

TEST(rule06_across_backends_later_work_waits_for_the_record)
{
    BOTH_WAYS(env, later_work_waits, TP_EVENT_DEFAULT);
}

/* With TP_EVENT_BLOCKING the waiting side sleeps instead of spinning; the wait
 * means the same. */
TEST(rule06_across_backends_blocking_event_later_work_waits)
{
    BOTH_WAYS(env, later_work_waits, TP_EVENT_BLOCKING);
}

/* The wait is for the record that was latest at the call: recording the event
 * again, on an idle stream, where it is reached at once, releases nothing. */
static void rerecord_changes_nothing(const char *event_device, const char *stream_device, unsigned flags)
{
    across a;
    across_make(&a, event_device, stream_device, flags);
    tp_stream *idle = new_stream(event_device);
    CHECK_OK(tp_event_wait(a.event, a.waiting));
    CHECK_OK(tp_event_record(a.event, idle));
    CHECK_OK(tp_event_synchronize(a.event));
    CHECK_OK(tp_event_record(a.after, a.waiting));
    CHECK(event_pending_for(a.after, 100));
    across_finish(&a);
    CHECK_OK(tp_stream_destroy(idle));
}

TEST(rule06_across_backends_rerecord_does_not_change_the_wait)
{
    BOTH_WAYS(env, rerecord_changes_nothing, TP_EVENT_DEFAULT);
}

/* Never recorded, or reached already (`reached`): nothing to wait for; the
 * stream is not held. */
static void nothing_to_wait_for(const char *event_device, const char *stream_device, bool reached)
{
    tp_stream *source = new_stream(event_device);
    tp_stream *waiting = new_stream(stream_device);
    tp_event *event = new_event(event_device, TP_EVENT_DEFAULT);
    tp_event *after = new_event(stream_device, TP_EVENT_DEFAULT);
    if (reached) {
        CHECK_OK(tp_event_record(event, source));
        CHECK_OK(tp_event_synchronize(event));
    }
    CHECK_OK(tp_event_wait(event, waiting));
    CHECK_OK(tp_stream_wait_event(waiting, event));
    CHECK_OK(tp_event_record(after, waiting));
    CHECK(event_done_within(after, EVENTUALLY_SECONDS));
    CHECK_OK(tp_stream_synchronize(waiting));
    CHECK_OK(tp_event_destroy(after));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(waiting));
    CHECK_OK(tp_stream_destroy(source));
}

TEST(rule06_across_backends_never_recorded_is_a_noop)
{
    BOTH_WAYS(env, nothing_to_wait_for, false);
}

TEST(rule06_across_backends_reached_record_is_a_noop)
{
    BOTH_WAYS(env, nothing_to_wait_for, true);
}

/* Rule 9: the event, then the waiting stream, then the event's stream destroyed
 * with the wait pending; the gate opens afterwards: nothing crashes, the work
 * recorded after the wait completes, and both devices synchronize. */
static void destroyed_while_pending(const char *event_device, const char *stream_device, unsigned flags)
{
    across a;
    across_make(&a, event_device, stream_device, flags);
    CHECK_OK(tp_event_wait(a.event, a.waiting));
    CHECK_OK(tp_event_record(a.after, a.waiting));
    CHECK_OK(tp_event_destroy(a.event));
    a.event = NULL;
    CHECK_OK(tp_stream_destroy(a.waiting));
    a.waiting = NULL;
    CHECK_OK(tp_stream_destroy(a.source));
    a.source = NULL;
    CHECK(event_pending_for(a.after, 50));
    gate_open(&a.gate);
    CHECK(event_done_within(a.after, EVENTUALLY_SECONDS));
    CHECK_OK(tp_device_synchronize(stream_device));
    CHECK_OK(tp_device_synchronize(event_device));
    across_finish(&a);
}

TEST(rule09_across_backends_destroy_event_and_streams_with_wait_pending)
{
    BOTH_WAYS(env, destroyed_while_pending, TP_EVENT_DEFAULT);
}

/* Interprocess events are refused across backends, recorded or not, pending or
 * reached, with a message that says so; the stream is left as it was. */
static void interprocess_refused(const char *event_device, const char *stream_device, unsigned flags)
{
    across a;
    across_make(&a, event_device, stream_device, flags);
    CHECK_STATUS(tp_event_wait(a.event, a.waiting), TP_ERR_UNSUPPORTED);
    CHECK_ERROR_MENTIONS("interprocess");
    CHECK_STATUS(tp_stream_wait_event(a.waiting, a.event), TP_ERR_UNSUPPORTED);
    tp_event *unrecorded = new_event(event_device, flags);
    CHECK_STATUS(tp_event_wait(unrecorded, a.waiting), TP_ERR_UNSUPPORTED);
    CHECK_OK(tp_event_destroy(unrecorded));
    CHECK_OK(tp_event_record(a.after, a.waiting));
    CHECK(event_done_within(a.after, EVENTUALLY_SECONDS)); /* not held */
    across_finish(&a);
}

TEST(rule14_across_backends_interprocess_event_is_refused)
{
    BOTH_WAYS(env, interprocess_refused, TP_EVENT_INTERPROCESS);
}

/* tp_stream_wait_stream across backends: later work waits for the other stream's
 * work so far (an event of its backend, through the same path). */
static void wait_stream_waits(const char *other_device, const char *stream_device, unsigned after_flags)
{
    gate g;
    gate_init(&g);
    tp_stream *other = new_stream(other_device);
    tp_stream *waiting = new_stream(stream_device);
    tp_event *after = new_event(stream_device, after_flags);
    gate_launch(&g, other);
    CHECK_OK(tp_stream_wait_stream(waiting, other));
    CHECK_OK(tp_event_record(after, waiting));
    CHECK(event_pending_for(after, 100));
    gate_open(&g);
    CHECK(event_done_within(after, EVENTUALLY_SECONDS));
    CHECK_OK(tp_stream_synchronize(other));
    CHECK_OK(tp_event_destroy(after));
    CHECK_OK(tp_stream_destroy(waiting));
    CHECK_OK(tp_stream_destroy(other));
    gate_destroy(&g);
}

TEST(rule14_across_backends_stream_waits_for_stream)
{
    BOTH_WAYS(env, wait_stream_waits, TP_EVENT_DEFAULT);
}

/* Many waits pending at once on one stream, each released in turn: holds do not
 * share a counter, and a counter taken again continues from its value. The gates
 * are on one stream, so that they reach the runtime's one callback thread in order
 * where host functions go through it. */
static void many_waits(const char *event_device, const char *stream_device, unsigned flags)
{
    enum { WAITS = 8 };
    gate gates[WAITS];
    tp_event *events[WAITS], *marks[WAITS];
    tp_stream *source = new_stream(event_device);
    tp_stream *waiting = new_stream(stream_device);
    for (int i = 0; i < WAITS; i++) {
        gate_init(&gates[i]);
        events[i] = new_event(event_device, flags);
        marks[i] = new_event(stream_device, TP_EVENT_DEFAULT);
        gate_launch(&gates[i], source);
        CHECK_OK(tp_event_record(events[i], source));
        CHECK_OK(tp_event_wait(events[i], waiting));
        CHECK_OK(tp_event_record(marks[i], waiting));
    }
    for (int i = 0; i < WAITS; i++) {
        CHECK(event_pending_for(marks[i], 20));
        gate_open(&gates[i]);
        CHECK(event_done_within(marks[i], EVENTUALLY_SECONDS));
    }
    CHECK_OK(tp_stream_synchronize(waiting));
    CHECK_OK(tp_stream_synchronize(source));
    for (int i = 0; i < WAITS; i++) {
        CHECK_OK(tp_event_destroy(marks[i]));
        CHECK_OK(tp_event_destroy(events[i]));
        gate_destroy(&gates[i]);
    }
    CHECK_OK(tp_stream_destroy(waiting));
    CHECK_OK(tp_stream_destroy(source));
}

TEST(rule14_across_backends_many_waits_released_in_order)
{
    BOTH_WAYS(env, many_waits, TP_EVENT_DEFAULT);
}

/*
 * Exit with waits across backends held for good (rules 9 and 14 at exit): a child
 * process leaves, both ways, a stream waiting on a record behind a gate that never
 * opens (and a second waiting stream destroyed with its wait pending), then calls
 * exit(). It must end, with its own status: no GPU stream stays held (the counters
 * are raised, the gates opened) and no thread tpevent blocked holds the exit up.
 */
#define ACROSS_EXIT_ENV "TPEVENT_TEST_ACROSS_EXIT_CHILD"
#define ACROSS_EXIT_STATUS 43

/* What the child leaves held: static, so that it is still reachable while exit
 * runs (the leak checker looks then). */
typedef struct held_forever {
    gate never;
    tp_stream *source, *waiting;
    tp_event *event, *after;
} held_forever;

static void hold_forever(const char *event_device, const char *stream_device, held_forever *h)
{
    gate_init(&h->never);
    h->source = new_stream(event_device);
    h->waiting = new_stream(stream_device);
    tp_stream *destroyed = new_stream(stream_device);
    h->event = new_event(event_device, TP_EVENT_DEFAULT);
    h->after = new_event(stream_device, TP_EVENT_DEFAULT);
    gate_launch(&h->never, h->source);
    CHECK_OK(tp_event_record(h->event, h->source));
    CHECK_OK(tp_event_wait(h->event, h->waiting));
    CHECK_OK(tp_event_wait(h->event, destroyed));
    CHECK_OK(tp_stream_destroy(destroyed));
    CHECK_OK(tp_event_record(h->after, h->waiting));
    CHECK(event_pending_for(h->after, 20));
}

static _Noreturn void across_exit_child(const char *device, const char *other)
{
    static held_forever held[2];
    hold_forever(other, device, &held[0]);
    hold_forever(device, other, &held[1]);
    printf("ready\n");
    fflush(stdout);
    exit(ACROSS_EXIT_STATUS);
}

TEST(rule14_across_backends_exit_with_waits_held_forever)
{
    REQUIRE_OTHER_BACKEND(env, other);
    if (getenv(ACROSS_EXIT_ENV) != NULL)
        across_exit_child(env->device, other);
    expect_child_exits(env->device, "rule14_across_backends_exit_with_waits_held_forever", ACROSS_EXIT_ENV,
                       ACROSS_EXIT_STATUS, 60.0);
    return 0;
}

/* tpevent devices reports what holds a stream of each device in such a wait. */
TEST(rule14_wait_mechanism_is_reported)
{
    char text[256] = "";
    CHECK_OK(tp_device_wait_mechanism(env->device, text, sizeof text));
    CHECK(text[0] != '\0');
    if (strncmp(env->device, "cpu", 3) == 0) {
        CHECK(strstr(text, "worker") != NULL);
        return 0;
    }
    const char *forced = getenv("TPEVENT_GPU_WAIT");
    if (forced && strcmp(forced, "host-fn") == 0)
        CHECK(strstr(text, "fallback: forced by TPEVENT_GPU_WAIT=host-fn") != NULL);
    else
        CHECK(strncmp(text, "stream memory operations", 24) == 0 || strstr(text, "fallback: ") != NULL);
    printf("%s: %s\n", env->device, text);
    return 0;
}
