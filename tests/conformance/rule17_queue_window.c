/* Conformance, rule 17's window: tpevent's own waits never block their caller on a
 * full runtime queue, however many are pending on one stream, and they still let
 * the stream go in order; a hold past a window full of waits still holds. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, CLOCK_REALTIME */
#include "across_backends.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Far past any stream's window (a fake GPU's 10, CUDA's 256) and past the H200's
 * queue of ~1,020 pending operations, where the 1,021st wait used to block. */
#define WAITS 10000
#define BLOCKS 4

/* Opens every gate after WATCHDOG_SECONDS unless told to stop first: a wait that
 * blocks its caller until the gates open (the bug) is then a failure, not a hang. */
#define WATCHDOG_SECONDS 10
#define BLOCKED_TOO_LONG_NS 3000000000LL

typedef struct watchdog {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t stop_changed;
    bool stop;
    gate *gates;
} watchdog;

static void *watchdog_main(void *arg)
{
    watchdog *w = arg;
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += WATCHDOG_SECONDS;
    pthread_mutex_lock(&w->lock);
    while (!w->stop && pthread_cond_timedwait(&w->stop_changed, &w->lock, &deadline) == 0) {
    }
    bool fire = !w->stop;
    pthread_mutex_unlock(&w->lock);
    if (fire)
        for (int i = 0; i < BLOCKS; i++)
            gate_open(&w->gates[i]);
    return NULL;
}

static void watchdog_start(watchdog *w, gate *gates)
{
    *w = (watchdog){.gates = gates};
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->stop_changed, NULL);
    CHECK(pthread_create(&w->thread, NULL, watchdog_main, w) == 0);
}

static void watchdog_stop(watchdog *w)
{
    pthread_mutex_lock(&w->lock);
    w->stop = true;
    pthread_cond_signal(&w->stop_changed);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->stop_changed);
    pthread_mutex_destroy(&w->lock);
}

/*
 * WAITS waits of one stream, in BLOCKS blocks, each block on records of its own
 * gated stream of the other backend, with a mark recorded after each block. No wait
 * call blocks; then the gates open last block first: a block's mark is reached only
 * once every earlier block's gate opened too (waits joined past the window let the
 * stream go neither early nor out of order).
 */
static void waits_never_block(const char *event_device, const char *stream_device)
{
    gate gates[BLOCKS];
    tp_stream *sources[BLOCKS];
    tp_event *events[BLOCKS], *marks[BLOCKS];
    tp_stream *waiting = new_stream(stream_device);
    for (int b = 0; b < BLOCKS; b++) {
        gate_init(&gates[b]);
        sources[b] = new_stream(event_device);
        events[b] = new_event(event_device, TP_EVENT_DEFAULT);
        marks[b] = new_event(stream_device, TP_EVENT_DEFAULT);
        gate_launch(&gates[b], sources[b]);
    }
    watchdog w;
    watchdog_start(&w, gates);
    int64_t longest = 0;
    for (int b = 0; b < BLOCKS; b++) {
        for (int i = 0; i < WAITS / BLOCKS; i++) {
            CHECK_OK(tp_event_record(events[b], sources[b]));
            int64_t start = monotonic_ns();
            CHECK_OK(tp_event_wait(events[b], waiting));
            int64_t took = monotonic_ns() - start;
            longest = took > longest ? took : longest;
        }
        CHECK_OK(tp_event_record(marks[b], waiting));
    }
    printf("%d waits: the longest call took %.3f ms\n", WAITS, (double)longest / 1e6);
    CHECK(longest < BLOCKED_TOO_LONG_NS);
    CHECK(event_pending_for(marks[0], 20));
    for (int b = BLOCKS - 1; b >= 1; b--) {
        gate_open(&gates[b]);
        CHECK(event_pending_for(marks[b], 20));
    }
    gate_open(&gates[0]);
    for (int b = 0; b < BLOCKS; b++)
        CHECK(event_done_within(marks[b], EVENTUALLY_SECONDS));
    watchdog_stop(&w);
    CHECK_OK(tp_stream_synchronize(waiting));
    for (int b = 0; b < BLOCKS; b++) {
        CHECK_OK(tp_stream_synchronize(sources[b]));
        CHECK_OK(tp_event_destroy(marks[b]));
        CHECK_OK(tp_event_destroy(events[b]));
        CHECK_OK(tp_stream_destroy(sources[b]));
        gate_destroy(&gates[b]);
    }
    CHECK_OK(tp_stream_destroy(waiting));
}

TEST(rule17_ten_thousand_waits_never_block_their_caller)
{
    REQUIRE_OTHER_BACKEND(env, other);
    waits_never_block(other, env->device);
    return 0;
}

/* The other way round: a stream of the other backend waits on this one's records,
 * which this backend then tells it about (snapshot_take's marker, and on a GPU with
 * an OpenCL stream waiting, snapshot_notify: the device's poller, gpu_notify.c). */
TEST(rule17_ten_thousand_waits_on_this_backends_records_never_block)
{
    REQUIRE_OTHER_BACKEND(env, other);
    waits_never_block(env->device, other);
    return 0;
}

/*
 * A window full of waits across backends, then a hold: the hold still holds the
 * stream's later work after every wait passed, until its release. Past the window a
 * hold joins the latest operation queued on the stream; a wait that the stream's
 * queue makes on the device (a CUDA stream on a Vulkan record's timeline semaphore)
 * takes a place in the window too, and a hold joined to that place would be let go
 * with the record, not with its release (gpu_hold.c keeps the last place for a
 * hold's own operation).
 */
static void hold_past_full_window(const char *event_device, const char *stream_device, unsigned flags)
{
    across a;
    across_make(&a, event_device, stream_device, flags);
    int64_t window = 0;
    CHECK_OK(tp_stream_hold_window(a.waiting, &window));
    int64_t waits = window < 1000 ? window + 2 : 1000; /* unbounded windows: a few */
    for (int64_t i = 0; i < waits; i++)
        CHECK_OK(tp_event_wait(a.event, a.waiting));
    tp_hold *hold = NULL;
    CHECK_OK(tp_stream_hold(a.waiting, INT64_MAX, &hold));
    CHECK_OK(tp_event_record(a.after, a.waiting));
    gate_open(&a.gate);
    CHECK(event_done_within(a.event, EVENTUALLY_SECONDS));
    CHECK(event_pending_for(a.after, 100)); /* every wait passed; the hold holds */
    CHECK_OK(tp_hold_release(hold));
    across_finish(&a);
}

TEST(rule17_hold_past_a_window_full_of_waits_across_backends_still_holds)
{
    BOTH_WAYS(env, hold_past_full_window, TP_EVENT_DEFAULT);
}
