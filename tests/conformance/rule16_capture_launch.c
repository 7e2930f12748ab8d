/* Conformance, rule 16: a capture's calls and refusals, and its launches: captured
 * work runs only at each launch, after the launch stream's earlier work.
 *
 * What the graphs hold is portable: rule 15's host functions, captured on every
 * backend that captures (each launch runs them once), and records of
 * TP_EVENT_EXTERNAL events (seen through query and timestamps). What host functions
 * inside a launch may do, beside running once in order, is
 * rule16_capture_host_functions.c's. */
#include "capture_support.h"

#include <stdio.h>
#include <string.h>

/* Captures, on `stream`, what the tests launch: a host function adding to
 * `counter`, then a record of the external timing event `marker`. */
static tp_graph *capture_counter(tp_stream *stream, atomic_int *counter, tp_event *marker)
{
    CHECK_OK(tp_stream_begin_capture(stream));
    CHECK_OK(tp_stream_launch_host_fn(stream, counter_host_fn, counter));
    CHECK_OK(tp_event_record(marker, stream));
    tp_graph *graph = NULL;
    CHECK_OK(tp_stream_end_capture(stream, &graph));
    CHECK(graph != NULL);
    return graph;
}

/* A stream, the external marker and counter of capture_counter, and its graph. */
typedef struct counted {
    tp_stream *stream;
    tp_event *marker;
    atomic_int counter;
    tp_graph *graph;
} counted;

static void counted_init(counted *c, const char *device)
{
    c->stream = new_stream(device);
    c->marker = new_event(device, TP_EVENT_TIMING | TP_EVENT_EXTERNAL);
    atomic_init(&c->counter, 0);
    c->graph = capture_counter(c->stream, &c->counter, c->marker);
}

/* Destroys what is left (the graph and the stream may be gone already). */
static void counted_destroy(counted *c)
{
    if (c->graph)
        CHECK_OK(tp_graph_destroy(c->graph));
    CHECK_OK(tp_event_destroy(c->marker));
    if (c->stream)
        CHECK_OK(tp_stream_destroy(c->stream));
}

