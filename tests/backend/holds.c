/*
 * The backend interface's stream_hold (core/backend.h), on every backend, through
 * the table each stream points at: what the core holds a stream with while it
 * waits on another backend's record (rule 14). Each test says one thing.
 */
#include "../conformance/support.h"
#include "core/backend.h"

typedef struct hold {
    void (*release)(void *);
    void *arg;
} hold;

static hold hold_stream(tp_stream *stream)
{
    hold h = {NULL, NULL};
    CHECK(stream->backend->stream_hold != NULL);
    CHECK_OK(stream->backend->stream_hold(stream, &h.release, &h.arg));
    CHECK(h.release != NULL);
    return h;
}

/* Work after the hold waits for the release, and only for it. */
TEST(hold_later_work_waits_for_the_release)
{
    tp_stream *stream = new_stream(env->device);
    tp_event *before = new_event(env->device, TP_EVENT_DEFAULT);
    tp_event *after = new_event(env->device, TP_EVENT_DEFAULT);
    CHECK_OK(tp_event_record(before, stream));
    hold h = hold_stream(stream);
    CHECK_OK(tp_event_record(after, stream));
    CHECK(event_done_within(before, EVENTUALLY_SECONDS));
    CHECK(event_pending_for(after, 100));
    h.release(h.arg);
    CHECK(event_done_within(after, EVENTUALLY_SECONDS));
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK_OK(tp_event_destroy(after));
    CHECK_OK(tp_event_destroy(before));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* A release that comes before the stream reaches the hold: the stream does not
 * stop there. */
TEST(hold_released_before_it_is_reached)
{
    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(env->device);
    tp_event *after = new_event(env->device, TP_EVENT_DEFAULT);
    gate_launch(&g, stream);
    hold h = hold_stream(stream);
    CHECK_OK(tp_event_record(after, stream));
    h.release(h.arg);
    CHECK(event_pending_for(after, 20));
    gate_open(&g);
    CHECK(event_done_within(after, EVENTUALLY_SECONDS));
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK_OK(tp_event_destroy(after));
    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
    return 0;
}

/* Rule 9: the stream destroyed while held; the release still comes, and the
 * work recorded after the hold completes. */
TEST(hold_stream_destroyed_before_the_release)
{
    tp_stream *stream = new_stream(env->device);
    tp_event *after = new_event(env->device, TP_EVENT_DEFAULT);
    hold h = hold_stream(stream);
    CHECK_OK(tp_event_record(after, stream));
    CHECK_OK(tp_stream_destroy(stream));
    CHECK(event_pending_for(after, 50));
    h.release(h.arg);
    CHECK(event_done_within(after, EVENTUALLY_SECONDS));
    CHECK_OK(tp_device_synchronize(env->device));
    CHECK_OK(tp_event_destroy(after));
    return 0;
}

/* Many holds taken and released in turn on one stream, more than once: a counter
 * (GPU) taken again continues from its value, so no earlier hold is armed again. */
TEST(hold_many_in_turn)
{
    tp_stream *stream = new_stream(env->device);
    tp_event *after = new_event(env->device, TP_EVENT_DEFAULT);
    for (int round = 0; round < 3; round++) {
        enum { HOLDS = 8 };
        hold h[HOLDS];
        tp_event *marks[HOLDS];
        for (int i = 0; i < HOLDS; i++) {
            h[i] = hold_stream(stream);
            marks[i] = new_event(env->device, TP_EVENT_DEFAULT);
            CHECK_OK(tp_event_record(marks[i], stream));
        }
        for (int i = 0; i < HOLDS; i++) {
            CHECK(event_pending_for(marks[i], 10));
            h[i].release(h[i].arg);
            CHECK(event_done_within(marks[i], EVENTUALLY_SECONDS));
            CHECK_OK(tp_event_destroy(marks[i]));
        }
    }
    CHECK_OK(tp_event_record(after, stream));
    CHECK(event_done_within(after, EVENTUALLY_SECONDS));
    CHECK_OK(tp_event_destroy(after));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}
