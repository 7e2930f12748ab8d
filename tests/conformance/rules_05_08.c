/* Conformance, rules 5-8: synchronize, versioned waits, elapsed time and its errors,
 * and the flags refused together. */
#include "support.h"

#include <stdint.h>

/* ---------------------------------------------------------------- rule 5 */

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
        check_failed(__FILE__, __LINE__,
                     "blocking synchronize used %.0f ms of CPU over %.0f ms of waiting",
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

/* ---------------------------------------------------------------- rule 6 */

TEST(rule06_versioned_wait)
{
    /* The waiter waits for record 1. Record 2, made later behind a gate that stays
     * closed, must not hold the waiter back once record 1 is reached. */
    gate first, second;
    gate_init(&first);
    gate_init(&second);
    tp_stream *one = new_stream(env->device);
    tp_stream *two = new_stream(env->device);
    tp_stream *waiter = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);
    tp_event *after_wait = new_event(env->device, TP_EVENT_DEFAULT);

    gate_launch(&first, one);
    CHECK_OK(tp_event_record(event, one));
    CHECK_OK(tp_stream_wait_event(waiter, event));
    CHECK_OK(tp_event_record(after_wait, waiter));
    /* CUDA and HIP may run host functions of all streams on one thread, in any
     * order: let the first gate take that thread before the second is queued. */
    CHECK(gate_entered_within(&first, 1, EVENTUALLY_SECONDS));
    gate_launch(&second, two);
    CHECK_OK(tp_event_record(event, two));

    CHECK(event_pending_for(after_wait, 50));
    gate_open(&first);
    CHECK(event_done_within(after_wait, EVENTUALLY_SECONDS));
    CHECK(gate_passed(&second) == 0);
    CHECK(!event_is_done(event)); /* the event itself is at record 2 */
    gate_open(&second);

    CHECK_OK(tp_event_synchronize(event));
    CHECK_OK(tp_stream_synchronize(one));
    CHECK_OK(tp_event_destroy(after_wait));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(waiter));
    CHECK_OK(tp_stream_destroy(two));
    CHECK_OK(tp_stream_destroy(one));
    gate_destroy(&second);
    gate_destroy(&first);
    return 0;
}

TEST(rule06_rerecord_reached_does_not_release_wait)
{
    /* The other direction: the waiter waits for a pending record 1; record 2 is
     * reached at once, and the waiter must still wait for record 1. */
    gate g;
    gate_init(&g);
    tp_stream *held = new_stream(env->device);
    tp_stream *free_stream = new_stream(env->device);
    tp_stream *waiter = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);
    tp_event *after_wait = new_event(env->device, TP_EVENT_DEFAULT);

    gate_launch(&g, held);
    CHECK_OK(tp_event_record(event, held));
    CHECK_OK(tp_event_wait(event, waiter));
    CHECK_OK(tp_event_record(after_wait, waiter));
    CHECK_OK(tp_event_record(event, free_stream));
    CHECK(event_done_within(event, EVENTUALLY_SECONDS));

    CHECK(event_pending_for(after_wait, 100));
    gate_open(&g);
    CHECK_OK(tp_event_synchronize(after_wait));
    CHECK(gate_passed(&g) == 1);

    CHECK_OK(tp_event_destroy(after_wait));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(waiter));
    CHECK_OK(tp_stream_destroy(free_stream));
    CHECK_OK(tp_stream_destroy(held));
    gate_destroy(&g);
    return 0;
}

TEST(rule06_wait_on_never_recorded_does_nothing)
{
    /* Nothing to wait for, and a record made after the wait is not waited for. */
    gate g;
    gate_init(&g);
    tp_stream *held = new_stream(env->device);
    tp_stream *waiter = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);
    tp_event *after_wait = new_event(env->device, TP_EVENT_DEFAULT);

    CHECK_OK(tp_stream_wait_event(waiter, event));
    gate_launch(&g, held);
    CHECK_OK(tp_event_record(event, held));
    CHECK_OK(tp_event_record(after_wait, waiter));
    CHECK(event_done_within(after_wait, EVENTUALLY_SECONDS));
    CHECK(gate_passed(&g) == 0);
    gate_open(&g);

    CHECK_OK(tp_stream_synchronize(held));
    CHECK_OK(tp_event_destroy(after_wait));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(waiter));
    CHECK_OK(tp_stream_destroy(held));
    gate_destroy(&g);
    return 0;
}

