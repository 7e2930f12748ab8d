/*
 * The backend interface's stream_launch_empty (core/backend.h), on every backend
 * that has it, through the table each stream points at: the least work a user's
 * call can be, which tp_measure times for its floor (rule 18). It runs in stream
 * order, and nothing of it is left to free.
 */
#include "../conformance/support.h"
#include "core/backend.h"

#include <stdio.h>

static int skip_without_empty_work(const tp_stream *stream)
{
    if (stream->backend->stream_launch_empty)
        return 0;
    printf(
        "skipped: the %s backend has no stream_launch_empty: tp_measure's floor uses a host function that "
        "does nothing there\n",
        stream->backend->name);
    return TEST_SKIP;
}

/* Queued behind work not yet done, it is done only after it; then at once. */
TEST(empty_work_runs_in_stream_order)
{
    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(env->device);
    int skip = skip_without_empty_work(stream);
    if (skip) {
        CHECK_OK(tp_stream_destroy(stream));
        return skip;
    }
    tp_event *after = new_event(env->device, TP_EVENT_DEFAULT);
    /* Made at the first launch, which may wait for the device's streams (CUDA loads
     * its kernel with the context synchronized): before the gate, not behind it. */
    CHECK_OK(stream->backend->stream_launch_empty(stream));
    gate_launch(&g, stream);
    CHECK_OK(stream->backend->stream_launch_empty(stream));
    CHECK_OK(tp_event_record(after, stream));
    CHECK(event_pending_for(after, 50));
    gate_open(&g);
    CHECK(event_done_within(after, EVENTUALLY_SECONDS));
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK_OK(tp_event_destroy(after));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* Many in a row, on two streams of the device: each stream drains; the work made
 * at the first launch is shared and kept, never remade or leaked (ASan, valgrind). */
TEST(empty_work_many_launches_on_two_streams)
{
    tp_stream *streams[2] = {new_stream(env->device), new_stream(env->device)};
    int skip = skip_without_empty_work(streams[0]);
    for (int s = 0; s < 2 && !skip; s++) {
        for (int i = 0; i < 200; i++)
            CHECK_OK(streams[s]->backend->stream_launch_empty(streams[s]));
        CHECK_OK(tp_stream_synchronize(streams[s]));
    }
    for (int s = 0; s < 2; s++)
        CHECK_OK(tp_stream_destroy(streams[s]));
    return skip;
}
