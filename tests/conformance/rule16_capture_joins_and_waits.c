/* Conformance, rule 16: joins and join-back of other streams, TP_EVENT_EXTERNAL
 * records and waits made at each launch, and what a capture refuses across its
 * streams and backends.
 *
 * What the graphs hold is portable: rule 15's host functions, captured on every
 * backend that captures, records of TP_EVENT_EXTERNAL events (seen through query
 * and timestamps) and waits. */
#include "capture_support.h"

#include <stdio.h>
#include <string.h>

/* Fork/join: `origin` records `fork`, `side` waits on it (joining the capture),
 * captures its own work, records `join`, which `origin` waits on. */
TEST(rule16_fork_join_of_two_streams)
{
    REQUIRE_CAPTURE(env);
    tp_stream *origin = new_stream(env->device);
    tp_stream *side = new_stream(env->device);
    tp_event *fork = new_event(env->device, TP_EVENT_DEFAULT);
    tp_event *join = new_event(env->device, TP_EVENT_DEFAULT);
    tp_event *side_mark = new_event(env->device, TP_EVENT_TIMING | TP_EVENT_EXTERNAL);
    tp_event *end_mark = new_event(env->device, TP_EVENT_TIMING | TP_EVENT_EXTERNAL);
    order_log log;
    order_log_init(&log);
    order_item first = {&log, 1}, second = {&log, 2}, third = {&log, 3};

    CHECK_OK(tp_stream_begin_capture(origin));
    CHECK_OK(tp_stream_launch_host_fn(origin, order_log_host_fn, &first));
    CHECK_OK(tp_event_record(fork, origin));
    CHECK_OK(tp_event_wait(fork, side));
    bool capturing = false;
    CHECK_OK(tp_stream_is_capturing(side, &capturing));
    CHECK(capturing);
    CHECK_OK(tp_stream_launch_host_fn(side, order_log_host_fn, &second));
    CHECK_OK(tp_event_record(side_mark, side));
    CHECK_OK(tp_event_record(join, side));
    CHECK_OK(tp_event_wait(join, origin));
    CHECK_OK(tp_stream_launch_host_fn(origin, order_log_host_fn, &third));
    CHECK_OK(tp_event_record(end_mark, origin));
    /* The side stream cannot end the capture: it joined one. */
    tp_graph *graph = NULL;
    CHECK_STATUS(tp_stream_end_capture(side, &graph), TP_ERR_INVALID_ARGUMENT);
    CHECK_OK(tp_stream_end_capture(origin, &graph));
    CHECK_OK(tp_stream_is_capturing(side, &capturing));
    CHECK(!capturing);

    for (int launch = 0; launch < 20; launch++) {
        CHECK_OK(tp_graph_launch(graph, origin));
        CHECK_OK(tp_stream_synchronize(origin));
        CHECK(event_is_done(side_mark) && event_is_done(end_mark));
        float ms = -1.0f;
        CHECK_OK(tp_event_elapsed_time(side_mark, end_mark, &ms));
        CHECK(ms >= 0.0f); /* the end waited for the side branch */
        CHECK(log.count == 3 * (launch + 1));
        for (int i = 0; i < 3; i++)
            CHECK(log.values[3 * launch + i] == i + 1);
    }
    CHECK_OK(tp_graph_destroy(graph));
    order_log_destroy(&log);
    CHECK_OK(tp_event_destroy(end_mark));
    CHECK_OK(tp_event_destroy(side_mark));
    CHECK_OK(tp_event_destroy(join));
    CHECK_OK(tp_event_destroy(fork));
    CHECK_OK(tp_stream_destroy(side));
    CHECK_OK(tp_stream_destroy(origin));
    return 0;
}

