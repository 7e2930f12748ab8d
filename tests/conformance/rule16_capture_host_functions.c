/* Conformance, rule 16 with rule 15: host functions inside a capture, on every
 * backend that captures. At each launch of the graph fn runs once, in stream
 * order with the graph's other work, on a tpevent thread (never a runtime's one
 * callback thread): so host functions of graphs launched on two streams run at
 * once, one that blocks holds back its own launch only, and fn may call tpevent.
 * Destroying the graph or its capture stream with launches pending, and exit with
 * a launched host function blocked for good, are safe (rule 9).
 *
 * Waits that could hang on a wrong implementation are bounded (EVENTUALLY_SECONDS),
 * so that a failure is a failed check, not CTest's timeout. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "capture_support.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EVENTUALLY_NS ((int64_t)(EVENTUALLY_SECONDS * 1e9))

/* A graph of one host function, captured on `stream`. */
static tp_graph *capture_host_fn(tp_stream *stream, void (*fn)(void *), void *arg)
{
    CHECK_OK(tp_stream_begin_capture(stream));
    CHECK_OK(tp_stream_launch_host_fn(stream, fn, arg));
    tp_graph *graph = NULL;
    CHECK_OK(tp_stream_end_capture(stream, &graph));
    CHECK(graph != NULL);
    return graph;
}

/* True if the log holds `copies` copies of `sequence` (of `length` values) and
 * nothing else: each launch ran each host function once, in order. */
static bool log_is_repeated(order_log *log, const int *sequence, int length, int copies)
{
    pthread_mutex_lock(&log->lock);
    bool same = log->count == length * copies;
    for (int i = 0; same && i < log->count; i++)
        same = log->values[i] == sequence[i % length];
    int count = log->count;
    pthread_mutex_unlock(&log->lock);
    if (!same)
        printf("the log holds %d values, not %d copies of the launch's %d\n", count, copies, length);
    return same;
}

/* A host function that logs its value and the CLOCK_MONOTONIC time it ran at. */
typedef struct stamped_item {
    order_item logged;
    _Atomic int64_t ran_ns; /* at its latest run */
} stamped_item;

static void stamped_host_fn(void *arg)
{
    stamped_item *item = arg;
    atomic_store(&item->ran_ns, monotonic_ns());
    order_log_host_fn(&item->logged);
}

/* ns (a host time read inside a host function) lies between the timestamps of
 * the records before and after it, within the device's clock error e (rule 13). */
static bool ran_between(int64_t ns, tp_event *before, tp_event *after, int64_t e)
{
    int64_t t0 = timestamp_of(before), t1 = timestamp_of(after);
    if (ns >= t0 - e && ns <= t1 + e)
        return true;
    printf("a host function ran at %lld ns, outside its records' [%lld, %lld] (error %lld ns)\n", (long long)ns,
           (long long)t0, (long long)t1, (long long)e);
    return false;
}

/* record, fn 1, record, fn 2, record: each launch runs both once, each between
 * its records as that launch made them. */
