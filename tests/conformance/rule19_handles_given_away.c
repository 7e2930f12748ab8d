/* Conformance, rule 19: a native stream whose handle was given out outlives its tp
 * stream, pooled for later streams of the same device and priority, which get it
 * only once it is idle; a native stream never given out is destroyed with its
 * stream. What torch's caching host allocator does (a record on every stream a
 * pinned block was used on, when it frees the block) is done here through the
 * runtime itself, after tp_stream_destroy. */
#include "native_stream.h"
#include "support.h"

#include <stdio.h>

#define REQUIRE_NATIVE_STREAMS(env, name)                                      \
    native_stream_runtime name;                                                \
    do {                                                                       \
        tp_stream *probe_ = new_stream((env)->device); /* loads the backend */ \
        CHECK_OK(tp_stream_destroy(probe_));                                   \
        if (!native_stream_find((env)->device, &name))                         \
            return TEST_SKIP;                                                  \
    } while (0)

static void *native_of(tp_stream *stream)
{
    void *native = NULL;
    CHECK_OK(tp_stream_native(stream, &native));
    CHECK(native != NULL);
    return native;
}

static tp_stream *new_stream_of_priority(const char *device, int priority)
{
    tp_stream *stream = NULL;
    CHECK_OK(tp_stream_create(&stream, device, priority));
    return stream;
}

static void record_works(const native_stream_runtime *rt, void *native)
{
    int e = rt->calls.record_and_wait(native);
    if (e != 0)
        printf("%s: a record on the native stream failed with %d (destroyed?)\n", rt->runtime, e);
    CHECK(e == 0);
}

/* Until every piece of work on the native stream is done, as seen by tpevent
 * through a wrapper (which leaves the native stream to its owner). */
static void native_synchronize(const char *device, void *native)
{
    tp_stream *wrapper = NULL;
    CHECK_OK(tp_stream_from_native(&wrapper, device, native));
    CHECK_OK(tp_stream_synchronize(wrapper));
    CHECK_OK(tp_stream_destroy(wrapper));
}

/* The device's index in the runtime's numbering: "cuda:0" is 0. */
static int device_index(const char *device)
{
    tp_device parsed;
    CHECK_OK(tp_device_parse(device, &parsed));
    return parsed.index;
}

/* A record through the runtime on the handle, once its stream is destroyed (with
 * work still pending at the destroy, rule 9), succeeds, and the record waits for
 * that work: it is the same queue. */
TEST(rule19_given_out_native_stream_outlives_its_stream)
{
    REQUIRE_NATIVE_STREAMS(env, rt);
    tp_stream *stream = new_stream(env->device);
    void *native = native_of(stream);
    gate g;
    gate_init(&g);
    gate_launch(&g, stream);
    CHECK_OK(tp_stream_destroy(stream));
    gate_opener opener;
    gate_open_later(&opener, &g, 50);
    record_works(&rt, native); /* after the gate: it waits for it */
    CHECK(atomic_load(&opener.opened));
    gate_opener_join(&opener);
    CHECK(gate_passed(&g) == 1);
    record_works(&rt, native); /* and again, idle */
    gate_destroy(&g);
    return 0;
}

/* A later stream of the same priority gets the pooled native stream, but only
 * once its work (here a host function, blocked) is done; one of another priority
 * never gets it. */
TEST(rule19_pooled_native_stream_is_reused_only_once_idle)
{
    REQUIRE_NATIVE_STREAMS(env, rt);
    const char *d = env->device;
    int least = 0, greatest = 0;
    CHECK_OK(tp_stream_priority_range(d, &least, &greatest));
    tp_stream *first = new_stream_of_priority(d, least);
    void *pooled = native_of(first);
    gate g;
    gate_init(&g);
    gate_launch(&g, first);
    CHECK(gate_entered_within(&g, 1, EVENTUALLY_SECONDS));
    CHECK_OK(tp_stream_destroy(first));

    tp_stream *while_busy = new_stream_of_priority(d, least);
    CHECK(native_of(while_busy) != pooled); /* its work is still pending */
    CHECK(stream_is_idle(while_busy));
    gate_open(&g);
    native_synchronize(d, pooled);
    if (greatest != least) {
        tp_stream *other = new_stream_of_priority(d, greatest);
        CHECK(native_of(other) != pooled);
        CHECK_OK(tp_stream_destroy(other));
    }
    tp_stream *later = new_stream_of_priority(d, least);
    CHECK(native_of(later) == pooled);
    int priority = 1;
    CHECK_OK(tp_stream_priority(later, &priority));
    CHECK(priority == least);
    /* It starts clean: its own records, waits and host functions work. */
    tp_event *event = new_event(d, TP_EVENT_DEFAULT);
    atomic_int flag = 0;
    CHECK_OK(tp_stream_launch_host_fn(later, flag_host_fn, &flag));
    CHECK_OK(tp_event_record(event, later));
    CHECK_OK(tp_event_synchronize(event));
    CHECK(atomic_load(&flag) == 1);
    CHECK_OK(tp_stream_wait_event(while_busy, event));
    CHECK_OK(tp_stream_synchronize(while_busy));
    record_works(&rt, pooled);
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(later));
    CHECK_OK(tp_stream_destroy(while_busy));
    gate_destroy(&g);
    return 0;
}