TEST(rule16_unjoined_stream_refused_and_dropped)
{
    REQUIRE_CAPTURE(env);
    tp_stream *origin = new_stream(env->device);
    tp_stream *side = new_stream(env->device);
    tp_event *fork = new_event(env->device, TP_EVENT_DEFAULT);
    tp_event *mark = new_event(env->device, TP_EVENT_TIMING | TP_EVENT_EXTERNAL);
    CHECK_OK(tp_stream_begin_capture(origin));
    CHECK_OK(tp_event_record(fork, origin));
    CHECK_OK(tp_event_wait(fork, side));
    CHECK_OK(tp_event_record(mark, side)); /* never joined back */
    tp_graph *graph = NULL;
    CHECK_STATUS(tp_stream_end_capture(origin, &graph), TP_ERR_CAPTURING);
    CHECK(graph == NULL);
    void *native = NULL;
    CHECK_OK(tp_stream_native(side, &native));
    char name[64];
    snprintf(name, sizeof name, "%p", native);
    CHECK_ERROR_MENTIONS(name);
    CHECK_ERROR_MENTIONS("joined back");
    /* Dropped: both streams are out of it and work as before. */
    bool capturing = true;
    CHECK_OK(tp_stream_is_capturing(origin, &capturing));
    CHECK(!capturing);
    CHECK_OK(tp_stream_is_capturing(side, &capturing));
    CHECK(!capturing);
    CHECK_OK(tp_event_record(mark, side));
    CHECK_OK(tp_stream_synchronize(side));
    CHECK(event_is_done(mark));
    CHECK_OK(tp_stream_synchronize(origin));
    CHECK_OK(tp_event_destroy(mark));
    CHECK_OK(tp_event_destroy(fork));
    CHECK_OK(tp_stream_destroy(side));
    CHECK_OK(tp_stream_destroy(origin));
    return 0;
}

