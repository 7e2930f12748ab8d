/* Conformance, rules 10 and 16: calls into a stream on one thread while another
 * begins or ends the stream's capture, or makes the stream join one. Each call
 * that succeeds is either in the graph or outside the capture; none is lost, none
 * holds the stream for good, none spoils the capture. A call the capture's begin
 * or end overtook may be refused with TP_ERR_CAPTURING.
 *
 * The windows these races hit are a few runtime calls wide: each test guards its
 * rule (widened by a sleep, the old orders failed them), it does not hit every
 * regression on every run. */
#include "capture_support.h"

#include <pthread.h>
#include <stdio.h>

#define RACING_CALLS_MAX 200

typedef struct racing_calls racing_calls;
struct racing_calls {
    tp_stream *stream;
    tp_event *event;
    tp_stream *origin;     /* the capture's; `stream` itself but where it joins one */
    tp_event *fork, *join; /* the join's records (join_capture_while_calls_go_on) */
    tp_status (*call)(racing_calls *r);
    atomic_int counter, started, stop;
    int succeeded, refused, failed;
};

/* Until told to stop (and a few calls more). */
static void *call_until_told_to_stop(void *arg)
{
    racing_calls *r = arg;
    for (int i = 0; i < RACING_CALLS_MAX && atomic_load(&r->stop) < 4; i++) {
        if (atomic_load(&r->stop) > 0)
            atomic_fetch_add(&r->stop, 1);
        tp_status status = r->call(r);
        r->succeeded += status == TP_OK;
        r->refused += status == TP_ERR_CAPTURING;
        r->failed += status != TP_OK && status != TP_ERR_CAPTURING;
        atomic_store(&r->started, 1);
    }
    return NULL;
}

/* Begins the capture, has a thread call into the stream, and ends the capture once
 * the first call returned: the capture's end is TP_OK and the calls either
 * succeeded or were refused as capturing. */
static tp_graph *end_capture_while_calls_go_on(racing_calls *r)
{
    CHECK_OK(tp_stream_begin_capture(r->stream));
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, call_until_told_to_stop, r) == 0);
    while (!atomic_load(&r->started))
        ; /* the end comes while calls go on */
    tp_graph *graph = NULL;
    CHECK_OK(tp_stream_end_capture(r->stream, &graph));
    atomic_store(&r->stop, 1);
    CHECK(pthread_join(thread, NULL) == 0);
    CHECK(r->failed == 0);
    return graph;
}

/* The same around the capture's begin: the calls go on while it begins, and the
 * capture ends once they stopped. */
static tp_graph *begin_capture_while_calls_go_on(racing_calls *r)
{
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, call_until_told_to_stop, r) == 0);
    while (!atomic_load(&r->started))
        ; /* the begin comes while calls go on */
    CHECK_OK(tp_stream_begin_capture(r->stream));
    atomic_store(&r->stop, 1);
    CHECK(pthread_join(thread, NULL) == 0);
    tp_graph *graph = NULL;
    CHECK_OK(tp_stream_end_capture(r->stream, &graph));
    CHECK(r->failed == 0);
    return graph;
}

static tp_status launch_counter_host_fn(racing_calls *r)
{
    return tp_stream_launch_host_fn(r->stream, counter_host_fn, &r->counter);
}

/* Launches on r->stream that succeeded ran once each outside the graph or once at
 * each of two launches of it on `origin`; both streams are idle after. */
static bool host_fns_ran_once_or_in_the_graph(tp_stream *origin, tp_graph *graph, racing_calls *r, int round)
{
    bool idle = stream_idle_within(r->stream, EVENTUALLY_SECONDS); /* the launches outside the capture ran */
    int ran_at_once = atomic_load(&r->counter);
    for (int i = 0; i < 2 && idle; i++)
        CHECK_OK(tp_graph_launch(graph, origin));
    idle = idle && stream_idle_within(origin, EVENTUALLY_SECONDS) && stream_idle_within(r->stream, 0);
    int after = atomic_load(&r->counter) - ran_at_once;
    if (idle && ran_at_once + after / 2 == r->succeeded && after % 2 == 0)
        return true;
    printf(
        "round %d: %d launches succeeded, %d refused; %d ran at once, then %d after two launches of the graph; the "
        "stream %s\n",
        round, r->succeeded, r->refused, ran_at_once, after, idle ? "idle" : "held for good");
    return false;
}

