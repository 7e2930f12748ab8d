/* Conformance, rule 10: every function may be called from any thread at the same
 * time, but for a destroy while another thread is inside a call on the same object. */
#include "support.h"

#include <sched.h>
#include <stdint.h>

enum { hammer_threads = 8, hammer_iterations = 1500, hammer_streams = 4, hammer_events = 4 };

typedef struct hammer {
    const char *device;
    tp_stream *streams[hammer_streams]; /* the last is the default stream */
    tp_event *events[hammer_events];    /* even ones with timing */
    tp_stream *peer_stream;             /* NULL without a peer */
    atomic_int launched;
    atomic_int ran;
} hammer;

typedef struct hammer_thread {
    hammer *shared;
    unsigned seed;
    pthread_t thread;
} hammer_thread;

static unsigned next_random(unsigned *state)
{
    /* xorshift: reproducible per thread, no shared state. */
    unsigned x = *state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *state = x;
}

static void hammer_elapsed(hammer *h, int a, int b)
{
    float ms;
    tp_status status = tp_event_elapsed_time(h->events[a], h->events[b], &ms);
    bool both_timed = a % 2 == 0 && b % 2 == 0;
    if (!both_timed) {
        CHECK_STATUS(status, TP_ERR_TIMING_DISABLED);
        return;
    }
    CHECK(status == TP_OK || status == TP_ERR_NOT_RECORDED || status == TP_ERR_NOT_READY);
}

static void *hammer_main(void *arg)
{
    hammer_thread *self = arg;
    hammer *h = self->shared;
    for (int i = 0; i < hammer_iterations; i++) {
        unsigned r = next_random(&self->seed);
        int e = (int)(r >> 8) % hammer_events;
        int s = (int)(r >> 16) % hammer_streams;
        tp_stream *stream = h->streams[s];
        bool flag;
        switch (r % 10) {
        case 0:
            CHECK_OK(tp_event_record(h->events[e], stream));
            break;
        case 1:
            CHECK_OK(tp_event_query(h->events[e], &flag));
            break;
        case 2:
            CHECK_OK(tp_event_wait(h->events[e], stream));
            break;
        case 3:
            CHECK_OK(tp_event_synchronize(h->events[e]));
            break;
        case 4:
            atomic_fetch_add(&h->launched, 1);
            CHECK_OK(tp_stream_launch_host_fn(stream, counter_host_fn, &h->ran));
            break;
        case 5:
            CHECK_OK(tp_stream_query(stream, &flag));
            break;
        case 6:
            hammer_elapsed(h, e, (int)(r >> 24) % hammer_events);
            break;
        case 7:
            if (h->peer_stream != NULL)
                CHECK_OK(tp_stream_wait_event(h->peer_stream, h->events[e]));
            else
                CHECK_OK(tp_stream_wait_stream(stream, h->streams[(s + 1) % hammer_streams]));
            break;
        case 8: {
            tp_event *mine = NULL;
            CHECK_OK(tp_stream_record_event(stream, &mine));
            CHECK_OK(tp_event_destroy(mine));
            break;
        }
        default:
            if (i % 50 == 0)
                CHECK_OK(tp_stream_synchronize(stream));
            else
                CHECK_OK(tp_event_record(h->events[e], NULL));
            break;
        }
    }
    return NULL;
}

static void run_hammer(const char *device, const char *peer)
{
    hammer h;
    memset(&h, 0, sizeof h);
    h.device = device;
    atomic_init(&h.launched, 0);
    atomic_init(&h.ran, 0);
    for (int i = 0; i < hammer_streams - 1; i++)
        h.streams[i] = new_stream(device);
    CHECK_OK(tp_stream_default(device, &h.streams[hammer_streams - 1]));
    for (int i = 0; i < hammer_events; i++)
        h.events[i] = new_event(device, i % 2 == 0 ? TP_EVENT_TIMING : TP_EVENT_BLOCKING);
    if (peer != NULL)
        h.peer_stream = new_stream(peer);

    hammer_thread threads[hammer_threads];
    for (int i = 0; i < hammer_threads; i++) {
        threads[i].shared = &h;
        threads[i].seed = 2654435761u * (unsigned)(i + 1);
        CHECK(pthread_create(&threads[i].thread, NULL, hammer_main, &threads[i]) == 0);
    }
    for (int i = 0; i < hammer_threads; i++)
        CHECK(pthread_join(threads[i].thread, NULL) == 0);

    CHECK_OK(tp_device_synchronize(device));
    for (int i = 0; i < hammer_streams; i++)
        CHECK_OK(tp_stream_synchronize(h.streams[i]));
    if (h.peer_stream != NULL) {
        CHECK_OK(tp_stream_synchronize(h.peer_stream));
        CHECK_OK(tp_stream_destroy(h.peer_stream));
    }
    CHECK(atomic_load(&h.ran) == atomic_load(&h.launched));
    for (int i = 0; i < hammer_events; i++) {
        CHECK(event_is_done(h.events[i]));
        CHECK_OK(tp_event_destroy(h.events[i]));
    }
    for (int i = 0; i < hammer_streams - 1; i++)
        CHECK_OK(tp_stream_destroy(h.streams[i]));
}

TEST(rule10_threads_share_events_and_streams)
{
    run_hammer(env->device, NULL);
    return 0;
}

TEST(rule10_threads_share_events_across_devices)
{
    REQUIRE_PEER(env);
    run_hammer(env->device, env->peer);
    return 0;
}

