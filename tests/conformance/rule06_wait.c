/* Conformance, rule 6: wait(stream) waits for the record latest at the time of the
 * call; a never-recorded event does nothing. (Across backends:
 * rule06_wait_across_backends.c.) */
#include "support.h"

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
