/* Conformance, rule 16: events whose latest record was made inside a capture that
 * has ended, then recorded again outside, recorded in another capture, recorded
 * twice in one, destroyed, and an external one whose graph never ran.
 *
 * Such a record is a node of the capture's graph, never run: CUDA answers a query
 * of its native event with "invalid argument", an API error that compute-sanitizer
 * reports (issue 47, item 9). tpevent knows which native events those are and never
 * asks; on the fake GPU, whose runtime answers and counts such queries as CUDA
 * would (tests/gpu_fake/probe_calls.h), the count stays 0. */
#include "capture_support.h"
#include "native_runtime.h"
#include "tests/gpu_fake/probe_calls.h"

#include <stdio.h>
#include <string.h>

/* The fake GPU's counters; NULL on any other device (a real GPU: gpu-check's
 * compute-sanitizer stage counts the same calls there). */
static const probe_calls *fake_probes(const char *device)
{
    return strncmp(device, "cuda", 4) == 0 ? fake_gpu_symbol(PROBE_CALLS_FAKE_SYMBOL) : NULL;
}

static unsigned long captured_record_queries(const probe_calls *probes)
{
    return probes ? probes->captured_record_queries() : 0;
}

/* Records `event` alone inside a capture on `stream` and ends it: its graph. */
static tp_graph *capture_record(tp_stream *stream, tp_event *event)
{
    CHECK_OK(tp_stream_begin_capture(stream));
    CHECK_OK(tp_event_record(event, stream));
    tp_graph *graph = NULL;
    CHECK_OK(tp_stream_end_capture(stream, &graph));
    return graph;
}

TEST(rule16_records_of_an_ended_capture_are_not_queried)
{
    REQUIRE_CAPTURE(env);
    const probe_calls *probes = fake_probes(env->device);
    unsigned long before = captured_record_queries(probes);
    tp_stream *stream = new_stream(env->device);
    tp_event *outside_after = new_event(env->device, TP_EVENT_DEFAULT);
    tp_event *captured_again = new_event(env->device, TP_EVENT_DEFAULT);
    tp_event *twice = new_event(env->device, TP_EVENT_TIMING);
    tp_event *destroyed = new_event(env->device, TP_EVENT_DEFAULT);
    tp_event *queried = new_event(env->device, TP_EVENT_DEFAULT);
    tp_event *events[] = {outside_after, captured_again, twice, destroyed, queried};
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++)
        CHECK_OK(tp_event_record(events[i], stream)); /* a record that ran, first */
    CHECK_OK(tp_stream_synchronize(stream));

    CHECK_OK(tp_stream_begin_capture(stream));
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++)
        CHECK_OK(tp_event_record(events[i], stream));
    CHECK_OK(tp_event_record(twice, stream));
    tp_graph *graph = NULL;
    CHECK_OK(tp_stream_end_capture(stream, &graph));
    CHECK_OK(tp_graph_launch(graph, stream));
    CHECK_OK(tp_stream_synchronize(stream));

    bool done = false;
    CHECK_OK(tp_event_query(queried, &done)); /* the capture's mark goes */
    CHECK_OK(tp_event_record(queried, stream));
    CHECK_OK(tp_event_record(outside_after, stream));
    tp_graph *again = capture_record(stream, captured_again);
    CHECK_OK(tp_event_destroy(destroyed));
    CHECK_OK(tp_stream_synchronize(stream));

    /* An external event recorded in a graph that is never launched. */
    tp_event *external = new_event(env->device, TP_EVENT_EXTERNAL);
    tp_graph *unlaunched = capture_record(stream, external);
    CHECK_OK(tp_graph_destroy(unlaunched));
    CHECK_OK(tp_event_destroy(external));

    CHECK_OK(tp_graph_destroy(again));
    CHECK_OK(tp_graph_destroy(graph));
    CHECK_OK(tp_event_destroy(outside_after));
    CHECK_OK(tp_event_destroy(captured_again));
    CHECK_OK(tp_event_destroy(twice));
    CHECK_OK(tp_event_destroy(queried));
    CHECK_OK(tp_stream_destroy(stream));
    unsigned long queries = captured_record_queries(probes) - before;
    if (queries != 0)
        printf("%lu queries of native events recorded inside an ended capture\n", queries);
    CHECK(queries == 0);
    return 0;
}