/* On the fake GPU, which counts its live native streams: a stream whose handle was
 * never given out takes its native stream with it; a given-out one leaves it in the
 * pool, and the next stream takes it from there instead of creating one. */
TEST(rule19_native_stream_never_given_out_is_destroyed)
{
    REQUIRE_NATIVE_STREAMS(env, rt);
    int index = device_index(env->device);
    int before = rt.calls.live_streams(index);
    if (before < 0) {
        printf("skipped: the %s cannot count its native streams\n", rt.runtime);
        return TEST_SKIP;
    }
    tp_stream *kept = new_stream(env->device);
    CHECK(rt.calls.live_streams(index) == before + 1);
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);
    CHECK_OK(tp_event_record(event, kept));
    CHECK_OK(tp_stream_destroy(kept));
    CHECK(rt.calls.live_streams(index) == before);

    tp_stream *given = new_stream(env->device);
    void *native = native_of(given);
    CHECK_OK(tp_event_record(event, given));
    CHECK_OK(tp_event_synchronize(event));
    CHECK_OK(tp_stream_destroy(given));
    CHECK(rt.calls.live_streams(index) == before + 1);
    record_works(&rt, native);
    native_synchronize(env->device, native);
    tp_stream *again = new_stream(env->device);
    CHECK(rt.calls.live_streams(index) == before + 1);
    CHECK(native_of(again) == native);
    CHECK_OK(tp_stream_destroy(again));
    CHECK(rt.calls.live_streams(index) == before + 1);
    CHECK_OK(tp_event_destroy(event));
    return 0;
}

/* On every backend: a new stream, made while a destroyed stream's work is pending,
 * has nothing ahead of it (rule 12: no order without an event). */
TEST(rule19_new_stream_has_no_work_of_a_destroyed_one)
{
    const char *d = env->device;
    tp_stream *first = new_stream(d);
    void *native = NULL;
    CHECK_OK(tp_stream_native(first, &native));
    gate g;
    gate_init(&g);
    gate_launch(&g, first);
    CHECK_OK(tp_stream_destroy(first));
    for (int i = 0; i < 4; i++) {
        tp_stream *stream = new_stream(d);
        CHECK_OK(tp_stream_native(stream, &native));
        CHECK(stream_is_idle(stream));
        tp_event *event = new_event(d, TP_EVENT_DEFAULT);
        CHECK_OK(tp_event_record(event, stream));
        CHECK(event_done_within(event, EVENTUALLY_SECONDS));
        CHECK_OK(tp_event_destroy(event));
        CHECK_OK(tp_stream_destroy(stream));
    }
    gate_open(&g);
    double deadline = monotonic_seconds() + EVENTUALLY_SECONDS;
    while (gate_passed(&g) < 1 && monotonic_seconds() < deadline)
        sleep_ms(1);
    CHECK(gate_passed(&g) == 1);
    sleep_ms(10); /* out of gate_host_fn, which still holds the gate's lock as it returns */
    gate_destroy(&g);
    return 0;
}

/* Rule 17 with rule 19: a pooled native stream that is still held (tp_stream_hold,
 * not released) is not taken by a later stream; once released and idle, it is. */
TEST(rule19_held_pooled_native_stream_is_reused_only_once_released)
{
    REQUIRE_NATIVE_STREAMS(env, rt);
    const char *d = env->device;
    int least = 0, greatest = 0;
    CHECK_OK(tp_stream_priority_range(d, &least, &greatest));
    tp_stream *first = new_stream_of_priority(d, least);
    void *pooled = native_of(first);
    tp_hold *hold = NULL;
    CHECK_OK(tp_stream_hold(first, INT64_MAX, &hold));
    CHECK_OK(tp_stream_destroy(first));

    tp_stream *while_held = new_stream_of_priority(d, least);
    CHECK(native_of(while_held) != pooled);
    CHECK_OK(tp_hold_release(hold));
    native_synchronize(d, pooled);
    tp_stream *later = new_stream_of_priority(d, least);
    CHECK(native_of(later) == pooled);
    record_works(&rt, pooled);
    CHECK_OK(tp_stream_destroy(later));
    CHECK_OK(tp_stream_destroy(while_held));
    return 0;
}
