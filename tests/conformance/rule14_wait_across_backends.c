/* Conformance, rule 14: waits across backends never block a runtime's thread;
 * interprocess events are refused; many waits on one stream are released in turn;
 * exit with waits held for good ends; the wait mechanism is reported, and the one
 * a pair's wait used (the device's or the host's, and why). */
#include "across_backends.h"

#include <tpevent/tpevent_diagnostics.h> /* tp_device_wait_mechanism, tp_wait_across_mechanism */

#include <stdio.h>
#include <stdlib.h>

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

/* Each way where the event's backend has interprocess events (OpenCL has none: a
 * GPU's or the CPU's interprocess event waited on by an OpenCL stream is tested). */
TEST(rule14_across_backends_interprocess_event_is_refused)
{
    REQUIRE_OTHER_BACKEND(env, other);
    bool other_ipc = ipc_supported(other, false);
    bool device_ipc = ipc_supported(env->device, !other_ipc); /* says why where neither has them */
    if (!device_ipc && !other_ipc)
        return TEST_SKIP;
    if (other_ipc)
        interprocess_refused(other, env->device, TP_EVENT_INTERPROCESS);
    if (device_ipc)
        interprocess_refused(env->device, other, TP_EVENT_INTERPROCESS);
    return 0;
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

/* A wait across backends takes the device's path where both drivers have one (the
 * record exported as a timeline semaphore that the stream's queue waits on: Vulkan's
 * records, CUDA's streams), else the host's; either way the later work waits for the
 * record. The test says which it used, as "wait mechanism <event> -> <stream>: ..."
 * (scripts/gpu-check.sh gathers those lines). Lavapipe's answer to the capability
 * query is no: there the host path is taken, naming the query. */
static void waits_and_says_how(const char *event_device, const char *stream_device, unsigned flags)
{
    char how[1024] = "";
    CHECK_OK(tp_wait_across_mechanism(event_device, stream_device, how, sizeof how));
    printf("wait mechanism %s -> %s: %s\n", event_device, stream_device, how);
    fflush(stdout);
    CHECK(strncmp(how, "device: ", 8) == 0 || strncmp(how, "host: ", 6) == 0);
    char name[256] = "";
    CHECK_OK(tp_device_name(event_device, name, sizeof name));
    if (strncmp(event_device, "vulkan", 6) == 0 && strstr(name, "llvmpipe") != NULL) {
        CHECK(strncmp(how, "host: ", 6) == 0);
        CHECK_CONTAINS(how, "vkGetPhysicalDeviceExternalSemaphoreProperties: a timeline semaphore is not exportable");
    }
    across a;
    across_make(&a, event_device, stream_device, flags);
    CHECK_OK(tp_event_wait(a.event, a.waiting));
    CHECK_OK(tp_event_record(a.after, a.waiting));
    CHECK(event_pending_for(a.after, 100));
    CHECK(event_pending_for(a.event, 0)); /* the gate still holds the record */
    across_finish(&a);                    /* opens the gate: the later work then runs */
}

TEST(rule14_across_backends_wait_holds_later_work_and_says_how)
{
    BOTH_WAYS(env, waits_and_says_how, TP_EVENT_DEFAULT);
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
    expect_child_exits_with_peer(env->device, env->peer, "rule14_across_backends_exit_with_waits_held_forever",
                                 ACROSS_EXIT_ENV, ACROSS_EXIT_STATUS, 60.0);
    return 0;
}

/* tpevent devices reports what holds a stream of each device in such a wait. */
TEST(rule14_wait_mechanism_is_reported)
{
    char text[256] = "";
    CHECK_OK(tp_device_wait_mechanism(env->device, text, sizeof text));
    CHECK(text[0] != '\0');
    /* The CPU and Vulkan: a host function on the stream's own worker blocks. */
    if (strncmp(env->device, "cpu", 3) == 0 || strncmp(env->device, "vulkan", 6) == 0) {
        CHECK(strstr(text, "worker") != NULL);
        return 0;
    }
    if (strncmp(env->device, "opencl", 6) == 0) {
        CHECK(strncmp(text, "user events", 11) == 0);
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
