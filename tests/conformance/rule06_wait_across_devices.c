/* Conformance, rule 6 across devices: a stream of the peer device waits for the record
 * that was the event's latest at the call, as a stream of the event's own device does
 * (rule06_wait.c); recording the event again, later, changes nothing. For plain events
 * and interprocess ones, whose cross-device waits some backends relay (rule 1's
 * rule01_peer_stream_waits_on_interprocess_event). Across backends:
 * rule06_wait_across_backends.c. */
#include "support.h"

/* Record 1 behind gate `first` on a stream of the device, the peer's stream waits,
 * then record 2 behind gate `second`, which stays closed: the peer's later work runs
 * once record 1 is reached, not record 2. */
static int versioned_wait_across_devices(const test_env *env, unsigned flags)
{
    gate first, second;
    gate_init(&first);
    gate_init(&second);
    tp_stream *one = new_stream(env->device);
    tp_stream *two = new_stream(env->device);
    tp_stream *waiter = new_stream(env->peer);
    tp_event *event = new_event(env->device, flags);
    tp_event *after_wait = new_event(env->peer, TP_EVENT_DEFAULT);

    gate_launch(&first, one);
    CHECK_OK(tp_event_record(event, one));
    CHECK_OK(tp_event_wait(event, waiter));
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

/* The other direction: record 1 pending, the peer's stream waits, record 2 reached at
 * once; the peer's later work still waits for record 1. */
static int rerecord_reached_across_devices(const test_env *env, unsigned flags)
{
    gate g;
    gate_init(&g);
    tp_stream *held = new_stream(env->device);
    tp_stream *free_stream = new_stream(env->device);
    tp_stream *waiter = new_stream(env->peer);
    tp_event *event = new_event(env->device, flags);
    tp_event *after_wait = new_event(env->peer, TP_EVENT_DEFAULT);

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

TEST(rule06_across_devices_rerecord_pending_does_not_change_the_wait)
{
    REQUIRE_PEER(env);
    return versioned_wait_across_devices(env, TP_EVENT_DEFAULT);
}

TEST(rule06_across_devices_rerecord_reached_does_not_release_the_wait)
{
    REQUIRE_PEER(env);
    return rerecord_reached_across_devices(env, TP_EVENT_DEFAULT);
}

TEST(rule06_across_devices_interprocess_event_rerecord_pending_does_not_change_the_wait)
{
    REQUIRE_PEER(env);
    REQUIRE_IPC(env->device);
    if (!peer_of_the_same_backend(env, "an interprocess event's wait across devices"))
        return TEST_SKIP;
    return versioned_wait_across_devices(env, TP_EVENT_INTERPROCESS);
}

TEST(rule06_across_devices_interprocess_event_rerecord_reached_does_not_release_the_wait)
{
    REQUIRE_PEER(env);
    REQUIRE_IPC(env->device);
    if (!peer_of_the_same_backend(env, "an interprocess event's wait across devices"))
        return TEST_SKIP;
    return rerecord_reached_across_devices(env, TP_EVENT_INTERPROCESS);
}
