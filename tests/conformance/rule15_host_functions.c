/* Conformance, rule 15: host functions never hold each other back, and may call
 * tpevent and the device's runtime. Progress is marked with records, never with
 * host functions, except where host functions are the subject. */
#define _GNU_SOURCE /* environ, program_invocation_name */

#include "support.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* --------------------------------------------------------------- rule 15 */

/* Each of two host functions says it is there, then waits for the other: on an
 * implementation that runs them one after the other, the first waits in vain. */
typedef struct rendezvous {
    atomic_int arrived;
    int parties;
    atomic_int met; /* host functions that saw every party arrive in time */
} rendezvous;

static void rendezvous_host_fn(void *arg)
{
    rendezvous *r = arg;
    atomic_fetch_add(&r->arrived, 1);
    if (flag_reaches_within(&r->arrived, r->parties, EVENTUALLY_SECONDS))
        atomic_fetch_add(&r->met, 1);
}

static void run_rendezvous(tp_stream **streams, int count)
{
    rendezvous r;
    atomic_init(&r.arrived, 0);
    atomic_init(&r.met, 0);
    r.parties = count;
    for (int i = 0; i < count; i++)
        CHECK_OK(tp_stream_launch_host_fn(streams[i], rendezvous_host_fn, &r));
    for (int i = 0; i < count; i++)
        CHECK_OK(tp_stream_synchronize(streams[i]));
    /* Fewer: some ran only after others had returned, one stream's host function
     * holding back another's. */
    CHECK(atomic_load(&r.met) == count);
}

TEST(rule15_host_fns_of_two_streams_run_at_once)
{
    tp_stream *streams[2] = {new_stream(env->device), new_stream(env->device)};
    run_rendezvous(streams, 2);
    CHECK_OK(tp_stream_destroy(streams[1]));
    CHECK_OK(tp_stream_destroy(streams[0]));
    return 0;
}

TEST(rule15_host_fns_of_many_streams_run_at_once)
{
    /* The default stream among them, launched first: it too has host functions of
     * its own (after other streams' work, HIP's default stream would wait for it). */
    enum { count = 8 };
    tp_stream *streams[count];
    CHECK_OK(tp_stream_default(env->device, &streams[0]));
    for (int i = 1; i < count; i++)
        streams[i] = new_stream(env->device);
    run_rendezvous(streams, count);
    for (int i = 1; i < count; i++)
        CHECK_OK(tp_stream_destroy(streams[i]));
    return 0;
}

/* With a host function blocked on `held`, another stream's host function and a
 * record after it complete. */
static void check_blocked_host_fn_delays_nothing(const char *device, tp_stream *held)
{
    gate g;
    gate_init(&g);
    tp_stream *other = new_stream(device);
    tp_event *after_other = new_event(device, TP_EVENT_DEFAULT);
    tp_event *after_held = new_event(device, TP_EVENT_DEFAULT);
    atomic_int ran = 0;

    gate_launch(&g, held);
    CHECK_OK(tp_event_record(after_held, held));
    CHECK(gate_entered_within(&g, 1, EVENTUALLY_SECONDS));
    CHECK_OK(tp_stream_launch_host_fn(other, flag_host_fn, &ran));
    CHECK_OK(tp_event_record(after_other, other));
    CHECK(event_done_within(after_other, EVENTUALLY_SECONDS));
    CHECK(atomic_load(&ran) == 1);
    CHECK(gate_passed(&g) == 0);
    CHECK(!event_is_done(after_held));
    gate_open(&g);

    CHECK_OK(tp_event_synchronize(after_held));
    CHECK_OK(tp_stream_synchronize(held));
    CHECK_OK(tp_event_destroy(after_held));
    CHECK_OK(tp_event_destroy(after_other));
    CHECK_OK(tp_stream_destroy(other));
    gate_destroy(&g);
}

TEST(rule15_blocked_host_fn_delays_no_other_stream)
{
    /* A host function that blocks holds back its own stream only. Held: a created
     * stream, then the default stream. (Not the other way round with the default
     * stream: HIP's default stream waits for every other stream's work, a rule of
     * its own.) */
    tp_stream *held = new_stream(env->device);
    check_blocked_host_fn_delays_nothing(env->device, held);
    CHECK_OK(tp_stream_destroy(held));
    tp_stream *default_stream = NULL;
    CHECK_OK(tp_stream_default(env->device, &default_stream));
    check_blocked_host_fn_delays_nothing(env->device, default_stream);
    return 0;
}

