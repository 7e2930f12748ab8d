/* Conformance, rule 17: tp_stream_hold holds a stream's later work until
 * tp_hold_release or its watchdog, exactly one of the two; several holds, destroy
 * while held, capture, default streams, the window, and a hold beside a wait across
 * backends. Each test says one thing. */
#include "across_backends.h"
#include "capture_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tp_hold *hold(tp_stream *stream, int64_t timeout_ns)
{
    tp_hold *h = NULL;
    CHECK_OK(tp_stream_hold(stream, timeout_ns, &h));
    CHECK(h != NULL);
    return h;
}

/* Work after the hold does not start until the release; work before it does. */
TEST(rule17_hold_later_work_waits_for_the_release)
{
    tp_stream *stream = new_stream(env->device);
    tp_event *before = new_event(env->device, TP_EVENT_DEFAULT);
    tp_event *after = new_event(env->device, TP_EVENT_DEFAULT);
    CHECK_OK(tp_event_record(before, stream));
    tp_hold *h = hold(stream, INT64_MAX);
    CHECK_OK(tp_event_record(after, stream));
    CHECK(event_done_within(before, EVENTUALLY_SECONDS));
    CHECK(event_pending_for(after, 50));
    CHECK_OK(tp_hold_release(h));
    CHECK(event_done_within(after, EVENTUALLY_SECONDS));
    CHECK_OK(tp_event_destroy(after));
    CHECK_OK(tp_event_destroy(before));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* The watchdog lets the stream go after the timeout; the release then says so. */
TEST(rule17_hold_watchdog_releases_and_the_release_says_so)
{
    tp_stream *stream = new_stream(env->device);
    tp_event *after = new_event(env->device, TP_EVENT_DEFAULT);
    tp_hold *h = hold(stream, 50 * 1000000LL);
    CHECK_OK(tp_event_record(after, stream));
    CHECK(event_done_within(after, EVENTUALLY_SECONDS));
    CHECK_STATUS(tp_hold_release(h), TP_ERR_NOT_READY);
    CHECK_ERROR_MENTIONS("ran out after 50 ms and released itself");
    CHECK_OK(tp_event_destroy(after));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* Two holds: later work waits for both, whichever is released first. */
TEST(rule17_hold_two_holds_later_work_waits_for_both)
{
    tp_stream *stream = new_stream(env->device);
    tp_event *after = new_event(env->device, TP_EVENT_DEFAULT);
    tp_hold *first = hold(stream, INT64_MAX);
    tp_hold *second = hold(stream, INT64_MAX);
    CHECK_OK(tp_event_record(after, stream));
    CHECK_OK(tp_hold_release(second));
    CHECK(event_pending_for(after, 50));
    CHECK_OK(tp_hold_release(first));
    CHECK(event_done_within(after, EVENTUALLY_SECONDS));
    CHECK_OK(tp_event_destroy(after));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* Past the stream's window the holds still hold, and are let go only once every
 * one of them is released (released last first here). */
TEST(rule17_hold_past_the_window_still_holds)
{
    tp_stream *stream = new_stream(env->device);
    int64_t window = 0;
    CHECK_OK(tp_stream_hold_window(stream, &window));
    int count = window < 300 ? (int)window + 5 : 300;
    tp_hold **holds = calloc((size_t)count, sizeof *holds);
    CHECK(holds != NULL);
    tp_event *after = new_event(env->device, TP_EVENT_DEFAULT);
    for (int i = 0; i < count; i++)
        holds[i] = hold(stream, INT64_MAX);
    CHECK_OK(tp_event_record(after, stream));
    for (int i = count - 1; i >= 1; i--)
        CHECK_OK(tp_hold_release(holds[i]));
    CHECK(event_pending_for(after, 50));
    CHECK_OK(tp_hold_release(holds[0]));
    CHECK(event_done_within(after, EVENTUALLY_SECONDS));
    free(holds);
    CHECK_OK(tp_event_destroy(after));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* Destroying a held stream is safe (rule 9): its work still runs once released. */
TEST(rule17_hold_destroy_while_held)
{
    tp_stream *stream = new_stream(env->device);
    tp_event *after = new_event(env->device, TP_EVENT_DEFAULT);
    tp_hold *h = hold(stream, INT64_MAX);
    CHECK_OK(tp_event_record(after, stream));
    CHECK_OK(tp_stream_destroy(stream));
    CHECK(event_pending_for(after, 20));
    CHECK_OK(tp_hold_release(h));
    CHECK(event_done_within(after, EVENTUALLY_SECONDS));
    CHECK_OK(tp_event_destroy(after));
    return 0;
}

/* The default stream can be held like any other. */
TEST(rule17_hold_default_stream)
{
    tp_stream *stream = NULL;
    CHECK_OK(tp_stream_default(env->device, &stream));
    tp_event *after = new_event(env->device, TP_EVENT_DEFAULT);
    tp_hold *h = hold(stream, INT64_MAX);
    CHECK_OK(tp_event_record(after, stream));
    CHECK(event_pending_for(after, 20));
    CHECK_OK(tp_hold_release(h));
    CHECK(event_done_within(after, EVENTUALLY_SECONDS));
    CHECK_OK(tp_event_destroy(after));
    return 0;
}

/* A capturing stream is refused; a held stream may begin a capture, and the hold
 * stays outside the graph (a launch after the release is not held). */
TEST(rule17_hold_and_capture)
{
    REQUIRE_CAPTURE(env);
    tp_stream *stream = new_stream(env->device);
    tp_hold *refused = NULL;
    CHECK_OK(tp_stream_begin_capture(stream));
    CHECK_STATUS(tp_stream_hold(stream, INT64_MAX, &refused), TP_ERR_CAPTURING);
    CHECK_ERROR_MENTIONS("capturing");
    CHECK(refused == NULL);
    tp_graph *graph = NULL;
    CHECK_OK(tp_stream_end_capture(stream, &graph));
    CHECK_OK(tp_graph_destroy(graph));

    tp_hold *h = hold(stream, INT64_MAX);
    tp_event *inside = new_event(env->device, TP_EVENT_EXTERNAL);
    CHECK_OK(tp_stream_begin_capture(stream));
    CHECK_OK(tp_event_record(inside, stream));
    CHECK_OK(tp_stream_end_capture(stream, &graph));
    CHECK_OK(tp_hold_release(h));
    CHECK_OK(tp_graph_launch(graph, stream));
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK_OK(tp_graph_destroy(graph));
    CHECK_OK(tp_event_destroy(inside));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* A hold and a wait across backends on one stream: later work waits for both,
 * whichever lets go first. */
static void hold_beside_wait(const char *other, const char *device, bool gate_first)
{
    across a;
    across_make(&a, other, device, TP_EVENT_DEFAULT);
    tp_hold *h = hold(a.waiting, INT64_MAX);
    CHECK_OK(tp_event_wait(a.event, a.waiting));
    CHECK_OK(tp_event_record(a.after, a.waiting));
    if (gate_first)
        gate_open(&a.gate);
    else
        CHECK_OK(tp_hold_release(h));
    CHECK(event_pending_for(a.after, 50));
    if (gate_first)
        CHECK_OK(tp_hold_release(h));
    across_finish(&a); /* opens the gate if still closed, then sees `after` reached */
}

TEST(rule17_hold_beside_a_wait_across_backends)
{
    REQUIRE_OTHER_BACKEND(env, other);
    hold_beside_wait(other, env->device, true);
    hold_beside_wait(other, env->device, false);
    return 0;
}

/* Bad arguments are refused with a message; nothing is held. */
TEST(rule17_hold_bad_arguments)
{
    tp_stream *stream = new_stream(env->device);
    tp_hold *h = NULL;
    CHECK_STATUS(tp_stream_hold(stream, 0, &h), TP_ERR_INVALID_ARGUMENT);
    CHECK_ERROR_MENTIONS("timeout_ns");
    CHECK_STATUS(tp_stream_hold(stream, -1, &h), TP_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(tp_stream_hold(NULL, INT64_MAX, &h), TP_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(tp_stream_hold(stream, INT64_MAX, NULL), TP_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(tp_hold_release(NULL), TP_ERR_INVALID_ARGUMENT);
    int64_t window = 0;
    CHECK_STATUS(tp_stream_hold_window(stream, NULL), TP_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(tp_stream_hold_window(NULL, &window), TP_ERR_INVALID_ARGUMENT);
    CHECK(h == NULL);
    CHECK_OK(tp_stream_synchronize(stream)); /* not held */
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* The window is reported: positive, unbounded (INT64_MAX) on the CPU. */
TEST(rule17_hold_window_is_reported)
{
    tp_stream *stream = new_stream(env->device);
    int64_t window = 0;
    CHECK_OK(tp_stream_hold_window(stream, &window));
    CHECK(window > 0);
    if (strncmp(env->device, "cpu", 3) == 0)
        CHECK(window == INT64_MAX);
    printf("%s: hold window %lld\n", env->device, (long long)window);
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}
