/* Conformance, rule 9: destroying an event or stream with work pending is safe;
 * destroying the default stream is refused. */
#include "support.h"

TEST(rule09_destroy_event_with_pending_record)
{
    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_TIMING | TP_EVENT_BLOCKING);
    atomic_int after = 0;

    gate_launch(&g, stream);
    CHECK_OK(tp_event_record(event, stream));
    CHECK_OK(tp_stream_launch_host_fn(stream, flag_host_fn, &after));
    CHECK_OK(tp_event_destroy(event));
    gate_open(&g);
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK(gate_passed(&g) == 1);
    CHECK(atomic_load(&after) == 1);

    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
    return 0;
}

TEST(rule09_destroy_stream_with_pending_work)
{
    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(env->device);
    atomic_int after = 0;

    gate_launch(&g, stream);
    CHECK_OK(tp_stream_launch_host_fn(stream, flag_host_fn, &after));
    CHECK_OK(tp_stream_destroy(stream));
    CHECK(gate_entered_within(&g, 1, EVENTUALLY_SECONDS));
    CHECK(atomic_load(&after) == 0);
    gate_open(&g);
    /* The host function after the gate still runs, and once it has, the gate's
     * function has returned: the gate may go. */
    CHECK(flag_reaches_within(&after, 1, EVENTUALLY_SECONDS));
    CHECK(gate_passed(&g) == 1);
    gate_destroy(&g);
    return 0;
}

TEST(rule09_event_on_destroyed_stream_stays_valid)
{
    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);
    atomic_int after = 0;

    gate_launch(&g, stream);
    CHECK_OK(tp_event_record(event, stream));
    CHECK_OK(tp_stream_launch_host_fn(stream, flag_host_fn, &after));
    CHECK_OK(tp_stream_destroy(stream));
    CHECK(event_pending_for(event, 50));
    gate_opener opener;
    gate_open_later(&opener, &g, 50);
    CHECK_OK(tp_event_synchronize(event));
    CHECK(gate_passed(&g) == 1);
    CHECK(event_is_done(event));
    gate_opener_join(&opener);

    CHECK(flag_reaches_within(&after, 1, EVENTUALLY_SECONDS));
    CHECK_OK(tp_event_destroy(event));
    gate_destroy(&g);
    return 0;
}

TEST(rule09_destroy_event_a_stream_waits_on)
{
    /* The wait refers to the record, not to the handle: destroying the event does
     * not release the waiting stream early, nor leave it waiting forever. */
    gate g;
    gate_init(&g);
    tp_stream *held = new_stream(env->device);
    tp_stream *waiter = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);
    tp_event *after_wait = new_event(env->device, TP_EVENT_DEFAULT);

    gate_launch(&g, held);
    CHECK_OK(tp_event_record(event, held));
    CHECK_OK(tp_stream_wait_event(waiter, event));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_event_record(after_wait, waiter));
    CHECK(event_pending_for(after_wait, 50));
    gate_open(&g);
    CHECK_OK(tp_event_synchronize(after_wait));
    CHECK(gate_passed(&g) == 1);

    CHECK_OK(tp_stream_synchronize(held));
    CHECK_OK(tp_event_destroy(after_wait));
    CHECK_OK(tp_stream_destroy(waiter));
    CHECK_OK(tp_stream_destroy(held));
    gate_destroy(&g);
    return 0;
}

TEST(rule09_destroy_default_stream_refused)
{
    tp_stream *default_stream = NULL;
    CHECK_OK(tp_stream_default(env->device, &default_stream));
    CHECK_STATUS(tp_stream_destroy(default_stream), TP_ERR_INVALID_ARGUMENT);
    CHECK(tp_last_error()[0] != '\0');

    /* Still there, still working. */
    tp_stream *again = NULL;
    CHECK_OK(tp_stream_default(env->device, &again));
    CHECK(again == default_stream);
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);
    atomic_int ran = 0;
    CHECK_OK(tp_stream_launch_host_fn(default_stream, flag_host_fn, &ran));
    CHECK_OK(tp_event_record(event, default_stream));
    CHECK_OK(tp_event_synchronize(event));
    CHECK(atomic_load(&ran) == 1);
    CHECK_OK(tp_event_destroy(event));
    return 0;
}
