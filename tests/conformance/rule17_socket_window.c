/*
 * Conformance, rule 17's window for events handed over a socket: a stream's waits
 * on another handle's record (in a real deployment, another process's, which this
 * one cannot see held) never block their caller on a full runtime queue, however
 * many are pending, and a hold queued past a window full of them still holds.
 */
#define _GNU_SOURCE

#include "namespace_child.h"
#include "support.h"

#include <pthread.h>
#include <stdio.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Past CUDA's window (256) and the runtime's queue of ~1,020 pending operations,
 * and past the fake GPU's queue of 40 waits, where the 41st used to block. */
#define WAITS 2000
#define BLOCKED_TOO_LONG_NS 3000000000LL
#define WATCHDOG_SECONDS 10

/* An event sent over a socketpair and received in this same process. */
static tp_event *sent_and_received(tp_event *event)
{
    int pair[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
    CHECK_OK(tp_event_ipc_send(event, pair[0]));
    tp_event *received = NULL;
    CHECK_OK(tp_event_ipc_recv(&received, pair[1], NULL));
    close(pair[0]);
    close(pair[1]);
    return received;
}

/* A stream held by a hold that a watchdog lets go after WATCHDOG_SECONDS unless the
 * test does first: a wait that blocks its caller until the release (the bug) is then
 * a failure, not a hang. */
typedef struct held_stream {
    tp_stream *stream;
    tp_hold *hold;
    pthread_t watchdog;
    pthread_mutex_t lock;
    pthread_cond_t released_changed;
    bool released;
} held_stream;

static void *watchdog_main(void *arg)
{
    held_stream *h = arg;
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += WATCHDOG_SECONDS;
    pthread_mutex_lock(&h->lock);
    while (!h->released && pthread_cond_timedwait(&h->released_changed, &h->lock, &deadline) == 0) {
    }
    if (!h->released) {
        h->released = true;
        CHECK_OK(tp_hold_release(h->hold));
    }
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

static void held_stream_init(held_stream *h, const char *device)
{
    *h = (held_stream){.stream = new_stream(device)};
    pthread_mutex_init(&h->lock, NULL);
    pthread_cond_init(&h->released_changed, NULL);
}

/* Holds the stream's later work, and starts the watchdog. */
static void held_stream_hold(held_stream *h)
{
    CHECK_OK(tp_stream_hold(h->stream, INT64_MAX, &h->hold));
    CHECK(pthread_create(&h->watchdog, NULL, watchdog_main, h) == 0);
}

/* Lets the stream go; false if the watchdog had to. */
static bool held_stream_release(held_stream *h)
{
    pthread_mutex_lock(&h->lock);
    bool in_time = !h->released;
    if (in_time)
        CHECK_OK(tp_hold_release(h->hold));
    h->released = true;
    pthread_cond_signal(&h->released_changed);
    pthread_mutex_unlock(&h->lock);
    return in_time;
}

static void held_stream_finish(held_stream *h)
{
    (void)held_stream_release(h);
    pthread_join(h->watchdog, NULL);
    CHECK_OK(tp_stream_synchronize(h->stream));
    CHECK_OK(tp_stream_destroy(h->stream));
    pthread_cond_destroy(&h->released_changed);
    pthread_mutex_destroy(&h->lock);
}

/* WAITS waits of one stream on the received handle's pending record: no call
 * blocks, and work after them runs once the record is reached, not before. */
TEST(rule17_socket_event_waits_never_block_their_caller)
{
    REQUIRE_SOCKET_IPC(env->device);
    held_stream recording;
    held_stream_init(&recording, env->device);
    held_stream_hold(&recording);
    tp_stream *waiting = new_stream(env->device);
    tp_event *sender = new_event(env->device, TP_EVENT_INTERPROCESS);
    tp_event *receiver = sent_and_received(sender);
    tp_event *after = new_event(env->device, TP_EVENT_DEFAULT);
    CHECK_OK(tp_event_record(sender, recording.stream));
    int64_t longest = 0;
    for (int i = 0; i < WAITS; i++) {
        int64_t start = monotonic_ns();
        CHECK_OK(tp_event_wait(receiver, waiting));
        int64_t took = monotonic_ns() - start;
        longest = took > longest ? took : longest;
    }
    CHECK_OK(tp_event_record(after, waiting));
    printf("%d waits: the longest call took %.3f ms\n", WAITS, (double)longest / 1e6);
    CHECK(longest < BLOCKED_TOO_LONG_NS);
    CHECK(event_pending_for(after, 50));
    CHECK(held_stream_release(&recording));
    CHECK(event_done_within(after, EVENTUALLY_SECONDS));
    CHECK_OK(tp_stream_synchronize(waiting));
    held_stream_finish(&recording);
    CHECK_OK(tp_event_destroy(after));
    CHECK_OK(tp_event_destroy(receiver));
    CHECK_OK(tp_event_destroy(sender));
    CHECK_OK(tp_stream_destroy(waiting));
    return 0;
}

/* A window full of such waits, then a hold of the waiting stream: once the record is
 * reached every wait passed, and the hold still holds until its release (a hold
 * joined to a wait's place would pass with the record). */
TEST(rule17_socket_event_hold_past_a_window_full_of_waits_still_holds)
{
    REQUIRE_SOCKET_IPC(env->device);
    held_stream recording, waiting;
    held_stream_init(&recording, env->device);
    held_stream_hold(&recording);
    held_stream_init(&waiting, env->device);
    tp_event *sender = new_event(env->device, TP_EVENT_INTERPROCESS);
    tp_event *receiver = sent_and_received(sender);
    tp_event *after = new_event(env->device, TP_EVENT_DEFAULT);
    CHECK_OK(tp_event_record(sender, recording.stream));
    int64_t window = 0;
    CHECK_OK(tp_stream_hold_window(waiting.stream, &window));
    int64_t waits = window < 1000 ? window + 2 : 1000; /* unbounded windows: a few */
    for (int64_t i = 0; i < waits; i++)
        CHECK_OK(tp_event_wait(receiver, waiting.stream));
    held_stream_hold(&waiting);
    CHECK_OK(tp_event_record(after, waiting.stream));
    CHECK(held_stream_release(&recording));
    CHECK(event_done_within(receiver, EVENTUALLY_SECONDS));
    CHECK(event_pending_for(after, 100)); /* every wait passed; the hold holds */
    CHECK(held_stream_release(&waiting));
    CHECK(event_done_within(after, EVENTUALLY_SECONDS));
    held_stream_finish(&waiting);
    held_stream_finish(&recording);
    CHECK_OK(tp_event_destroy(after));
    CHECK_OK(tp_event_destroy(receiver));
    CHECK_OK(tp_event_destroy(sender));
    return 0;
}
