/* Conformance, rule 3: a record marks the point after all work submitted so far,
 * and each record replaces the previous one. */
#include "support.h"

TEST(rule03_record_waits_for_earlier_work)
{
    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);

    gate_launch(&g, stream);
    CHECK_OK(tp_event_record(event, stream));
    CHECK(event_pending_for(event, 50));
    gate_open(&g);
    CHECK_OK(tp_event_synchronize(event));
    CHECK(gate_passed(&g) == 1);
    CHECK(event_is_done(event));

    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
    return 0;
}

TEST(rule03_record_ignores_later_work)
{
    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);

    CHECK_OK(tp_event_record(event, stream));
    gate_launch(&g, stream);
    CHECK(event_done_within(event, EVENTUALLY_SECONDS));
    CHECK(gate_passed(&g) == 0);
    gate_open(&g);

    CHECK_OK(tp_stream_synchronize(stream));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
    return 0;
}

TEST(rule03_rerecord_replaces_pending_with_reached)
{
    gate g;
    gate_init(&g);
    tp_stream *held = new_stream(env->device);
    tp_stream *free_stream = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);

    gate_launch(&g, held);
    CHECK_OK(tp_event_record(event, held));
    CHECK(!event_is_done(event));
    CHECK_OK(tp_event_record(event, free_stream));
    CHECK(event_done_within(event, EVENTUALLY_SECONDS));
    CHECK_OK(tp_event_synchronize(event)); /* the latest record: must not wait for the gate */
    CHECK(gate_passed(&g) == 0);
    gate_open(&g);

    CHECK_OK(tp_stream_synchronize(held));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(free_stream));
    CHECK_OK(tp_stream_destroy(held));
    gate_destroy(&g);
    return 0;
}

TEST(rule03_rerecord_replaces_reached_with_pending)
{
    gate g;
    gate_init(&g);
    tp_stream *held = new_stream(env->device);
    tp_stream *free_stream = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);

    CHECK_OK(tp_event_record(event, free_stream));
    CHECK_OK(tp_event_synchronize(event));
    gate_launch(&g, held);
    CHECK_OK(tp_event_record(event, held));
    CHECK(event_pending_for(event, 50));

    gate_opener opener;
    gate_open_later(&opener, &g, 50);
    CHECK_OK(tp_event_synchronize(event));
    CHECK(gate_passed(&g) == 1);
    gate_opener_join(&opener);

    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(free_stream));
    CHECK_OK(tp_stream_destroy(held));
    gate_destroy(&g);
    return 0;
}

TEST(rule03_record_on_same_stream_again_moves_the_mark)
{
    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);

    CHECK_OK(tp_event_record(event, stream));
    gate_launch(&g, stream);
    CHECK_OK(tp_event_record(event, stream));
    CHECK(event_pending_for(event, 50));
    gate_open(&g);
    CHECK_OK(tp_event_synchronize(event));
    CHECK(gate_passed(&g) == 1);

    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
    return 0;
}