/* What a host function does with tpevent: everything a program's thread may. */
typedef struct calls_inside {
    const char *device;
    tp_stream *other;
    atomic_int done;
} calls_inside;

static void calling_host_fn(void *arg)
{
    calls_inside *c = arg;
    /* Events made, recorded on another stream, queried, waited for, destroyed. */
    tp_event *event = new_event(c->device, TP_EVENT_TIMING);
    tp_event *end = new_event(c->device, TP_EVENT_TIMING | TP_EVENT_BLOCKING);
    CHECK_OK(tp_event_record(event, c->other));
    bool done = false;
    CHECK_OK(tp_event_query(event, &done));
    CHECK_OK(tp_event_synchronize(event));
    CHECK(event_is_done(event));
    /* Work on the other stream, host functions included, runs while this one does. */
    atomic_int ran = 0;
    CHECK_OK(tp_stream_launch_host_fn(c->other, flag_host_fn, &ran));
    CHECK_OK(tp_event_record(end, c->other));
    CHECK_OK(tp_stream_synchronize(c->other));
    CHECK(atomic_load(&ran) == 1);
    float ms = -1.0f;
    CHECK_OK(tp_event_elapsed_time(event, end, &ms));
    CHECK(ms >= 0.0f);
    CHECK_OK(tp_event_destroy(end));
    CHECK_OK(tp_event_destroy(event));
    /* Streams made and destroyed; another wait set up. */
    tp_stream *fresh = new_stream(c->device);
    tp_event *marker = NULL;
    CHECK_OK(tp_stream_record_event(fresh, &marker));
    CHECK_OK(tp_stream_wait_event(c->other, marker));
    CHECK_OK(tp_stream_synchronize(fresh));
    CHECK_OK(tp_event_destroy(marker));
    CHECK_OK(tp_stream_destroy(fresh));
    atomic_store(&c->done, 1);
}

TEST(rule15_host_fn_may_call_tpevent_and_the_runtime)
{
    tp_stream *stream = new_stream(env->device);
    calls_inside c = {.device = env->device, .other = new_stream(env->device)};
    atomic_init(&c.done, 0);
    tp_event *after = new_event(env->device, TP_EVENT_DEFAULT);

    CHECK_OK(tp_stream_launch_host_fn(stream, calling_host_fn, &c));
    CHECK_OK(tp_event_record(after, stream));
    CHECK_OK(tp_event_synchronize(after));
    CHECK(atomic_load(&c.done) == 1);

    CHECK_OK(tp_stream_synchronize(c.other));
    CHECK_OK(tp_event_destroy(after));
    CHECK_OK(tp_stream_destroy(c.other));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(rule15_later_work_waits_for_host_fn_to_return)
{
    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(env->device);
    tp_stream *waiter = new_stream(env->device);
    tp_event *after = new_event(env->device, TP_EVENT_DEFAULT);
    tp_event *after_wait = new_event(env->device, TP_EVENT_DEFAULT);

    gate_launch(&g, stream);
    CHECK_OK(tp_event_record(after, stream));
    CHECK_OK(tp_stream_wait_event(waiter, after));
    CHECK_OK(tp_event_record(after_wait, waiter));
    CHECK(gate_entered_within(&g, 1, EVENTUALLY_SECONDS));
    /* The host function runs, and nothing after it does. */
    CHECK(event_pending_for(after, 100));
    CHECK(!event_is_done(after_wait));
    CHECK(!stream_is_idle(stream));
    gate_open(&g);
    CHECK_OK(tp_event_synchronize(after_wait));
    CHECK(event_is_done(after));
    CHECK(gate_passed(&g) == 1);

    CHECK_OK(tp_event_destroy(after_wait));
    CHECK_OK(tp_event_destroy(after));
    CHECK_OK(tp_stream_destroy(waiter));
    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
    return 0;
}

static int log_count(order_log *log)
{
    pthread_mutex_lock(&log->lock);
    int logged = log->count;
    pthread_mutex_unlock(&log->lock);
    return logged;
}

static bool log_reaches_within(order_log *log, int count, double seconds)
{
    double deadline = monotonic_seconds() + seconds;
    for (;;) {
        if (log_count(log) >= count)
            return true;
        if (monotonic_seconds() > deadline)
            return false;
        sleep_ms(1);
    }
}

TEST(rule15_destroy_stream_with_host_fns_pending)
{
    /* One host function running, two behind it, and one on another stream that
     * waits for them: all run, in order, after both streams are destroyed. */
    gate g;
    gate_init(&g);
    order_log log;
    order_log_init(&log);
    order_item first = {&log, 1}, second = {&log, 2}, third = {&log, 3};
    tp_stream *stream = new_stream(env->device);
    tp_stream *waiting = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);

    gate_launch(&g, stream);
    CHECK_OK(tp_stream_launch_host_fn(stream, order_log_host_fn, &first));
    CHECK_OK(tp_stream_launch_host_fn(stream, order_log_host_fn, &second));
    CHECK_OK(tp_event_record(event, stream));
    CHECK_OK(tp_stream_wait_event(waiting, event));
    CHECK_OK(tp_stream_launch_host_fn(waiting, order_log_host_fn, &third));
    CHECK(gate_entered_within(&g, 1, EVENTUALLY_SECONDS));
    CHECK_OK(tp_stream_destroy(stream));
    CHECK_OK(tp_stream_destroy(waiting));
    CHECK(event_pending_for(event, 20));
    CHECK(log_count(&log) == 0);

    gate_open(&g);
    CHECK_OK(tp_event_synchronize(event));
    CHECK(log_reaches_within(&log, 3, EVENTUALLY_SECONDS));
    pthread_mutex_lock(&log.lock);
    CHECK(log.values[0] == 1 && log.values[1] == 2 && log.values[2] == 3);
    pthread_mutex_unlock(&log.lock);
    /* The gate's host function returned before the ones behind it ran. */
    CHECK(gate_passed(&g) == 1);

    CHECK_OK(tp_event_destroy(event));
    order_log_destroy(&log);
    gate_destroy(&g);
    return 0;
}

