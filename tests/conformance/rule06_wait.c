/* Conformance, rule 6: wait(stream) waits for the record latest at the time of the
 * call, on a stream of the event's own device and of its peer (for plain events and
 * interprocess ones, whose cross-device waits some backends relay: rule 1's
 * rule01_peer_stream_waits_on_interprocess_event); recording the event again, later,
 * changes nothing; a never-recorded event does nothing. (Across backends:
 * rule06_wait_across_backends.c.) */
#include "support.h"

/* Record 1 behind gate `first` on a stream of the device, a stream of waiter_device
 * (the device or its peer) waits, then record 2 behind gate `second`, which stays
 * closed: the waiter's later work runs once record 1 is reached, not record 2. */
static int versioned_wait(const test_env *env, const char *waiter_device, unsigned flags)
{
    gate first, second;
    gate_init(&first);
    gate_init(&second);
    tp_stream *one = new_stream(env->device);
    tp_stream *two = new_stream(env->device);
    tp_stream *waiter = new_stream(waiter_device);
    tp_event *event = new_event(env->device, flags);
    tp_event *after_wait = new_event(waiter_device, TP_EVENT_DEFAULT);

    gate_launch(&first, one);
    CHECK_OK(tp_event_record(event, one));
    CHECK_OK(tp_stream_wait_event(waiter, event));
    CHECK_OK(tp_event_record(after_wait, waiter));
    /* A GPU runtime may run every stream's host functions on one thread: let the
     * first gate take it before the second is queued. */
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

/* The other direction: record 1 pending, the waiter's stream waits, record 2 reached
 * at once; the waiter's later work still waits for record 1. */
static int rerecord_reached(const test_env *env, const char *waiter_device, unsigned flags)
{
    gate g;
    gate_init(&g);
    tp_stream *held = new_stream(env->device);
    tp_stream *free_stream = new_stream(env->device);
    tp_stream *waiter = new_stream(waiter_device);
    tp_event *event = new_event(env->device, flags);
    tp_event *after_wait = new_event(waiter_device, TP_EVENT_DEFAULT);

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

TEST(rule06_versioned_wait)
{
    return versioned_wait(env, env->device, TP_EVENT_DEFAULT);
}

TEST(rule06_rerecord_reached_does_not_release_wait)
{
    return rerecord_reached(env, env->device, TP_EVENT_DEFAULT);
}

TEST(rule06_across_devices_rerecord_pending_does_not_change_the_wait)
{
    REQUIRE_PEER(env);
    return versioned_wait(env, env->peer, TP_EVENT_DEFAULT);
}

TEST(rule06_across_devices_rerecord_reached_does_not_release_the_wait)
{
    REQUIRE_PEER(env);
    return rerecord_reached(env, env->peer, TP_EVENT_DEFAULT);
}

TEST(rule06_across_devices_interprocess_event_rerecord_pending_does_not_change_the_wait)
{
    REQUIRE_PEER(env);
    REQUIRE_IPC(env->device);
    if (!peer_of_the_same_backend(env, "an interprocess event's wait across devices"))
        return TEST_SKIP;
    return versioned_wait(env, env->peer, TP_EVENT_INTERPROCESS);
}

TEST(rule06_across_devices_interprocess_event_rerecord_reached_does_not_release_the_wait)
{
    REQUIRE_PEER(env);
    REQUIRE_IPC(env->device);
    if (!peer_of_the_same_backend(env, "an interprocess event's wait across devices"))
        return TEST_SKIP;
    return rerecord_reached(env, env->peer, TP_EVENT_INTERPROCESS);
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