TEST(rule16_external_event_answers_for_each_launch)
{
    REQUIRE_CAPTURE(env);
    tp_stream *stream = new_stream(env->device);
    tp_event *start = new_event(env->device, TP_EVENT_TIMING | TP_EVENT_EXTERNAL);
    tp_event *end = new_event(env->device, TP_EVENT_TIMING | TP_EVENT_EXTERNAL);
    CHECK_OK(tp_stream_begin_capture(stream));
    CHECK_OK(tp_event_record(start, stream));
    CHECK_OK(tp_stream_launch_host_fn(stream, sleep_host_fn, (void *)(intptr_t)2));
    CHECK_OK(tp_event_record(end, stream));
    tp_graph *graph = NULL;
    CHECK_OK(tp_stream_end_capture(stream, &graph));
    int64_t previous_end = 0;
    for (int launch = 0; launch < 3; launch++) {
        sleep_ms(2);
        int64_t before = monotonic_ns();
        CHECK_OK(tp_graph_launch(graph, stream));
        CHECK_OK(tp_stream_synchronize(stream));
        int64_t after = monotonic_ns();
        CHECK(event_is_done(start) && event_is_done(end));
        int64_t e = device_error_ns(env->device);
        int64_t t0 = timestamp_of(start), t1 = timestamp_of(end);
        CHECK(t0 >= before - e && t1 <= after + e);
        CHECK(t0 > previous_end); /* this launch's records, not the last one's */
        CHECK(t1 >= t0);
        previous_end = t1;
        float ms = -1.0f;
        CHECK_OK(tp_event_elapsed_time(start, end, &ms));
        CHECK(ms >= 1.5f); /* the host function between them ran at this launch */
    }
    CHECK_OK(tp_graph_destroy(graph));
    CHECK_OK(tp_event_destroy(end));
    CHECK_OK(tp_event_destroy(start));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* A wait inside the capture on an external event recorded outside it waits, at
 * each launch, for the event's latest record as of that launch. */
TEST(rule16_wait_on_external_event_waits_at_each_launch)
{
    REQUIRE_CAPTURE(env);
    tp_stream *stream = new_stream(env->device);
    tp_stream *producer = new_stream(env->device);
    tp_event *input = new_event(env->device, TP_EVENT_EXTERNAL);
    tp_event *output = new_event(env->device, TP_EVENT_TIMING | TP_EVENT_EXTERNAL);
    CHECK_OK(tp_event_record(input, producer));
    CHECK_OK(tp_stream_synchronize(producer));
    CHECK_OK(tp_stream_begin_capture(stream));
    CHECK_OK(tp_event_wait(input, stream));
    CHECK_OK(tp_event_record(output, stream));
    tp_graph *graph = NULL;
    CHECK_OK(tp_stream_end_capture(stream, &graph));
    for (int launch = 0; launch < 3; launch++) {
        gate g;
        gate_init(&g);
        gate_launch(&g, producer);
        CHECK_OK(tp_event_record(input, producer));
        CHECK_OK(tp_graph_launch(graph, stream));
        CHECK(gate_entered_within(&g, 1, EVENTUALLY_SECONDS));
        CHECK(event_pending_for(output, 30));
        gate_open(&g);
        CHECK(event_done_within(output, EVENTUALLY_SECONDS));
        CHECK_OK(tp_stream_synchronize(producer));
        gate_destroy(&g);
    }
    CHECK_OK(tp_graph_destroy(graph));
    CHECK_OK(tp_event_destroy(output));
    CHECK_OK(tp_event_destroy(input));
    CHECK_OK(tp_stream_destroy(producer));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(rule16_wait_on_plain_event_recorded_outside_refused)
{
    REQUIRE_CAPTURE(env);
    tp_stream *stream = new_stream(env->device);
    tp_stream *other = new_stream(env->device);
    tp_event *outside = new_event(env->device, TP_EVENT_DEFAULT);
    tp_event *never = new_event(env->device, TP_EVENT_DEFAULT);
    CHECK_OK(tp_event_record(outside, other));
    CHECK_OK(tp_stream_synchronize(other));
    CHECK_OK(tp_stream_begin_capture(stream));
    CHECK_STATUS(tp_event_wait(outside, stream), TP_ERR_CAPTURING);
    CHECK_ERROR_MENTIONS("TP_EVENT_EXTERNAL");
    CHECK_OK(tp_event_wait(never, stream)); /* nothing to wait for */
    tp_graph *graph = NULL;
    CHECK_OK(tp_stream_end_capture(stream, &graph));
    CHECK_OK(tp_graph_launch(graph, stream));
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK_OK(tp_graph_destroy(graph));
    CHECK_OK(tp_event_destroy(never));
    CHECK_OK(tp_event_destroy(outside));
    CHECK_OK(tp_stream_destroy(other));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* A stream of an open capture, its origin or one that joined it, is not destroyed
 * (the capture could not end, or would lose a branch); once the capture ended,
 * or was refused and dropped, it is. */
TEST(rule16_destroying_a_stream_of_an_open_capture_refused)
{
    REQUIRE_CAPTURE(env);
    tp_stream *origin = new_stream(env->device), *joined = new_stream(env->device);
    tp_event *fork = new_event(env->device, TP_EVENT_DEFAULT), *join = new_event(env->device, TP_EVENT_DEFAULT);
    CHECK_OK(tp_stream_begin_capture(origin));
    CHECK_OK(tp_event_record(fork, origin));
    CHECK_OK(tp_event_wait(fork, joined));
    CHECK_STATUS(tp_stream_destroy(origin), TP_ERR_CAPTURING);
    CHECK_ERROR_MENTIONS("end the capture first");
    CHECK_STATUS(tp_stream_destroy(joined), TP_ERR_CAPTURING);
    bool capturing = false;
    CHECK_OK(tp_stream_is_capturing(origin, &capturing));
    CHECK(capturing); /* the refusal changed nothing */
    CHECK_OK(tp_event_record(join, joined));
    CHECK_OK(tp_event_wait(join, origin));
    tp_graph *graph = NULL;
    CHECK_OK(tp_stream_end_capture(origin, &graph));
    CHECK_OK(tp_stream_destroy(joined));
    CHECK_OK(tp_graph_launch(graph, origin));
    CHECK_OK(tp_stream_synchronize(origin));
    CHECK_OK(tp_graph_destroy(graph));

    /* Dropped: a capture whose joined stream did not join back. */
    tp_stream *other = new_stream(env->device);
    CHECK_OK(tp_stream_begin_capture(origin));
    CHECK_OK(tp_event_record(fork, origin));
    CHECK_OK(tp_event_wait(fork, other));
    CHECK_OK(tp_event_record(join, other));
    CHECK_STATUS(tp_stream_end_capture(origin, &graph), TP_ERR_CAPTURING);
    CHECK_OK(tp_stream_destroy(other));
    CHECK_OK(tp_stream_destroy(origin));
    CHECK_OK(tp_event_destroy(join));
    CHECK_OK(tp_event_destroy(fork));
    return 0;
}