/* Host functions of one stream: in order, one at a time, each after the one
 * before returned, and a host function may launch another on its own stream. */
typedef struct serial_item {
    atomic_int *running;
    atomic_int *overlaps;
    order_item logged;
    tp_stream *stream; /* where to launch `next` from inside, or NULL */
    struct serial_item *next;
} serial_item;

static void serial_host_fn(void *arg)
{
    serial_item *item = arg;
    if (atomic_fetch_add(item->running, 1) != 0)
        atomic_fetch_add(item->overlaps, 1);
    if (item->logged.value % 10 == 0)
        sleep_ms(2); /* time for a wrongly started next one to show */
    order_log_host_fn(&item->logged);
    if (item->stream != NULL)
        CHECK_OK(tp_stream_launch_host_fn(item->stream, serial_host_fn, item->next));
    atomic_fetch_sub(item->running, 1);
}

TEST(rule15_host_fns_of_one_stream_run_in_order_one_at_a_time)
{
    enum { count = 60 };
    order_log log;
    order_log_init(&log);
    atomic_int running = 0, overlaps = 0;
    serial_item items[count + 1];
    tp_stream *stream = new_stream(env->device);
    tp_event *after = new_event(env->device, TP_EVENT_DEFAULT);
    for (int i = 0; i <= count; i++)
        items[i] = (serial_item){&running, &overlaps, {&log, i}, NULL, NULL};
    /* The last one launches one more from inside: it comes after it, in order. */
    items[count - 1].stream = stream;
    items[count - 1].next = &items[count];
    for (int i = 0; i < count; i++)
        CHECK_OK(tp_stream_launch_host_fn(stream, serial_host_fn, &items[i]));
    CHECK_OK(tp_event_record(after, stream));
    CHECK_OK(tp_event_synchronize(after));
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK(log.count == count + 1);
    for (int i = 0; i <= count; i++)
        CHECK(log.values[i] == i);
    CHECK(atomic_load(&overlaps) == 0);

    CHECK_OK(tp_event_destroy(after));
    CHECK_OK(tp_stream_destroy(stream));
    order_log_destroy(&log);
    return 0;
}

/* Many host functions queued behind a blocked one: launching them never blocks
 * the launching thread (which is here the one that will open the gate), and they
 * all run, in order, once it opens. A runtime whose queue for the stream fills up
 * (the H200 did, with 100 waits on host memory) would hang here. */
TEST(rule15_many_host_fns_behind_a_blocked_one_launch_without_blocking)
{
    enum { count = 200 };
    gate g;
    gate_init(&g);
    order_log log;
    order_log_init(&log);
    order_item items[count];
    tp_stream *stream = new_stream(env->device);
    gate_launch(&g, stream);
    CHECK(gate_entered_within(&g, 1, EVENTUALLY_SECONDS));
    for (int i = 0; i < count; i++) {
        items[i] = (order_item){&log, i};
        CHECK_OK(tp_stream_launch_host_fn(stream, order_log_host_fn, &items[i]));
    }
    CHECK(log_count(&log) == 0);
    gate_open(&g);
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK(log.count == count);
    for (int i = 0; i < count; i++)
        CHECK(log.values[i] == i);
    CHECK_OK(tp_stream_destroy(stream));
    order_log_destroy(&log);
    gate_destroy(&g);
    return 0;
}