TEST(rule06_wait_holds_back_only_later_work)
{
    /* Work submitted to the waiter before the wait does not wait. */
    gate g;
    gate_init(&g);
    tp_stream *held = new_stream(env->device);
    tp_stream *waiter = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);
    tp_event *before_wait = new_event(env->device, TP_EVENT_DEFAULT);
    tp_event *after_wait = new_event(env->device, TP_EVENT_DEFAULT);

    gate_launch(&g, held);
    CHECK_OK(tp_event_record(event, held));
    CHECK_OK(tp_event_record(before_wait, waiter));
    CHECK_OK(tp_stream_wait_event(waiter, event));
    CHECK_OK(tp_event_record(after_wait, waiter));
    CHECK(event_done_within(before_wait, EVENTUALLY_SECONDS));
    CHECK(!event_is_done(after_wait));
    gate_open(&g);
    CHECK_OK(tp_event_synchronize(after_wait));
    CHECK(gate_passed(&g) == 1);

    CHECK_OK(tp_event_destroy(after_wait));
    CHECK_OK(tp_event_destroy(before_wait));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(waiter));
    CHECK_OK(tp_stream_destroy(held));
    gate_destroy(&g);
    return 0;
}

TEST(rule06_wait_null_stream_uses_current_stream)
{
    gate g;
    gate_init(&g);
    tp_stream *held = new_stream(env->device);
    tp_stream *waiter = new_stream(env->device);
    tp_stream *default_stream = NULL;
    CHECK_OK(tp_stream_default(env->device, &default_stream));
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);
    tp_event *after_wait = new_event(env->device, TP_EVENT_DEFAULT);

    CHECK_OK(tp_stream_set_current(waiter));
    gate_launch(&g, held);
    CHECK_OK(tp_event_record(event, held));
    CHECK_OK(tp_event_wait(event, NULL));
    CHECK_OK(tp_event_record(after_wait, waiter));
    CHECK(event_pending_for(after_wait, 50));
    gate_open(&g);
    CHECK_OK(tp_event_synchronize(after_wait));
    CHECK(gate_passed(&g) == 1);

    CHECK_OK(tp_stream_set_current(default_stream));
    CHECK_OK(tp_event_destroy(after_wait));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(waiter));
    CHECK_OK(tp_stream_destroy(held));
    gate_destroy(&g);
    return 0;
}

/* ---------------------------------------------------------------- rule 7 */