/* The same while a wait on an event recorded inside another stream's capture makes
 * the stream join that capture; a record on it joins it back before the end. */
static tp_graph *join_capture_while_calls_go_on(racing_calls *r)
{
    CHECK_OK(tp_stream_begin_capture(r->origin));
    CHECK_OK(tp_event_record(r->fork, r->origin));
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, call_until_told_to_stop, r) == 0);
    while (!atomic_load(&r->started))
        ; /* the join comes while calls go on */
    CHECK_OK(tp_event_wait(r->fork, r->stream));
    atomic_store(&r->stop, 1);
    CHECK(pthread_join(thread, NULL) == 0);
    CHECK_OK(tp_event_record(r->join, r->stream));
    CHECK_OK(tp_event_wait(r->join, r->origin));
    tp_graph *graph = NULL;
    CHECK_OK(tp_stream_end_capture(r->origin, &graph));
    CHECK(r->failed == 0);
    return graph;
}

/* Twenty rounds of `race` while a thread launches host functions; `joined`: the
 * capture's origin is another stream, which the launches' stream joins. */
static void host_fns_launched_in_a_race(const test_env *env, tp_graph *(*race)(racing_calls *r), bool joined)
{
    tp_stream *stream = new_stream(env->device);
    tp_stream *origin = joined ? new_stream(env->device) : stream;
    tp_event *fork = new_event(env->device, TP_EVENT_DEFAULT);
    tp_event *join = new_event(env->device, TP_EVENT_DEFAULT);
    for (int round = 0; round < 20; round++) {
        racing_calls r = {
            .stream = stream, .origin = origin, .fork = fork, .join = join, .call = launch_counter_host_fn};
        tp_graph *graph = race(&r);
        bool ran_right = host_fns_ran_once_or_in_the_graph(origin, graph, &r, round);
        CHECK(ran_right);
        if (!ran_right)
            break;
        CHECK_OK(tp_graph_destroy(graph));
    }
    CHECK_OK(tp_event_destroy(join));
    CHECK_OK(tp_event_destroy(fork));
    if (joined)
        CHECK_OK(tp_stream_destroy(origin));
    CHECK_OK(tp_stream_destroy(stream));
}

TEST(rule16_host_fns_launched_while_another_thread_ends_the_capture)
{
    REQUIRE_CAPTURE(env);
    host_fns_launched_in_a_race(env, end_capture_while_calls_go_on, false);
    return 0;
}

TEST(rule16_host_fns_launched_while_another_thread_begins_the_capture)
{
    REQUIRE_CAPTURE(env);
    host_fns_launched_in_a_race(env, begin_capture_while_calls_go_on, false);
    return 0;
}

TEST(rule16_host_fns_launched_while_another_thread_makes_the_stream_join_a_capture)
{
    REQUIRE_CAPTURE(env);
    host_fns_launched_in_a_race(env, join_capture_while_calls_go_on, true);
    return 0;
}

static tp_status wait_on_the_event(racing_calls *r)
{
    return tp_event_wait(r->event, r->stream);
}

/* The same with waits on an event recorded outside the capture: refused inside it
 * (rule 16: not TP_EVENT_EXTERNAL), a plain wait after it. One that reached the
 * runtime as outside the capture while the runtime still captured would spoil the
 * capture (CUDA: cudaErrorStreamCaptureIsolation) and fail its end. */
TEST(rule16_waits_made_while_another_thread_ends_the_capture)
{
    REQUIRE_CAPTURE(env);
    tp_stream *stream = new_stream(env->device);
    tp_stream *other = new_stream(env->device);
    tp_event *outside = new_event(env->device, TP_EVENT_DEFAULT);
    CHECK_OK(tp_event_record(outside, other));
    CHECK_OK(tp_stream_synchronize(other));
    for (int round = 0; round < 20; round++) {
        racing_calls r = {.stream = stream, .event = outside, .call = wait_on_the_event};
        tp_graph *graph = end_capture_while_calls_go_on(&r);
        CHECK_OK(tp_graph_launch(graph, stream));
        CHECK(stream_idle_within(stream, EVENTUALLY_SECONDS));
        CHECK_OK(tp_graph_destroy(graph));
    }
    CHECK_OK(tp_event_destroy(outside));
    CHECK_OK(tp_stream_destroy(other));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}