TEST(rule16_argument_checks)
{
    REQUIRE_CAPTURE(env);
    tp_stream *stream = new_stream(env->device);
    tp_graph *graph = NULL;
    bool capturing = true;
    CHECK_STATUS(tp_stream_begin_capture(NULL), TP_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(tp_stream_end_capture(NULL, &graph), TP_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(tp_stream_end_capture(stream, NULL), TP_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(tp_stream_is_capturing(NULL, &capturing), TP_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(tp_stream_is_capturing(stream, NULL), TP_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(tp_graph_launch(NULL, stream), TP_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(tp_graph_destroy(NULL), TP_ERR_INVALID_ARGUMENT);
    /* Not capturing: nothing to end. */
    CHECK_STATUS(tp_stream_end_capture(stream, &graph), TP_ERR_INVALID_ARGUMENT);
    CHECK(graph == NULL);
    CHECK_OK(tp_stream_is_capturing(stream, &capturing));
    CHECK(!capturing);
    CHECK_OK(tp_stream_begin_capture(stream));
    CHECK_OK(tp_stream_is_capturing(stream, &capturing));
    CHECK(capturing);
    CHECK_STATUS(tp_stream_begin_capture(stream), TP_ERR_CAPTURING);
    CHECK_OK(tp_stream_end_capture(stream, &graph));
    CHECK_OK(tp_stream_is_capturing(stream, &capturing));
    CHECK(!capturing);
    CHECK_STATUS(tp_graph_launch(graph, NULL), TP_ERR_INVALID_ARGUMENT);
    CHECK_OK(tp_graph_launch(graph, stream)); /* an empty graph */
    CHECK_OK(tp_stream_synchronize(stream));
    tp_device device;
    CHECK_OK(tp_graph_device(graph, &device));
    CHECK_OK(tp_graph_destroy(graph));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* Every device, whether it captures or not (issue 47 item 5): a stream is not
 * capturing until a capture begins, and a device that cannot capture has a
 * stream that never is, so the question is answered (false, TP_OK), never
 * TP_ERR_UNSUPPORTED. */
TEST(rule16_stream_that_cannot_capture_is_never_capturing)
{
    tp_stream *stream = new_stream(env->device);
    bool capturing = true;
    CHECK_STATUS(tp_stream_is_capturing(NULL, &capturing), TP_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(tp_stream_is_capturing(stream, NULL), TP_ERR_INVALID_ARGUMENT);
    CHECK_OK(tp_stream_is_capturing(stream, &capturing));
    CHECK(!capturing);
    tp_stream *default_stream = NULL;
    CHECK_OK(tp_stream_default(env->device, &default_stream));
    capturing = true;
    CHECK_OK(tp_stream_is_capturing(default_stream, &capturing));
    CHECK(!capturing);
    tp_status began = tp_stream_begin_capture(stream);
    if (began == TP_ERR_UNSUPPORTED) {
        /* A refused capture leaves the stream as it was. */
        capturing = true;
        CHECK_OK(tp_stream_is_capturing(stream, &capturing));
        CHECK(!capturing);
    } else {
        CHECK_OK(began);
        tp_graph *graph = NULL;
        CHECK_OK(tp_stream_end_capture(stream, &graph));
        CHECK_OK(tp_graph_destroy(graph));
    }
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* The CPU captures its default stream as any other; CUDA cannot capture its
 * legacy default stream, and tpevent says so before the runtime does. */
TEST(rule16_default_stream_capture_by_backend)
{
    REQUIRE_CAPTURE(env);
    tp_stream *stream = NULL;
    CHECK_OK(tp_stream_default(env->device, &stream));
    tp_status status = tp_stream_begin_capture(stream);
    if (strncmp(env->device, "cpu", 3) != 0) {
        CHECK_STATUS(status, TP_ERR_INVALID_ARGUMENT);
        CHECK(strstr(tp_last_error(), "default stream cannot be captured") != NULL);
        return 0;
    }
    CHECK_OK(status);
    tp_graph *graph = NULL;
    CHECK_OK(tp_stream_end_capture(stream, &graph));
    CHECK_OK(tp_graph_destroy(graph));
    return 0;
}

TEST(rule16_capturing_stream_query_and_synchronize_refused)
{
    REQUIRE_CAPTURE(env);
    tp_stream *stream = new_stream(env->device);
    CHECK_OK(tp_stream_begin_capture(stream));
    bool idle = false;
    CHECK_STATUS(tp_stream_query(stream, &idle), TP_ERR_CAPTURING);
    CHECK_ERROR_MENTIONS("capturing");
    CHECK_STATUS(tp_stream_synchronize(stream), TP_ERR_CAPTURING);
    CHECK_ERROR_MENTIONS("capturing");
    tp_graph *graph = NULL;
    CHECK_OK(tp_stream_end_capture(stream, &graph));
    CHECK(stream_is_idle(stream));
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK_OK(tp_graph_destroy(graph));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(rule16_event_recorded_in_open_capture_refused)
{
    REQUIRE_CAPTURE(env);
    tp_stream *stream = new_stream(env->device);
    tp_event *plain = new_event(env->device, TP_EVENT_TIMING);
    tp_event *external = new_event(env->device, TP_EVENT_TIMING | TP_EVENT_EXTERNAL);
    tp_event *outside = new_event(env->device, TP_EVENT_TIMING);
    tp_stream *other = new_stream(env->device);
    CHECK_OK(tp_event_record(outside, other));
    CHECK_OK(tp_event_synchronize(outside));
    CHECK_OK(tp_stream_begin_capture(stream));
    tp_event *events[2] = {plain, external};
    for (int i = 0; i < 2; i++) {
        tp_event *event = events[i];
        CHECK_OK(tp_event_record(event, stream));
        bool done = false;
        int64_t ns = -1;
        float ms = -1.0f;
        CHECK_STATUS(tp_event_query(event, &done), TP_ERR_CAPTURING);
        CHECK_ERROR_MENTIONS("capture");
        CHECK_STATUS(tp_event_synchronize(event), TP_ERR_CAPTURING);
        CHECK_ERROR_MENTIONS("capture");
        CHECK_STATUS(tp_event_timestamp(event, &ns), TP_ERR_CAPTURING);
        CHECK(ns == -1);
        CHECK_STATUS(tp_event_elapsed_time(outside, event, &ms), TP_ERR_CAPTURING);
        CHECK_STATUS(tp_event_elapsed_time(event, outside, &ms), TP_ERR_CAPTURING);
        CHECK(ms == -1.0f);
    }
    /* A record outside replaces the one inside, capture open or not. */
    CHECK_OK(tp_event_record(external, other));
    CHECK_OK(tp_event_synchronize(external));
    CHECK(event_is_done(external));
    tp_graph *graph = NULL;
    CHECK_OK(tp_stream_end_capture(stream, &graph));
    float ms = -1.0f;
    CHECK_OK(tp_event_elapsed_time(outside, external, &ms));
    /* Closed: outside the graph, a record made inside it is no record. */
    CHECK(event_is_done(plain));
    CHECK_OK(tp_event_synchronize(plain));
    expect_elapsed_refused(outside, plain, TP_ERR_NOT_RECORDED);
    CHECK_OK(tp_graph_destroy(graph));
    CHECK_OK(tp_event_destroy(outside));
    CHECK_OK(tp_event_destroy(external));
    CHECK_OK(tp_event_destroy(plain));
    CHECK_OK(tp_stream_destroy(other));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(rule16_captured_work_runs_only_at_launch)
{
    REQUIRE_CAPTURE(env);
    counted c;
    counted_init(&c, env->device);
    sleep_ms(50);
    CHECK(atomic_load(&c.counter) == 0);
    int64_t ns = -1;
    CHECK_STATUS(tp_event_timestamp(c.marker, &ns), TP_ERR_NOT_RECORDED);
    int64_t before = monotonic_ns();
    CHECK_OK(tp_graph_launch(c.graph, c.stream));
    CHECK_OK(tp_stream_synchronize(c.stream));
    int64_t after = monotonic_ns();
    CHECK(atomic_load(&c.counter) == 1);
    CHECK(event_is_done(c.marker));
    int64_t e = device_error_ns(env->device);
    ns = timestamp_of(c.marker);
    CHECK(ns >= before - e && ns <= after + e);
    counted_destroy(&c);
    return 0;
}

/* Launched on `launch` behind a closed gate: nothing of the graph runs before the
 * gate opens. */
static void check_launch_after_gate(tp_graph *graph, tp_stream *launch, atomic_int *counter, tp_event *marker,
                                    int expected_before)
{
    gate g;
    gate_init(&g);
    gate_launch(&g, launch);
    CHECK_OK(tp_graph_launch(graph, launch));
    CHECK(gate_entered_within(&g, 1, EVENTUALLY_SECONDS));
    CHECK(event_pending_for(marker, 50));
    CHECK(atomic_load(counter) == expected_before);
    gate_open(&g);
    CHECK_OK(tp_stream_synchronize(launch));
    CHECK(atomic_load(counter) == expected_before + 1);
    CHECK(event_is_done(marker));
    gate_destroy(&g);
}

TEST(rule16_launch_runs_after_prior_work_of_the_launch_stream)
{
    REQUIRE_CAPTURE(env);
    counted c;
    counted_init(&c, env->device);
    check_launch_after_gate(c.graph, c.stream, &c.counter, c.marker, 0);
    counted_destroy(&c);
    return 0;
}

TEST(rule16_launch_on_another_stream_of_the_device)
{
    REQUIRE_CAPTURE(env);
    counted c;
    counted_init(&c, env->device);
    tp_stream *other = new_stream(env->device);
    tp_stream *fallback = NULL;
    CHECK_OK(tp_stream_default(env->device, &fallback));
    check_launch_after_gate(c.graph, other, &c.counter, c.marker, 0);
    check_launch_after_gate(c.graph, fallback, &c.counter, c.marker, 1);
    CHECK_OK(tp_stream_destroy(c.stream)); /* the capture stream is not needed to launch */
    c.stream = NULL;
    check_launch_after_gate(c.graph, other, &c.counter, c.marker, 2);
    counted_destroy(&c);
    CHECK_OK(tp_stream_destroy(other));
    return 0;
}

TEST(rule16_launch_on_another_device_refused)
{
    REQUIRE_CAPTURE(env);
    REQUIRE_PEER(env);
    tp_stream *stream = new_stream(env->device);
    tp_stream *peer = new_stream(env->peer);
    tp_graph *graph = NULL;
    CHECK_OK(tp_stream_begin_capture(stream));
    CHECK_OK(tp_stream_end_capture(stream, &graph));
    CHECK_STATUS(tp_graph_launch(graph, peer), TP_ERR_DEVICE_MISMATCH);
    CHECK_OK(tp_graph_destroy(graph));
    CHECK_OK(tp_stream_destroy(peer));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(rule16_launched_many_times)
{
    REQUIRE_CAPTURE(env);
    enum { launches = 100 };
    counted c;
    counted_init(&c, env->device);
    int64_t previous = 0;
    for (int i = 1; i <= launches; i++) {
        CHECK_OK(tp_graph_launch(c.graph, c.stream));
        CHECK_OK(tp_stream_synchronize(c.stream));
        CHECK(atomic_load(&c.counter) == i);
        int64_t ns = timestamp_of(c.marker);
        CHECK(ns >= previous); /* records of one stream never go backwards (rule 13) */
        previous = ns;
    }
    /* Launched back to back, then waited for once. */
    for (int i = 0; i < launches; i++)
        CHECK_OK(tp_graph_launch(c.graph, c.stream));
    CHECK_OK(tp_event_synchronize(c.marker));
    CHECK(atomic_load(&c.counter) == 2 * launches);
    counted_destroy(&c);
    return 0;
}

TEST(rule16_graph_destroyed_with_launches_pending)
{
    REQUIRE_CAPTURE(env);
    counted c;
    counted_init(&c, env->device);
    gate g;
    gate_init(&g);
    gate_launch(&g, c.stream);
    for (int i = 0; i < 3; i++)
        CHECK_OK(tp_graph_launch(c.graph, c.stream));
    CHECK_OK(tp_graph_destroy(c.graph)); /* rule 9: the launches run on */
    c.graph = NULL;
    CHECK(gate_entered_within(&g, 1, EVENTUALLY_SECONDS));
    CHECK(!event_is_done(c.marker));
    gate_open(&g);
    CHECK_OK(tp_stream_synchronize(c.stream));
    CHECK(atomic_load(&c.counter) == 3);
    CHECK(event_is_done(c.marker));
    gate_destroy(&g);
    counted_destroy(&c);
    return 0;
}

/* A graph of more host functions than a thousand, captured, launched twice and
 * destroyed three times over: each runs once a launch, and what a round gave back
 * serves the next (on the GPUs each captured host function holds a counter of its
 * own, from slabs of 1,024). */
#define MANY_HOST_FNS 1500

TEST(rule16_graph_of_many_host_fns_runs_each_once_a_launch)
{
    REQUIRE_CAPTURE(env);
    tp_stream *stream = new_stream(env->device);
    atomic_int counter;
    for (int round = 0; round < 3; round++) {
        atomic_init(&counter, 0);
        CHECK_OK(tp_stream_begin_capture(stream));
        for (int i = 0; i < MANY_HOST_FNS; i++)
            CHECK_OK(tp_stream_launch_host_fn(stream, counter_host_fn, &counter));
        tp_graph *graph = NULL;
        CHECK_OK(tp_stream_end_capture(stream, &graph));
        CHECK_OK(tp_graph_launch(graph, stream));
        CHECK_OK(tp_graph_launch(graph, stream));
        bool idle = stream_idle_within(stream, EVENTUALLY_SECONDS);
        if (!idle || atomic_load(&counter) != 2 * MANY_HOST_FNS) {
            printf("round %d: %d host functions ran of %d; the stream %s\n", round, atomic_load(&counter),
                   2 * MANY_HOST_FNS, idle ? "idle" : "still busy");
            CHECK(false);
            break;
        }
        CHECK_OK(tp_graph_destroy(graph));
    }
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}
