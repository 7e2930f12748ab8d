/* Conformance, rule 12: streams are in order; two streams have no order unless an
 * event says so. */
#include "support.h"

TEST(rule12_host_fns_run_in_submission_order)
{
    enum { count = 100 };
    order_log log;
    order_log_init(&log);
    order_item items[count];
    tp_stream *stream = new_stream(env->device);
    for (int i = 0; i < count; i++) {
        items[i] = (order_item){&log, i};
        CHECK_OK(tp_stream_launch_host_fn(stream, order_log_host_fn, &items[i]));
    }
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK(log.count == count);
    for (int i = 0; i < count; i++)
        CHECK(log.values[i] == i);
    CHECK_OK(tp_stream_destroy(stream));
    order_log_destroy(&log);
    return 0;
}

TEST(rule12_host_fns_on_default_stream_in_order)
{
    enum { count = 50 };
    order_log log;
    order_log_init(&log);
    order_item items[count];
    tp_stream *stream = NULL;
    CHECK_OK(tp_stream_default(env->device, &stream));
    for (int i = 0; i < count; i++) {
        items[i] = (order_item){&log, i};
        CHECK_OK(tp_stream_launch_host_fn(stream, order_log_host_fn, &items[i]));
    }
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK(log.count == count);
    for (int i = 0; i < count; i++)
        CHECK(log.values[i] == i);
    order_log_destroy(&log);
    return 0;
}

TEST(rule12_event_orders_two_streams)
{
    gate g;
    gate_init(&g);
    order_log log;
    order_log_init(&log);
    order_item first = {&log, 1}, second = {&log, 2};
    tp_stream *a = new_stream(env->device);
    tp_stream *b = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);

    gate_launch(&g, a);
    CHECK_OK(tp_stream_launch_host_fn(a, order_log_host_fn, &first));
    CHECK_OK(tp_event_record(event, a));
    CHECK_OK(tp_stream_wait_event(b, event));
    CHECK_OK(tp_stream_launch_host_fn(b, order_log_host_fn, &second));
    sleep_ms(50);
    CHECK(!stream_is_idle(b));
    gate_open(&g);
    CHECK_OK(tp_stream_synchronize(b));
    CHECK_OK(tp_stream_synchronize(a));
    CHECK(log.count == 2);
    CHECK(log.values[0] == 1);
    CHECK(log.values[1] == 2);

    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(b));
    CHECK_OK(tp_stream_destroy(a));
    order_log_destroy(&log);
    gate_destroy(&g);
    return 0;
}

TEST(rule12_streams_without_event_are_independent)
{
    gate g;
    gate_init(&g);
    tp_stream *held = new_stream(env->device);
    tp_stream *other = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);

    gate_launch(&g, held);
    CHECK_OK(tp_event_record(event, other));
    CHECK(event_done_within(event, EVENTUALLY_SECONDS));
    CHECK_OK(tp_stream_synchronize(other));
    CHECK(!stream_is_idle(held));
    gate_open(&g);

    CHECK_OK(tp_stream_synchronize(held));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(other));
    CHECK_OK(tp_stream_destroy(held));
    gate_destroy(&g);
    return 0;
}

TEST(rule12_default_stream_independent_of_created_streams)
{
    /* Created streams do not wait for the default stream (CUDA: non-blocking). */
    gate g;
    gate_init(&g);
    tp_stream *default_stream = NULL;
    CHECK_OK(tp_stream_default(env->device, &default_stream));
    tp_stream *other = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);

    gate_launch(&g, default_stream);
    CHECK_OK(tp_event_record(event, other));
    CHECK(event_done_within(event, EVENTUALLY_SECONDS));
    CHECK(gate_passed(&g) == 0);
    gate_open(&g);

    CHECK_OK(tp_stream_synchronize(default_stream));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(other));
    gate_destroy(&g);
    return 0;
}
