/* Conformance, rule 5: synchronize blocks until the latest record is reached (sleeping
 * with TP_EVENT_BLOCKING), returns at once if never recorded, and the timed waits
 * answer TP_ERR_NOT_READY when their time runs out. */
#include "support.h"

#include <stdint.h>

/* Records an event behind a closed gate, has another thread open the gate later,
 * and checks that synchronize returned only after the gated work ran. */
static void check_synchronize_waits_for_gate(const char *device, unsigned flags)
{
    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(device);
    tp_event *event = new_event(device, flags);

    gate_launch(&g, stream);
    CHECK_OK(tp_event_record(event, stream));
    gate_opener opener;
    gate_open_later(&opener, &g, 100);
    CHECK_OK(tp_event_synchronize(event));
    CHECK(atomic_load(&opener.opened));
    CHECK(gate_passed(&g) == 1);
    CHECK(event_is_done(event));
    gate_opener_join(&opener);

    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
}

TEST(rule05_synchronize_waits_for_gated_work)
{
    check_synchronize_waits_for_gate(env->device, TP_EVENT_DEFAULT);
    return 0;
}

TEST(rule05_blocking_synchronize_waits_for_gated_work)
{
    check_synchronize_waits_for_gate(env->device, TP_EVENT_BLOCKING);
    return 0;
}

TEST(rule05_timing_synchronize_waits_for_gated_work)
{
    check_synchronize_waits_for_gate(env->device, TP_EVENT_TIMING | TP_EVENT_BLOCKING);
    return 0;
}

typedef struct sync_call {
    tp_event *event;
    tp_status status;
} sync_call;

static void synchronize_once(void *arg)
{
    sync_call *call = arg;
    call->status = tp_event_synchronize(call->event);
}

static void check_synchronize_unrecorded_returns(const char *device, unsigned flags)
{
    tp_event *event = new_event(device, flags);
    sync_call call = {event, TP_ERR_BACKEND};
    CHECK(call_returns_within(synchronize_once, &call, EVENTUALLY_SECONDS));
    CHECK_OK(call.status);
    CHECK_OK(tp_event_destroy(event));
}

TEST(rule05_synchronize_never_recorded_returns)
{
    check_synchronize_unrecorded_returns(env->device, TP_EVENT_DEFAULT);
    return 0;
}

TEST(rule05_blocking_synchronize_never_recorded_returns)
{
    check_synchronize_unrecorded_returns(env->device, TP_EVENT_BLOCKING);
    return 0;
}

TEST(rule05_blocking_synchronize_sleeps)
{
    /* Sleeping, not spinning: over a wait of 300 ms a sleeping thread uses next to
     * no CPU time, a spinning one most of it (or, on a loaded machine, what share
     * it gets). A bound on CPU time, not on wall time: load cannot break it. */
    enum { wait_ms = 300 };
    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_BLOCKING);

    gate_launch(&g, stream);
    CHECK_OK(tp_event_record(event, stream));
    gate_opener opener;
    gate_open_later(&opener, &g, wait_ms);
    double cpu_before = thread_cpu_seconds();
    double wall_before = monotonic_seconds();
    CHECK_OK(tp_event_synchronize(event));
    double cpu_used = thread_cpu_seconds() - cpu_before;
    double wall_used = monotonic_seconds() - wall_before;
    CHECK(gate_passed(&g) == 1);
    gate_opener_join(&opener);
    if (cpu_used > 0.1 * wall_used)
        check_failed(__FILE__, __LINE__, "blocking synchronize used %.0f ms of CPU over %.0f ms of waiting",
                     cpu_used * 1e3, wall_used * 1e3);

    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
    return 0;
}

enum { sync_threads = 6 };

static void *synchronize_thread(void *arg)
{
    sync_call *call = arg;
    call->status = tp_event_synchronize(call->event);
    return NULL;
}

TEST(rule05_many_threads_synchronize_one_event)
{
    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_BLOCKING);

    gate_launch(&g, stream);
    CHECK_OK(tp_event_record(event, stream));
    pthread_t threads[sync_threads];
    sync_call calls[sync_threads];
    for (int i = 0; i < sync_threads; i++) {
        calls[i] = (sync_call){event, TP_ERR_BACKEND};
        CHECK(pthread_create(&threads[i], NULL, synchronize_thread, &calls[i]) == 0);
    }
    sleep_ms(50);
    gate_open(&g);
    for (int i = 0; i < sync_threads; i++) {
        CHECK(pthread_join(threads[i], NULL) == 0);
        CHECK_OK(calls[i].status);
    }
    CHECK(gate_passed(&g) == 1);

    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
    return 0;
}

/* Timed synchronizes (tp_event_synchronize_for, tp_stream_synchronize_for): the
 * time runs out on gated work with TP_ERR_NOT_READY and nothing else changes. */