/* A host function must not wait for its own stream: the wait would never end, and
 * the call says so instead. */
typedef struct self_wait {
    tp_stream *stream;
    const char *device;
    tp_status stream_status;
    tp_status device_status;
    tp_status timed_status; /* tp_stream_synchronize_for, longer than the test waits */
    char message[256];
    char timed_message[256];
} self_wait;

static void self_waiting_host_fn(void *arg)
{
    self_wait *w = arg;
    w->stream_status = tp_stream_synchronize(w->stream);
    snprintf(w->message, sizeof w->message, "%s", tp_last_error());
    w->device_status = tp_device_synchronize(w->device);
    w->timed_status = tp_stream_synchronize_for(w->stream, (int64_t)(3 * EVENTUALLY_SECONDS * 1e9));
    snprintf(w->timed_message, sizeof w->timed_message, "%s", tp_last_error());
}

TEST(rule15_host_fn_synchronizing_its_own_stream_is_refused)
{
    tp_stream *stream = new_stream(env->device);
    self_wait w = {.stream = stream,
                   .device = env->device,
                   .stream_status = TP_OK,
                   .device_status = TP_OK,
                   .timed_status = TP_OK,
                   .message = "",
                   .timed_message = ""};
    tp_event *after = new_event(env->device, TP_EVENT_DEFAULT);
    CHECK_OK(tp_stream_launch_host_fn(stream, self_waiting_host_fn, &w));
    CHECK_OK(tp_event_record(after, stream));
    CHECK(event_done_within(after, EVENTUALLY_SECONDS));
    CHECK_STATUS(w.stream_status, TP_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(w.device_status, TP_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(w.timed_status, TP_ERR_INVALID_ARGUMENT); /* not a wait that only times out */
    CHECK_CONTAINS(w.message, "host function");
    CHECK_CONTAINS(w.timed_message, "host function");
    CHECK_OK(tp_event_destroy(after));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/*
 * Exit with host functions pending (rule 9 at exit): a child process leaves one
 * host function blocked for good, another queued behind it and a record after
 * both, with a second stream's host function done, then calls exit(). It must end,
 * with its own status, well within CTest's limit: no thread tpevent left blocked
 * may hold the exit up, nor a stream held for a host function that will never
 * return.
 */
#define EXIT_CHILD_ENV "TPEVENT_TEST_EXIT_CHILD"
#define EXIT_CHILD_STATUS 42
#define EXIT_CHILD_SECONDS 60.0

static _Noreturn void exit_child(const char *device)
{
    static gate never; /* static: still there while exit runs */
    static atomic_int behind = 0, other_ran = 0;
    gate_init(&never);
    tp_stream *stream = new_stream(device);
    tp_stream *destroyed = new_stream(device);
    tp_stream *other = new_stream(device);
    tp_event *after = new_event(device, TP_EVENT_DEFAULT);

    gate_launch(&never, stream);
    CHECK_OK(tp_stream_launch_host_fn(stream, flag_host_fn, (void *)&behind));
    CHECK_OK(tp_event_record(after, stream));
    gate_launch(&never, destroyed); /* and its stream destroyed with it pending */
    CHECK_OK(tp_stream_destroy(destroyed));
    CHECK(gate_entered_within(&never, 2, EVENTUALLY_SECONDS));
    CHECK_OK(tp_stream_launch_host_fn(other, flag_host_fn, (void *)&other_ran));
    CHECK_OK(tp_stream_synchronize(other));
    CHECK(atomic_load(&other_ran) == 1);
    CHECK(!event_is_done(after) && atomic_load(&behind) == 0);
    printf("ready\n");
    fflush(stdout);
    exit(EXIT_CHILD_STATUS);
}

TEST(rule15_exit_with_host_fn_blocked_forever)
{
    if (getenv(EXIT_CHILD_ENV) != NULL)
        exit_child(env->device);

    expect_child_exits(env->device, "rule15_exit_with_host_fn_blocked_forever", EXIT_CHILD_ENV, EXIT_CHILD_STATUS,
                       EXIT_CHILD_SECONDS);
    return 0;
}