TEST(rule07_elapsed_at_least_work_duration)
{
    enum { work_ms = 30 };
    tp_stream *stream = new_stream(env->device);
    tp_event *start = new_event(env->device, TP_EVENT_TIMING);
    tp_event *end = new_event(env->device, TP_EVENT_TIMING);

    CHECK_OK(tp_event_record(start, stream));
    CHECK_OK(tp_stream_launch_host_fn(stream, sleep_host_fn, (void *)(intptr_t)work_ms));
    CHECK_OK(tp_event_record(end, stream));
    CHECK_OK(tp_event_synchronize(end));
    float ms = -1.0f;
    CHECK_OK(tp_event_elapsed_time(start, end, &ms));
    if (!(ms >= (float)work_ms))
        check_failed(__FILE__, __LINE__, "elapsed %.3f ms around %d ms of work", (double)ms,
                     work_ms);

    CHECK_OK(tp_event_destroy(end));
    CHECK_OK(tp_event_destroy(start));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(rule07_elapsed_back_to_back_is_not_negative)
{
    tp_stream *stream = new_stream(env->device);
    tp_event *start = new_event(env->device, TP_EVENT_TIMING);
    tp_event *end = new_event(env->device, TP_EVENT_TIMING | TP_EVENT_BLOCKING);
    CHECK_OK(tp_event_record(start, stream));
    CHECK_OK(tp_event_record(end, stream));
    CHECK_OK(tp_event_synchronize(end));
    float ms = -1.0f;
    CHECK_OK(tp_event_elapsed_time(start, end, &ms));
    CHECK(ms >= 0.0f);
    CHECK(ms < 10000.0f);
    CHECK_OK(tp_event_destroy(end));
    CHECK_OK(tp_event_destroy(start));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(rule07_elapsed_from_event_to_itself_is_zero)
{
    tp_stream *stream = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_TIMING);
    CHECK_OK(tp_event_record(event, stream));
    CHECK_OK(tp_event_synchronize(event));
    float ms = -1.0f;
    CHECK_OK(tp_event_elapsed_time(event, event, &ms));
    CHECK(ms == 0.0f);
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(rule07_timing_disabled_on_start)
{
    tp_stream *stream = new_stream(env->device);
    tp_event *start = new_event(env->device, TP_EVENT_DEFAULT);
    tp_event *end = new_event(env->device, TP_EVENT_TIMING);
    CHECK_OK(tp_event_record(start, stream));
    CHECK_OK(tp_event_record(end, stream));
    CHECK_OK(tp_stream_synchronize(stream));
    expect_elapsed_refused(start, end, TP_ERR_TIMING_DISABLED);
    CHECK_OK(tp_event_destroy(end));
    CHECK_OK(tp_event_destroy(start));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(rule07_timing_disabled_on_end)
{
    tp_stream *stream = new_stream(env->device);
    tp_event *start = new_event(env->device, TP_EVENT_TIMING);
    tp_event *end = new_event(env->device, TP_EVENT_BLOCKING);
    CHECK_OK(tp_event_record(start, stream));
    CHECK_OK(tp_event_record(end, stream));
    CHECK_OK(tp_stream_synchronize(stream));
    expect_elapsed_refused(start, end, TP_ERR_TIMING_DISABLED);
    CHECK_OK(tp_event_destroy(end));
    CHECK_OK(tp_event_destroy(start));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(rule07_timing_disabled_beats_not_recorded)
{
    tp_event *start = new_event(env->device, TP_EVENT_DEFAULT);
    tp_event *end = new_event(env->device, TP_EVENT_TIMING);
    expect_elapsed_refused(start, end, TP_ERR_TIMING_DISABLED);
    expect_elapsed_refused(end, start, TP_ERR_TIMING_DISABLED);
    CHECK_OK(tp_event_destroy(end));
    CHECK_OK(tp_event_destroy(start));
    return 0;
}

TEST(rule07_not_recorded_start)
{
    tp_stream *stream = new_stream(env->device);
    tp_event *start = new_event(env->device, TP_EVENT_TIMING);
    tp_event *end = new_event(env->device, TP_EVENT_TIMING);
    CHECK_OK(tp_event_record(end, stream));
    CHECK_OK(tp_event_synchronize(end));
    expect_elapsed_refused(start, end, TP_ERR_NOT_RECORDED);
    CHECK_OK(tp_event_destroy(end));
    CHECK_OK(tp_event_destroy(start));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(rule07_not_recorded_end)
{
    tp_stream *stream = new_stream(env->device);
    tp_event *start = new_event(env->device, TP_EVENT_TIMING);
    tp_event *end = new_event(env->device, TP_EVENT_TIMING);
    CHECK_OK(tp_event_record(start, stream));
    CHECK_OK(tp_event_synchronize(start));
    expect_elapsed_refused(start, end, TP_ERR_NOT_RECORDED);
    CHECK_OK(tp_event_destroy(end));
    CHECK_OK(tp_event_destroy(start));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(rule07_not_recorded_beats_not_ready)
{
    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(env->device);
    tp_event *start = new_event(env->device, TP_EVENT_TIMING);
    tp_event *end = new_event(env->device, TP_EVENT_TIMING);
    gate_launch(&g, stream);
    CHECK_OK(tp_event_record(start, stream));
    expect_elapsed_refused(start, end, TP_ERR_NOT_RECORDED);
    expect_elapsed_refused(end, start, TP_ERR_NOT_RECORDED);
    gate_open(&g);
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK_OK(tp_event_destroy(end));
    CHECK_OK(tp_event_destroy(start));
    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
    return 0;
}

TEST(rule07_not_ready_until_both_reached)
{
    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(env->device);
    tp_event *start = new_event(env->device, TP_EVENT_TIMING);
    tp_event *end = new_event(env->device, TP_EVENT_TIMING);
    CHECK_OK(tp_event_record(start, stream));
    gate_launch(&g, stream);
    CHECK_OK(tp_event_record(end, stream));
    CHECK(event_done_within(start, EVENTUALLY_SECONDS));
    expect_elapsed_refused(start, end, TP_ERR_NOT_READY);
    expect_elapsed_refused(end, start, TP_ERR_NOT_READY);
    gate_open(&g);
    CHECK_OK(tp_event_synchronize(end));
    float ms = -1.0f;
    CHECK_OK(tp_event_elapsed_time(start, end, &ms));
    CHECK(ms >= 0.0f);
    CHECK_OK(tp_event_destroy(end));
    CHECK_OK(tp_event_destroy(start));
    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
    return 0;
}

/* ---------------------------------------------------------------- rule 8 */

TEST(rule08_interprocess_with_timing_refused)
{
    static const unsigned refused[] = {
        TP_EVENT_INTERPROCESS | TP_EVENT_TIMING,
        TP_EVENT_INTERPROCESS | TP_EVENT_TIMING | TP_EVENT_BLOCKING,
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        tp_event *untouched = (tp_event *)&refused[i];
        tp_event *event = untouched;
        CHECK_STATUS(tp_event_create(&event, env->device, refused[i]),
                     TP_ERR_INVALID_ARGUMENT);
        CHECK(event == untouched);
        CHECK(tp_last_error()[0] != '\0');
    }
    return 0;
}

TEST(rule08_interprocess_event_works_in_process)
{
    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(env->device);
    tp_stream *waiter = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_INTERPROCESS);
    tp_event *after_wait = new_event(env->device, TP_EVENT_DEFAULT);

    gate_launch(&g, stream);
    CHECK_OK(tp_event_record(event, stream));
    CHECK_OK(tp_event_wait(event, waiter));
    CHECK_OK(tp_event_record(after_wait, waiter));
    CHECK(event_pending_for(after_wait, 50));
    gate_open(&g);
    CHECK_OK(tp_event_synchronize(event));
    CHECK_OK(tp_event_synchronize(after_wait));
    CHECK(gate_passed(&g) == 1);

    CHECK_OK(tp_event_destroy(after_wait));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(waiter));
    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
    return 0;
}
