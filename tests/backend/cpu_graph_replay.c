/*
 * A graph's replay on the CPU does what submitting its work one by one does, and
 * no more: a record of an event without timing needs no task of the stream's
 * worker (backends/cpu/cpu_graph.c), so a graph of such records replayed on an idle
 * stream is reached at once, as the same records made one by one are. A replay
 * that pushed a task per record made the worker run as many tasks again as one by
 * one (bench/graph: half records, half host functions) and was no faster.
 */
#include "check.h"

#include <stdio.h>

#define LAUNCHES 200
#define RECORDS 4

TEST(replayed_records_without_timing_on_an_idle_stream_are_reached_at_once)
{
    tp_stream *stream = NULL;
    CHECK_OK(tp_stream_create(&stream, "cpu:0", 0));
    tp_event *events[RECORDS];
    for (int i = 0; i < RECORDS; i++)
        CHECK_OK(tp_event_create(&events[i], "cpu:0", TP_EVENT_EXTERNAL));
    CHECK_OK(tp_stream_begin_capture(stream));
    for (int i = 0; i < RECORDS; i++)
        CHECK_OK(tp_event_record(events[i], stream));
    tp_graph *graph = NULL;
    CHECK_OK(tp_stream_end_capture(stream, &graph));

    int pending = 0;
    for (int launch = 0; launch < LAUNCHES; launch++) {
        CHECK_OK(tp_stream_synchronize(stream));
        CHECK_OK(tp_graph_launch(graph, stream));
        bool done = false;
        CHECK_OK(tp_event_query(events[RECORDS - 1], &done));
        pending += !done;
    }
    CHECK_OK(tp_stream_synchronize(stream));
    if (pending != 0)
        printf("%d of %d launches left their last record pending\n", pending, LAUNCHES);
    CHECK(pending == 0);

    CHECK_OK(tp_graph_destroy(graph));
    for (int i = 0; i < RECORDS; i++)
        CHECK_OK(tp_event_destroy(events[i]));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}