static void check_synchronize_for_times_out(const char *device, unsigned flags)
{
    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(device);
    tp_event *event = new_event(device, flags);

    gate_launch(&g, stream);
    CHECK_OK(tp_event_record(event, stream));
    double before = monotonic_seconds();
    CHECK_STATUS(tp_event_synchronize_for(event, 50 * 1000000LL), TP_ERR_NOT_READY);
    double waited = monotonic_seconds() - before;
    CHECK(waited >= 0.049);
    CHECK_ERROR_MENTIONS("time ran out");
    CHECK_STATUS(tp_event_synchronize_for(event, 0), TP_ERR_NOT_READY);
    CHECK_STATUS(tp_stream_synchronize_for(stream, 20 * 1000000LL), TP_ERR_NOT_READY);
    CHECK_ERROR_MENTIONS("time ran out");
    CHECK(!event_is_done(event));
    CHECK(gate_passed(&g) == 0);

    /* The record still completes, and a timed wait sees it. */
    gate_opener opener;
    gate_open_later(&opener, &g, 50);
    CHECK_OK(tp_event_synchronize_for(event, (int64_t)(EVENTUALLY_SECONDS * 1e9)));
    CHECK(atomic_load(&opener.opened));
    CHECK(gate_passed(&g) == 1);
    CHECK(event_is_done(event));
    CHECK_OK(tp_stream_synchronize_for(stream, (int64_t)(EVENTUALLY_SECONDS * 1e9)));
    CHECK_OK(tp_event_synchronize(event));
    gate_opener_join(&opener);

    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
}

TEST(rule05_synchronize_for_times_out_and_record_completes)
{
    check_synchronize_for_times_out(env->device, TP_EVENT_DEFAULT);
    return 0;
}

TEST(rule05_blocking_synchronize_for_times_out_and_record_completes)
{
    check_synchronize_for_times_out(env->device, TP_EVENT_BLOCKING | TP_EVENT_TIMING);
    return 0;
}

/* The device-wide timed wait: the time runs out on a gated stream of the device,
 * the work goes on, and a later wait sees it done. */
TEST(rule05_device_synchronize_for_times_out_and_work_completes)
{
    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(env->device);
    gate_launch(&g, stream);
    double before = monotonic_seconds();
    CHECK_STATUS(tp_device_synchronize_for(env->device, 20 * 1000000LL), TP_ERR_NOT_READY);
    CHECK(monotonic_seconds() - before >= 0.019);
    CHECK_ERROR_MENTIONS("time ran out");
    CHECK(gate_passed(&g) == 0);
    gate_opener opener;
    gate_open_later(&opener, &g, 20);
    CHECK_OK(tp_device_synchronize_for(env->device, (int64_t)(EVENTUALLY_SECONDS * 1e9)));
    CHECK(gate_passed(&g) == 1);
    gate_opener_join(&opener);
    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
    return 0;
}

TEST(rule05_synchronize_for_reached_or_never_recorded_returns_at_once)
{
    tp_stream *stream = new_stream(env->device);
    tp_event *never = new_event(env->device, TP_EVENT_DEFAULT);
    tp_event *reached = new_event(env->device, TP_EVENT_BLOCKING);
    CHECK_OK(tp_event_synchronize_for(never, 0));
    CHECK_OK(tp_event_synchronize_for(never, INT64_MAX));
    CHECK_OK(tp_event_record(reached, stream));
    CHECK_OK(tp_event_synchronize(reached));
    /* The stream's own idleness may trail its last record's by a moment (the fake
     * runtime counts the record done after it marks it reached). */
    CHECK_OK(tp_stream_synchronize(stream));
    double before = monotonic_seconds();
    CHECK_OK(tp_event_synchronize_for(reached, 0));
    CHECK_OK(tp_event_synchronize_for(reached, INT64_MAX));
    CHECK_OK(tp_stream_synchronize_for(stream, 0));
    CHECK_OK(tp_stream_synchronize_for(stream, INT64_MAX));
    CHECK(monotonic_seconds() - before < 1.0);
    CHECK_OK(tp_event_destroy(reached));
    CHECK_OK(tp_event_destroy(never));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(rule05_synchronize_for_refuses_negative_timeout_and_null)
{
    tp_stream *stream = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);
    CHECK_STATUS(tp_event_synchronize_for(event, -1), TP_ERR_INVALID_ARGUMENT);
    CHECK_ERROR_MENTIONS("negative");
    CHECK_STATUS(tp_event_synchronize_for(event, INT64_MIN), TP_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(tp_stream_synchronize_for(stream, -1), TP_ERR_INVALID_ARGUMENT);
    CHECK_ERROR_MENTIONS("negative");
    CHECK_STATUS(tp_event_synchronize_for(NULL, 0), TP_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(tp_stream_synchronize_for(NULL, 0), TP_ERR_INVALID_ARGUMENT);
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}
