/* Conformance, rule 16 and the timeline (core/trace.c, core/trace_pool.c): a trace takes
 * no mark on a capturing stream. A mark recorded there would be a node of the graph,
 * not a point of this run (never reached before a launch, and in someone else's
 * capture a node they did not ask for), so ranges pushed or popped inside a capture,
 * flows from records and to waits made inside one, and flows from a record whose
 * latest record is the graph's are left out of the file; what is outside the capture
 * is traced as ever. Read from the written file, as a user's viewer would. */
#include "capture_support.h"

#include <stdio.h>
#include <stdlib.h>

/* `name` as a slice's name in the trace's JSON. */
static int slices_named(const char *trace, const char *name)
{
    char needle[128];
    snprintf(needle, sizeof needle, "\"name\":\"%s\"", name);
    return text_occurrences(trace, needle);
}

TEST(rule16_trace_leaves_out_what_a_capture_records)
{
    REQUIRE_CAPTURE(env);
    tp_stream *s = new_stream(env->device), *t = new_stream(env->device);
    tp_event *outside = new_event(env->device, TP_EVENT_DEFAULT);
    tp_event *inside = new_event(env->device, TP_EVENT_DEFAULT);
    tp_graph *graph = NULL;
    CHECK_OK(tp_trace_start());
    CHECK_OK(tp_range_push(s, "outer"));
    CHECK_OK(tp_event_record(outside, s));
    CHECK_OK(tp_stream_wait_event(t, outside)); /* the one flow: s to t */

    CHECK_OK(tp_stream_begin_capture(s));
    CHECK_OK(tp_range_push(s, "captured"));
    CHECK_OK(tp_event_record(inside, s));
    CHECK_OK(tp_event_record(outside, s)); /* its latest record is now the graph's */
    CHECK_OK(tp_range_pop(s));
    CHECK_OK(tp_range_push(s, "pushed inside, popped outside"));
    CHECK_OK(tp_stream_end_capture(s, &graph));
    CHECK_OK(tp_range_pop(s));
    CHECK_OK(tp_graph_launch(graph, s));
    /* On the graph's record, as if never made: waits for nothing, and no flow (the
     * flow from outside's earlier record would run from a point it does not wait for). */
    CHECK_OK(tp_stream_wait_event(t, outside));
    CHECK_OK(tp_stream_wait_event(t, inside));
    CHECK_OK(tp_range_pop(s)); /* outer */
    CHECK_OK(tp_stream_synchronize(s));
    CHECK_OK(tp_stream_synchronize(t));

    char *trace = trace_stop_text();
    CHECK(slices_named(trace, "outer") == 1);
    CHECK(slices_named(trace, "captured") == 0);
    CHECK(slices_named(trace, "pushed inside, popped outside") == 0);
    CHECK(text_occurrences(trace, "\"flow_out\":true") == 1);
    CHECK(text_occurrences(trace, "\"flow_in\":true") == 1);
    free(trace);
    CHECK_OK(tp_graph_destroy(graph));
    CHECK_OK(tp_event_destroy(inside));
    CHECK_OK(tp_event_destroy(outside));
    CHECK_OK(tp_stream_destroy(t));
    CHECK_OK(tp_stream_destroy(s));
    return 0;
}

/* A stream whose records and waits were all made inside a capture has nothing of this
 * run to show: no track of its own in the file. */
TEST(rule16_trace_makes_no_track_for_a_stream_seen_only_inside_a_capture)
{
    REQUIRE_CAPTURE(env);
    tp_stream *traced = new_stream(env->device), *captured = new_stream(env->device);
    tp_event *before = new_event(env->device, TP_EVENT_DEFAULT);
    tp_event *inside = new_event(env->device, TP_EVENT_DEFAULT);
    tp_graph *graph = NULL;
    CHECK_OK(tp_trace_start());
    CHECK_OK(tp_range_push(traced, "traced"));
    CHECK_OK(tp_event_record(before, traced));
    CHECK_OK(tp_range_pop(traced));
    CHECK_OK(tp_stream_begin_capture(captured));
    CHECK_OK(tp_event_record(inside, captured));
    CHECK_OK(tp_stream_wait_event(captured, inside));
    CHECK_OK(tp_stream_end_capture(captured, &graph));
    CHECK_OK(tp_stream_synchronize(traced));

    char *trace = trace_stop_text();
    CHECK(slices_named(trace, "traced") == 1);
    CHECK(slices_named(trace, "thread_name") == 1); /* the traced stream's track alone */
    CHECK(text_occurrences(trace, "\"flow_out\":true") == 0);
    free(trace);
    CHECK_OK(tp_graph_destroy(graph));
    CHECK_OK(tp_event_destroy(inside));
    CHECK_OK(tp_event_destroy(before));
    CHECK_OK(tp_stream_destroy(captured));
    CHECK_OK(tp_stream_destroy(traced));
    return 0;
}