TEST(rule16_captured_host_fns_run_once_per_launch_between_external_records)
{
    REQUIRE_CAPTURE(env);
    enum { synchronized_launches = 10, back_to_back = 50 };
    static const int sequence[] = {1, 2};
    tp_stream *stream = new_stream(env->device);
    tp_event *marks[3];
    for (int i = 0; i < 3; i++)
        marks[i] = new_event(env->device, TP_EVENT_TIMING | TP_EVENT_EXTERNAL);
    order_log log;
    order_log_init(&log);
    stamped_item items[2] = {{{&log, 1}, 0}, {{&log, 2}, 0}};
    CHECK_OK(tp_stream_begin_capture(stream));
    for (int i = 0; i < 2; i++) {
        CHECK_OK(tp_event_record(marks[i], stream));
        CHECK_OK(tp_stream_launch_host_fn(stream, stamped_host_fn, &items[i]));
    }
    CHECK_OK(tp_event_record(marks[2], stream));
    tp_graph *graph = NULL;
    CHECK_OK(tp_stream_end_capture(stream, &graph));
    CHECK(log_is_repeated(&log, sequence, 2, 0)); /* captured, not run */

    int64_t e = device_error_ns(env->device), previous = 0;
    for (int launch = 1; launch <= synchronized_launches; launch++) {
        CHECK_OK(tp_graph_launch(graph, stream));
        CHECK_OK(tp_stream_synchronize_for(stream, EVENTUALLY_NS));
        CHECK(log_is_repeated(&log, sequence, 2, launch));
        int64_t first = atomic_load(&items[0].ran_ns), second = atomic_load(&items[1].ran_ns);
        CHECK(first > previous); /* ran at this launch */
        CHECK(ran_between(first, marks[0], marks[1], e));
        CHECK(ran_between(second, marks[1], marks[2], e));
        previous = second;
    }
    for (int i = 0; i < back_to_back; i++)
        CHECK_OK(tp_graph_launch(graph, stream));
    CHECK_OK(tp_stream_synchronize_for(stream, EVENTUALLY_NS));
    CHECK(log_is_repeated(&log, sequence, 2, synchronized_launches + back_to_back));

    CHECK_OK(tp_graph_destroy(graph));
    for (int i = 0; i < 3; i++)
        CHECK_OK(tp_event_destroy(marks[i]));
    order_log_destroy(&log);
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* Each of two host functions says it is there, then waits (bounded) for the
 * other; `met` counts those that saw the other in time. The arrivals of one
 * round are a pair, so that the same graphs launch again. On a runtime's one
 * callback thread the first waits in vain. */
typedef struct meeting {
    atomic_int arrived;
    atomic_int met;
} meeting;

static void meeting_host_fn(void *arg)
{
    meeting *m = arg;
    int mine = atomic_fetch_add(&m->arrived, 1) + 1;
    int pair_complete = (mine + 1) / 2 * 2;
    if (flag_reaches_within(&m->arrived, pair_complete, EVENTUALLY_SECONDS))
        atomic_fetch_add(&m->met, 1);
}

TEST(rule16_host_fns_of_graphs_launched_on_two_streams_run_at_once)
{
    REQUIRE_CAPTURE(env);
    enum { rounds = 3 };
    meeting m;
    atomic_init(&m.arrived, 0);
    atomic_init(&m.met, 0);
    tp_stream *streams[2] = {new_stream(env->device), new_stream(env->device)};
    tp_graph *graphs[2];
    for (int i = 0; i < 2; i++)
        graphs[i] = capture_host_fn(streams[i], meeting_host_fn, &m);
    for (int round = 1; round <= rounds; round++) {
        for (int i = 0; i < 2; i++)
            CHECK_OK(tp_graph_launch(graphs[i], streams[i]));
        for (int i = 0; i < 2; i++)
            CHECK_OK(tp_stream_synchronize_for(streams[i], 3 * EVENTUALLY_NS));
        CHECK(atomic_load(&m.arrived) == 2 * round);
        /* Fewer: one ran only after the other had returned. */
        CHECK(atomic_load(&m.met) == 2 * round);
    }
    for (int i = 0; i < 2; i++) {
        CHECK_OK(tp_graph_destroy(graphs[i]));
        CHECK_OK(tp_stream_destroy(streams[i]));
    }
    return 0;
}

/* What a host function inside a launch does with tpevent, each call's status
 * kept: the first that failed, and its message, are the test's to report. */
typedef struct calls_in_launch {
    const char *device;
    tp_stream *other; /* never captures */
    atomic_int runs;  /* runs whose every call succeeded */
    tp_status failed;
    char message[256];
} calls_in_launch;

static bool call_ok(calls_in_launch *c, tp_status status, const char *call)
{
    if (status != TP_OK && c->failed == TP_OK) {
        c->failed = status;
        snprintf(c->message, sizeof c->message, "%s: %s", call, tp_last_error());
    }
    return status == TP_OK;
}

/* An event made, a host function and a record on the other stream, the record
 * waited for (it comes after that host function: a runtime's one callback
 * thread could not run both), queried, and destroyed. */
static void calling_host_fn(void *arg)
{
    calls_in_launch *c = arg;
    tp_event *event = NULL;
    atomic_int ran = 0;
    bool done = false;
    bool ok = call_ok(c, tp_event_create(&event, c->device, TP_EVENT_TIMING), "tp_event_create") &&
              call_ok(c, tp_stream_launch_host_fn(c->other, flag_host_fn, &ran), "tp_stream_launch_host_fn") &&
              call_ok(c, tp_event_record(event, c->other), "tp_event_record") &&
              call_ok(c, tp_event_synchronize_for(event, EVENTUALLY_NS), "tp_event_synchronize_for") &&
              call_ok(c, tp_event_query(event, &done), "tp_event_query") &&
              call_ok(c, tp_stream_synchronize_for(c->other, EVENTUALLY_NS), "tp_stream_synchronize_for");
    if (event != NULL)
        ok = call_ok(c, tp_event_destroy(event), "tp_event_destroy") && ok;
    if (ok && done && atomic_load(&ran) == 1)
        atomic_fetch_add(&c->runs, 1);
}

TEST(rule16_host_fn_in_a_launch_may_call_tpevent)
{
    REQUIRE_CAPTURE(env);
    tp_stream *stream = new_stream(env->device);
    calls_in_launch c = {.device = env->device, .other = new_stream(env->device), .failed = TP_OK, .message = ""};
    atomic_init(&c.runs, 0);
    tp_graph *graph = capture_host_fn(stream, calling_host_fn, &c);
    for (int launch = 1; launch <= 3; launch++) {
        CHECK_OK(tp_graph_launch(graph, stream));
        CHECK_OK(tp_stream_synchronize_for(stream, 3 * EVENTUALLY_NS));
        if (c.failed != TP_OK)
            check_failed(__FILE__, __LINE__, "inside launch %d, %s returned %s", launch, c.message,
                         tp_status_name(c.failed));
        CHECK(atomic_load(&c.runs) == launch);
    }
    CHECK_OK(tp_graph_destroy(graph));
    CHECK_OK(tp_stream_destroy(c.other));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* A launch whose host function blocks holds back its own stream only: another
 * graph's launch on another stream runs its host function and finishes. */
TEST(rule16_blocked_host_fn_in_a_launch_delays_no_other_launch)
{
    REQUIRE_CAPTURE(env);
    gate g;
    gate_init(&g);
    atomic_int ran = 0;
    tp_stream *held = new_stream(env->device), *other = new_stream(env->device);
    tp_graph *blocking = capture_host_fn(held, gate_host_fn, &g);
    tp_graph *counting = capture_host_fn(other, counter_host_fn, &ran);

    CHECK_OK(tp_graph_launch(blocking, held));
    CHECK(gate_entered_within(&g, 1, EVENTUALLY_SECONDS));
    for (int launch = 1; launch <= 2; launch++) {
        CHECK_OK(tp_graph_launch(counting, other));
        CHECK(flag_reaches_within(&ran, launch, EVENTUALLY_SECONDS));
        CHECK(stream_idle_within(other, EVENTUALLY_SECONDS));
    }
    CHECK(gate_passed(&g) == 0);
    CHECK(!stream_is_idle(held));
    gate_open(&g);
    CHECK_OK(tp_stream_synchronize_for(held, EVENTUALLY_NS));
    CHECK(gate_passed(&g) == 1);
    CHECK(atomic_load(&ran) == 2);

    CHECK_OK(tp_graph_destroy(counting));
    CHECK_OK(tp_graph_destroy(blocking));
    CHECK_OK(tp_stream_destroy(other));
    CHECK_OK(tp_stream_destroy(held));
    gate_destroy(&g);
    return 0;
}

/* The graph destroyed while its first launch's host function runs, two more
 * launches behind it: all three still run both host functions (rule 9). */
TEST(rule16_graph_with_host_fns_destroyed_while_its_launches_run)
{
    REQUIRE_CAPTURE(env);
    enum { launches = 3 };
    gate g;
    gate_init(&g);
    atomic_int counter = 0;
    tp_stream *stream = new_stream(env->device);
    CHECK_OK(tp_stream_begin_capture(stream));
    gate_launch(&g, stream);
    CHECK_OK(tp_stream_launch_host_fn(stream, counter_host_fn, &counter));
    tp_graph *graph = NULL;
    CHECK_OK(tp_stream_end_capture(stream, &graph));

    for (int i = 0; i < launches; i++)
        CHECK_OK(tp_graph_launch(graph, stream));
    CHECK(gate_entered_within(&g, 1, EVENTUALLY_SECONDS));
    CHECK_OK(tp_graph_destroy(graph));
    CHECK(atomic_load(&counter) == 0);
    gate_open(&g);
    CHECK_OK(tp_stream_synchronize_for(stream, EVENTUALLY_NS));
    CHECK(gate_passed(&g) == launches);
    CHECK(atomic_load(&counter) == launches);

    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
    return 0;
}

/* The stream the host function was captured on is gone before the first
 * launch: nothing of the graph's host functions belongs to it. */
TEST(rule16_graph_runs_host_fns_after_its_capture_stream_is_destroyed)
{
    REQUIRE_CAPTURE(env);
    atomic_int counter = 0;
    tp_stream *capturing = new_stream(env->device), *launch = new_stream(env->device);
    tp_event *marker = new_event(env->device, TP_EVENT_EXTERNAL);
    CHECK_OK(tp_stream_begin_capture(capturing));
    CHECK_OK(tp_stream_launch_host_fn(capturing, counter_host_fn, &counter));
    CHECK_OK(tp_event_record(marker, capturing));
    tp_graph *graph = NULL;
    CHECK_OK(tp_stream_end_capture(capturing, &graph));
    CHECK_OK(tp_stream_destroy(capturing));

    for (int i = 1; i <= 2; i++) {
        CHECK_OK(tp_graph_launch(graph, launch));
        CHECK_OK(tp_stream_synchronize_for(launch, EVENTUALLY_NS));
        CHECK(atomic_load(&counter) == i);
        CHECK(event_is_done(marker));
    }
    CHECK_OK(tp_graph_destroy(graph));
    CHECK_OK(tp_event_destroy(marker));
    CHECK_OK(tp_stream_destroy(launch));
    return 0;
}

/* Fork/join: the host function of the stream that joined the capture runs once
 * per launch, after the origin's record before the fork and before its record
 * after the join. Launched on the origin, then on the joined stream itself. */
TEST(rule16_host_fns_of_a_joined_stream_run_once_per_launch)
{
    REQUIRE_CAPTURE(env);
    enum { synchronized_launches = 10, back_to_back = 20 };
    static const int sequence[] = {1};
    tp_stream *origin = new_stream(env->device), *side = new_stream(env->device);
    tp_event *fork = new_event(env->device, TP_EVENT_DEFAULT), *join = new_event(env->device, TP_EVENT_DEFAULT);
    tp_event *start = new_event(env->device, TP_EVENT_TIMING | TP_EVENT_EXTERNAL);
    tp_event *end = new_event(env->device, TP_EVENT_TIMING | TP_EVENT_EXTERNAL);
    order_log log;
    order_log_init(&log);
    stamped_item on_side = {{&log, 1}, 0};
    CHECK_OK(tp_stream_begin_capture(origin));
    CHECK_OK(tp_event_record(start, origin));
    CHECK_OK(tp_event_record(fork, origin));
    CHECK_OK(tp_event_wait(fork, side));
    CHECK_OK(tp_stream_launch_host_fn(side, stamped_host_fn, &on_side));
    CHECK_OK(tp_event_record(join, side));
    CHECK_OK(tp_event_wait(join, origin));
    CHECK_OK(tp_event_record(end, origin));
    tp_graph *graph = NULL;
    CHECK_OK(tp_stream_end_capture(origin, &graph));

    int64_t e = device_error_ns(env->device), previous = 0;
    for (int launch = 1; launch <= synchronized_launches; launch++) {
        CHECK_OK(tp_graph_launch(graph, origin));
        CHECK_OK(tp_stream_synchronize_for(origin, EVENTUALLY_NS));
        CHECK(log_is_repeated(&log, sequence, 1, launch));
        int64_t ran = atomic_load(&on_side.ran_ns);
        CHECK(ran > previous);
        CHECK(ran_between(ran, start, end, e));
        previous = ran;
    }
    for (int i = 0; i < back_to_back; i++)
        CHECK_OK(tp_graph_launch(graph, side));
    CHECK_OK(tp_stream_synchronize_for(side, EVENTUALLY_NS));
    CHECK(log_is_repeated(&log, sequence, 1, synchronized_launches + back_to_back));

    CHECK_OK(tp_graph_destroy(graph));
    tp_event *events[] = {fork, join, start, end};
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++)
        CHECK_OK(tp_event_destroy(events[i]));
    order_log_destroy(&log);
    CHECK_OK(tp_stream_destroy(side));
    CHECK_OK(tp_stream_destroy(origin));
    return 0;
}

/*
 * Exit with launches pending (rule 9 at exit), as rule15_exit_with_host_fn_blocked_
 * forever does with plain host functions: a child process launches a graph whose
 * first host function blocks for good, a second launch of it behind, and a third
 * on a stream it then destroys (behind the first too where, as on CUDA, launches of
 * one graph run one after the other), destroys the graph, has another graph's host
 * function run on a third stream, then calls exit(). It must end with its own
 * status well within CTest's limit.
 */
#define EXIT_CHILD_ENV "TPEVENT_TEST_EXIT_CHILD"
#define EXIT_CHILD_STATUS 42
#define EXIT_CHILD_SECONDS 60.0

static _Noreturn void exit_child(const char *device)
{
    static gate never; /* static: still there while exit runs */
    static atomic_int behind = 0, other_ran = 0;
    gate_init(&never);
    tp_stream *stream = new_stream(device), *destroyed = new_stream(device), *other = new_stream(device);
    tp_event *after = new_event(device, TP_EVENT_EXTERNAL);
    CHECK_OK(tp_stream_begin_capture(stream));
    gate_launch(&never, stream);
    CHECK_OK(tp_stream_launch_host_fn(stream, flag_host_fn, (void *)&behind));
    CHECK_OK(tp_event_record(after, stream));
    tp_graph *blocked = NULL;
    CHECK_OK(tp_stream_end_capture(stream, &blocked));
    tp_graph *flagging = capture_host_fn(other, flag_host_fn, (void *)&other_ran);

    CHECK_OK(tp_graph_launch(blocked, stream));
    CHECK_OK(tp_graph_launch(blocked, stream));
    CHECK_OK(tp_graph_launch(blocked, destroyed));
    CHECK_OK(tp_stream_destroy(destroyed));
    CHECK_OK(tp_graph_destroy(blocked));
    /* Once at least: CUDA runs launches of one graph one after the other, so the
     * third (on another stream) may wait behind the first. */
    CHECK(gate_entered_within(&never, 1, EVENTUALLY_SECONDS));
    CHECK_OK(tp_graph_launch(flagging, other));
    CHECK_OK(tp_stream_synchronize_for(other, EVENTUALLY_NS));
    CHECK(atomic_load(&other_ran) == 1);
    CHECK(!event_is_done(after) && atomic_load(&behind) == 0);
    printf("ready\n");
    fflush(stdout);
    exit(EXIT_CHILD_STATUS);
}

TEST(rule16_exit_with_launched_host_fn_blocked_forever)
{
    if (getenv(EXIT_CHILD_ENV) != NULL)
        exit_child(env->device);
    REQUIRE_CAPTURE(env);

    expect_child_exits(env->device, "rule16_exit_with_launched_host_fn_blocked_forever", EXIT_CHILD_ENV,
                       EXIT_CHILD_STATUS, EXIT_CHILD_SECONDS);
    return 0;
}

/* Two graphs captured on one stream (as torch.cuda.graph captures every graph on
 * its one capture stream), launched on two streams: a host function of the first
 * that blocks holds back no host function of the second. */
TEST(rule16_graphs_captured_on_one_stream_do_not_wait_for_each_other)
{
    REQUIRE_CAPTURE(env);
    gate g;
    gate_init(&g);
    atomic_int ran = 0;
    tp_stream *captured = new_stream(env->device);
    tp_stream *first = new_stream(env->device), *second = new_stream(env->device);
    tp_graph *blocking = capture_host_fn(captured, gate_host_fn, &g);
    tp_graph *counting = capture_host_fn(captured, counter_host_fn, &ran);
    CHECK_OK(tp_graph_launch(blocking, first));
    CHECK(gate_entered_within(&g, 1, EVENTUALLY_SECONDS));
    CHECK_OK(tp_graph_launch(counting, second));
    CHECK(flag_reaches_within(&ran, 1, EVENTUALLY_SECONDS));
    CHECK(stream_idle_within(second, EVENTUALLY_SECONDS));
    CHECK(gate_passed(&g) == 0);
    gate_open(&g);
    CHECK_OK(tp_stream_synchronize_for(first, EVENTUALLY_NS));
    CHECK_OK(tp_graph_destroy(counting));
    CHECK_OK(tp_graph_destroy(blocking));
    CHECK_OK(tp_stream_destroy(second));
    CHECK_OK(tp_stream_destroy(first));
    CHECK_OK(tp_stream_destroy(captured));
    gate_destroy(&g);
    return 0;
}

/* Rule 10: one graph launched from two threads at once, each on a stream of its
 * own: every launch runs its host function exactly once. */
typedef struct launcher {
    tp_graph *graph;
    tp_stream *stream;
    int launches;
    tp_status status;
} launcher;

static void *launch_many(void *arg)
{
    launcher *l = arg;
    l->status = TP_OK;
    for (int i = 0; i < l->launches && l->status == TP_OK; i++)
        l->status = tp_graph_launch(l->graph, l->stream);
    return NULL;
}

TEST(rule16_one_graph_launched_from_two_threads_runs_each_launch_once)
{
    REQUIRE_CAPTURE(env);
    enum { LAUNCHES = 50 };
    atomic_int ran = 0;
    tp_stream *captured = new_stream(env->device);
    tp_graph *graph = capture_host_fn(captured, counter_host_fn, &ran);
    launcher launchers[2];
    pthread_t threads[2];
    for (int i = 0; i < 2; i++) {
        launchers[i] = (launcher){graph, new_stream(env->device), LAUNCHES, TP_OK};
        CHECK(pthread_create(&threads[i], NULL, launch_many, &launchers[i]) == 0);
    }
    for (int i = 0; i < 2; i++)
        CHECK(pthread_join(threads[i], NULL) == 0);
    for (int i = 0; i < 2; i++) {
        CHECK_OK(launchers[i].status);
        CHECK_OK(tp_stream_synchronize_for(launchers[i].stream, EVENTUALLY_NS));
    }
    CHECK(atomic_load(&ran) == 2 * LAUNCHES);
    sleep_ms(20);
    CHECK(atomic_load(&ran) == 2 * LAUNCHES); /* and no more */
    CHECK_OK(tp_graph_destroy(graph));
    for (int i = 0; i < 2; i++)
        CHECK_OK(tp_stream_destroy(launchers[i].stream));
    CHECK_OK(tp_stream_destroy(captured));
    return 0;
}

/* Rule 15 inside a graph: a captured host function that synchronizes its device
 * would wait for itself forever; it is refused, as outside a capture. */
typedef struct device_waiter {
    const char *device;
    tp_status status;
    atomic_int done;
} device_waiter;

static void synchronizing_device_host_fn(void *arg)
{
    device_waiter *w = arg;
    w->status = tp_device_synchronize(w->device);
    atomic_store(&w->done, 1);
}

TEST(rule16_captured_host_fn_synchronizing_its_device_is_refused)
{
    REQUIRE_CAPTURE(env);
    device_waiter w = {.device = env->device, .status = TP_OK};
    atomic_init(&w.done, 0);
    tp_stream *stream = new_stream(env->device);
    tp_graph *graph = capture_host_fn(stream, synchronizing_device_host_fn, &w);
    CHECK_OK(tp_graph_launch(graph, stream));
    CHECK(flag_reaches_within(&w.done, 1, EVENTUALLY_SECONDS));
    CHECK_OK(tp_stream_synchronize_for(stream, EVENTUALLY_NS));
    CHECK_STATUS(w.status, TP_ERR_INVALID_ARGUMENT);
    CHECK_OK(tp_graph_destroy(graph));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* Issue 53: the host functions of tpevent's own graphs need nothing of the
 * runtime's one callback thread (the device itself says when a launch reached
 * one), so they run while that thread is held by something else: here a hold's
 * gate (holds forced onto runtime host functions, TPEVENT_GPU_WAIT=host-fn, read
 * at the device's first hold) keeps a GPU stream waiting on a CPU record that a
 * blocked CPU host function delays. */
TEST(rule16_graph_host_fns_run_while_the_runtimes_callback_thread_is_held)
{
    REQUIRE_CAPTURE(env);
    if (strncmp(env->device, "hip:", 4) == 0) {
        printf(
            "skipped: HIP captures no stream memory operation: a captured host function is a gate on the "
            "runtime's callback thread there (docs/semantics.md)\n");
        return TEST_SKIP;
    }
    setenv("TPEVENT_GPU_WAIT", "host-fn", 1);
    gate g;
    gate_init(&g);
    atomic_int ran = 0;
    tp_stream *cpu = new_stream("cpu:0");
    tp_event *opened = new_event("cpu:0", 0);
    tp_stream *held = new_stream(env->device), *launched = new_stream(env->device);
    tp_graph *graph = capture_host_fn(launched, flag_host_fn, &ran);
    gate_launch(&g, cpu);
    CHECK_OK(tp_event_record(opened, cpu));
    CHECK_OK(tp_stream_wait_event(held, opened));
    sleep_ms(100); /* the gate reached: the callback thread blocked (on a GPU backend) */
    CHECK_OK(tp_graph_launch(graph, launched));
    CHECK(flag_reaches_within(&ran, 1, EVENTUALLY_SECONDS));
    gate_open(&g);
    CHECK_OK(tp_stream_synchronize_for(held, EVENTUALLY_NS));
    CHECK_OK(tp_stream_synchronize_for(launched, EVENTUALLY_NS));
    CHECK_OK(tp_graph_destroy(graph));
    CHECK_OK(tp_stream_destroy(launched));
    CHECK_OK(tp_stream_destroy(held));
    CHECK_OK(tp_event_destroy(opened));
    CHECK_OK(tp_stream_destroy(cpu));
    gate_destroy(&g);
    return 0;
}
