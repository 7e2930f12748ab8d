/* Conformance, rule 16 with rule 14: a wait inside a capture on an event of another
 * backend. On a TP_EVENT_EXTERNAL event it is made again at each launch, for the
 * event's latest record when the launch reaches it; on a plain event recorded
 * outside it is refused, as a wait of one backend is. */
#include "capture_support.h"

/* A graph captured on `stream`: a wait on `input`, then a record of `output`. */
static tp_graph *capture_wait_then_record(tp_stream *stream, tp_event *input, tp_event *output)
{
    CHECK_OK(tp_stream_begin_capture(stream));
    CHECK_OK(tp_event_wait(input, stream));
    CHECK_OK(tp_event_record(output, stream));
    tp_graph *graph = NULL;
    CHECK_OK(tp_stream_end_capture(stream, &graph));
    CHECK(graph != NULL);
    return graph;
}

TEST(rule16_cross_backend_wait_on_plain_event_refused)
{
    REQUIRE_CAPTURE(env);
    REQUIRE_OTHER_BACKEND(env, other);
    tp_stream *stream = new_stream(env->device);
    tp_stream *foreign = new_stream(other);
    tp_event *event = new_event(other, TP_EVENT_DEFAULT);
    tp_event *never_recorded = new_event(other, TP_EVENT_DEFAULT);
    gate g;
    gate_init(&g);
    gate_launch(&g, foreign);
    CHECK_OK(tp_event_record(event, foreign));
    CHECK_OK(tp_stream_begin_capture(stream));
    CHECK_OK(tp_event_wait(never_recorded, stream)); /* rule 6: nothing to wait for, in a capture too */
    CHECK_STATUS(tp_event_wait(event, stream), TP_ERR_CAPTURING);
    CHECK_ERROR_MENTIONS("TP_EVENT_EXTERNAL");
    tp_graph *graph = NULL;
    CHECK_OK(tp_stream_end_capture(stream, &graph));
    gate_open(&g);
    CHECK_OK(tp_stream_synchronize(foreign));
    gate_destroy(&g);
    CHECK_OK(tp_graph_destroy(graph));
    CHECK_OK(tp_event_destroy(never_recorded));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(foreign));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* Each launch waits for the record of the other backend's event made before it,
 * not for the one the capture saw. */
TEST(rule16_cross_backend_wait_on_external_event_waits_at_each_launch)
{
    REQUIRE_CAPTURE(env);
    REQUIRE_OTHER_BACKEND(env, other);
    tp_stream *stream = new_stream(env->device);
    tp_stream *producer = new_stream(other);
    tp_event *input = new_event(other, TP_EVENT_EXTERNAL);
    tp_event *output = new_event(env->device, TP_EVENT_EXTERNAL);
    CHECK_OK(tp_event_record(input, producer));
    CHECK_OK(tp_stream_synchronize(producer));
    tp_graph *graph = capture_wait_then_record(stream, input, output);
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
    /* With the input's latest record reached, a launch does not wait. */
    CHECK_OK(tp_graph_launch(graph, stream));
    CHECK(event_done_within(output, EVENTUALLY_SECONDS));
    CHECK_OK(tp_graph_destroy(graph));
    CHECK_OK(tp_event_destroy(output));
    CHECK_OK(tp_event_destroy(input));
    CHECK_OK(tp_stream_destroy(producer));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* The graph keeps the event it waits on: destroyed by the program, its latest
 * record still answers each launch (ASan sees any use after free). */
TEST(rule16_cross_backend_wait_outlives_its_event)
{
    REQUIRE_CAPTURE(env);
    REQUIRE_OTHER_BACKEND(env, other);
    tp_stream *stream = new_stream(env->device);
    tp_stream *producer = new_stream(other);
    tp_event *input = new_event(other, TP_EVENT_EXTERNAL);
    tp_event *output = new_event(env->device, TP_EVENT_EXTERNAL);
    gate g;
    gate_init(&g);
    gate_launch(&g, producer);
    CHECK_OK(tp_event_record(input, producer));
    tp_graph *graph = capture_wait_then_record(stream, input, output);
    CHECK_OK(tp_event_destroy(input));
    CHECK_OK(tp_graph_launch(graph, stream));
    CHECK(event_pending_for(output, 30));
    gate_open(&g);
    CHECK(event_done_within(output, EVENTUALLY_SECONDS));
    CHECK_OK(tp_graph_launch(graph, stream));
    CHECK(event_done_within(output, EVENTUALLY_SECONDS));
    CHECK_OK(tp_stream_synchronize(producer));
    gate_destroy(&g);
    CHECK_OK(tp_graph_destroy(graph));
    CHECK_OK(tp_event_destroy(output));
    CHECK_OK(tp_stream_destroy(producer));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* Rule 9: the graph destroyed, and the event too, while a launch still waits; the
 * launch goes on once the record is reached. */
TEST(rule16_cross_backend_wait_graph_destroyed_with_launch_waiting)
{
    REQUIRE_CAPTURE(env);
    REQUIRE_OTHER_BACKEND(env, other);
    tp_stream *stream = new_stream(env->device);
    tp_stream *producer = new_stream(other);
    tp_event *input = new_event(other, TP_EVENT_EXTERNAL);
    tp_event *output = new_event(env->device, TP_EVENT_EXTERNAL);
    CHECK_OK(tp_event_record(input, producer));
    tp_graph *graph = capture_wait_then_record(stream, input, output);
    gate g;
    gate_init(&g);
    gate_launch(&g, producer);
    CHECK_OK(tp_event_record(input, producer));
    CHECK_OK(tp_graph_launch(graph, stream));
    CHECK(gate_entered_within(&g, 1, EVENTUALLY_SECONDS));
    CHECK_OK(tp_graph_destroy(graph));
    CHECK_OK(tp_event_destroy(input));
    CHECK(event_pending_for(output, 30));
    gate_open(&g);
    CHECK(event_done_within(output, EVENTUALLY_SECONDS));
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK_OK(tp_stream_synchronize(producer));
    gate_destroy(&g);
    CHECK_OK(tp_event_destroy(output));
    CHECK_OK(tp_stream_destroy(producer));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}