typedef struct churn {
    const char *device;
    tp_event *shared_event;
    atomic_int ran;
} churn;

static void *churn_main(void *arg)
{
    churn *c = arg;
    for (int i = 0; i < 200; i++) {
        tp_stream *stream = new_stream(c->device);
        tp_event *event = new_event(c->device, i % 2 ? TP_EVENT_TIMING : TP_EVENT_DEFAULT);
        CHECK_OK(tp_stream_wait_event(stream, c->shared_event));
        CHECK_OK(tp_stream_launch_host_fn(stream, counter_host_fn, &c->ran));
        CHECK_OK(tp_event_record(event, stream));
        CHECK_OK(tp_event_record(c->shared_event, stream));
        if (i % 3 == 0)
            CHECK_OK(tp_event_synchronize(event));
        CHECK_OK(tp_event_destroy(event));
        CHECK_OK(tp_stream_destroy(stream));
    }
    return NULL;
}

TEST(rule10_threads_create_and_destroy_concurrently)
{
    churn c;
    c.device = env->device;
    c.shared_event = new_event(env->device, TP_EVENT_DEFAULT);
    atomic_init(&c.ran, 0);
    pthread_t threads[4];
    for (int i = 0; i < 4; i++)
        CHECK(pthread_create(&threads[i], NULL, churn_main, &c) == 0);
    for (int i = 0; i < 4; i++)
        CHECK(pthread_join(threads[i], NULL) == 0);
    /* Streams destroyed with work pending still run it (rule 9). */
    CHECK(flag_reaches_within(&c.ran, 4 * 200, EVENTUALLY_SECONDS));
    CHECK_OK(tp_event_synchronize(c.shared_event));
    CHECK_OK(tp_event_destroy(c.shared_event));
    return 0;
}

/*
 * Rule 10's one exception (tpevent.h): an object may not be destroyed while another
 * thread is inside a call on it. What is promised instead: once those calls have
 * returned, any thread may destroy it at once, with nothing of the library still
 * touching it. Threads block in synchronize (and wait, query) on a record held back
 * by a gate; each says so through an atomic once its calls have returned, and the
 * main thread destroys the event and the stream the moment the last one has, before
 * joining anyone. A backend that still touched the event after waking a waiter
 * (its worker signalling, a waiter reading the event after its wait) is a
 * use-after-free under ASan and a race under TSan.
 */
enum { last_use_threads = 4, last_use_rounds = 50 };

typedef struct last_use {
    tp_event *event;
    tp_stream *stream;
    tp_stream *waiters[last_use_threads];
    atomic_int started;
    atomic_int returned; /* threads whose last call on event and stream returned */
} last_use;

typedef struct last_use_thread {
    last_use *shared;
    int index;
} last_use_thread;

static void *last_use_main(void *arg)
{
    last_use_thread *self = arg;
    last_use *u = self->shared;
    atomic_fetch_add(&u->started, 1);
    bool done = false;
    switch (self->index % 3) {
    case 0:
        CHECK_OK(tp_event_synchronize(u->event));
        break;
    case 1:
        CHECK_OK(tp_event_wait(u->event, u->waiters[self->index]));
        CHECK_OK(tp_stream_synchronize(u->stream));
        break;
    default:
        while (!done) {
            CHECK_OK(tp_event_query(u->event, &done));
            if (!done)
                sleep_ms(1);
        }
        break;
    }
    CHECK(event_is_done(u->event));
    atomic_fetch_add_explicit(&u->returned, 1, memory_order_release);
    return NULL;
}

TEST(rule10_destroy_once_other_threads_calls_returned)
{
    for (int round = 0; round < last_use_rounds; round++) {
        last_use u;
        memset(&u, 0, sizeof u);
        atomic_init(&u.started, 0);
        atomic_init(&u.returned, 0);
        gate g;
        gate_init(&g);
        u.stream = new_stream(env->device);
        u.event = new_event(env->device, round % 2 ? TP_EVENT_BLOCKING : TP_EVENT_TIMING);
        for (int i = 0; i < last_use_threads; i++)
            u.waiters[i] = new_stream(env->device);
        gate_launch(&g, u.stream);
        CHECK_OK(tp_event_record(u.event, u.stream));

        last_use_thread threads[last_use_threads];
        pthread_t ids[last_use_threads];
        for (int i = 0; i < last_use_threads; i++) {
            threads[i] = (last_use_thread){&u, i};
            CHECK(pthread_create(&ids[i], NULL, last_use_main, &threads[i]) == 0);
        }
        CHECK(flag_reaches_within(&u.started, last_use_threads, EVENTUALLY_SECONDS));
        gate_open(&g);
        while (atomic_load_explicit(&u.returned, memory_order_acquire) < last_use_threads)
            sched_yield(); /* no sleep: destroy the moment the last call has returned */
        CHECK_OK(tp_event_destroy(u.event));
        CHECK_OK(tp_stream_destroy(u.stream));
        for (int i = 0; i < last_use_threads; i++)
            CHECK(pthread_join(ids[i], NULL) == 0);
        for (int i = 0; i < last_use_threads; i++) {
            CHECK_OK(tp_stream_synchronize(u.waiters[i]));
            CHECK_OK(tp_stream_destroy(u.waiters[i]));
        }
        gate_destroy(&g);
    }
    return 0;
}
