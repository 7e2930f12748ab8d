/* Conformance, rules 9-12: destroying things with work pending, many threads at
 * once, the current stream, and order within and across streams. */
#include "support.h"

#include <sched.h>
#include <stdint.h>

/* ---------------------------------------------------------------- rule 9 */

TEST(rule09_destroy_event_with_pending_record)
{
    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_TIMING | TP_EVENT_BLOCKING);
    atomic_int after = 0;

    gate_launch(&g, stream);
    CHECK_OK(tp_event_record(event, stream));
    CHECK_OK(tp_stream_launch_host_fn(stream, flag_host_fn, &after));
    CHECK_OK(tp_event_destroy(event));
    gate_open(&g);
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK(gate_passed(&g) == 1);
    CHECK(atomic_load(&after) == 1);

    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
    return 0;
}

TEST(rule09_destroy_stream_with_pending_work)
{
    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(env->device);
    atomic_int after = 0;

    gate_launch(&g, stream);
    CHECK_OK(tp_stream_launch_host_fn(stream, flag_host_fn, &after));
    CHECK_OK(tp_stream_destroy(stream));
    CHECK(gate_entered_within(&g, 1, EVENTUALLY_SECONDS));
    CHECK(atomic_load(&after) == 0);
    gate_open(&g);
    /* The host function after the gate still runs, and once it has, the gate's
     * function has returned: the gate may go. */
    CHECK(flag_reaches_within(&after, 1, EVENTUALLY_SECONDS));
    CHECK(gate_passed(&g) == 1);
    gate_destroy(&g);
    return 0;
}

TEST(rule09_event_on_destroyed_stream_stays_valid)
{
    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);
    atomic_int after = 0;

    gate_launch(&g, stream);
    CHECK_OK(tp_event_record(event, stream));
    CHECK_OK(tp_stream_launch_host_fn(stream, flag_host_fn, &after));
    CHECK_OK(tp_stream_destroy(stream));
    CHECK(event_pending_for(event, 50));
    gate_opener opener;
    gate_open_later(&opener, &g, 50);
    CHECK_OK(tp_event_synchronize(event));
    CHECK(gate_passed(&g) == 1);
    CHECK(event_is_done(event));
    gate_opener_join(&opener);

    CHECK(flag_reaches_within(&after, 1, EVENTUALLY_SECONDS));
    CHECK_OK(tp_event_destroy(event));
    gate_destroy(&g);
    return 0;
}

TEST(rule09_destroy_event_a_stream_waits_on)
{
    /* The wait refers to the record, not to the handle: destroying the event does
     * not release the waiting stream early, nor leave it waiting forever. */
    gate g;
    gate_init(&g);
    tp_stream *held = new_stream(env->device);
    tp_stream *waiter = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);
    tp_event *after_wait = new_event(env->device, TP_EVENT_DEFAULT);

    gate_launch(&g, held);
    CHECK_OK(tp_event_record(event, held));
    CHECK_OK(tp_stream_wait_event(waiter, event));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_event_record(after_wait, waiter));
    CHECK(event_pending_for(after_wait, 50));
    gate_open(&g);
    CHECK_OK(tp_event_synchronize(after_wait));
    CHECK(gate_passed(&g) == 1);

    CHECK_OK(tp_stream_synchronize(held));
    CHECK_OK(tp_event_destroy(after_wait));
    CHECK_OK(tp_stream_destroy(waiter));
    CHECK_OK(tp_stream_destroy(held));
    gate_destroy(&g);
    return 0;
}

TEST(rule09_destroy_default_stream_refused)
{
    tp_stream *default_stream = NULL;
    CHECK_OK(tp_stream_default(env->device, &default_stream));
    CHECK_STATUS(tp_stream_destroy(default_stream), TP_ERR_INVALID_ARGUMENT);
    CHECK(tp_last_error()[0] != '\0');

    /* Still there, still working. */
    tp_stream *again = NULL;
    CHECK_OK(tp_stream_default(env->device, &again));
    CHECK(again == default_stream);
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);
    atomic_int ran = 0;
    CHECK_OK(tp_stream_launch_host_fn(default_stream, flag_host_fn, &ran));
    CHECK_OK(tp_event_record(event, default_stream));
    CHECK_OK(tp_event_synchronize(event));
    CHECK(atomic_load(&ran) == 1);
    CHECK_OK(tp_event_destroy(event));
    return 0;
}

/* --------------------------------------------------------------- rule 10 */

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

/* --------------------------------------------------------------- rule 11 */

TEST(rule11_current_stream_starts_as_default)
{
    tp_stream *current = NULL, *default_stream = NULL;
    CHECK_OK(tp_stream_current(env->device, &current));
    CHECK_OK(tp_stream_default(env->device, &default_stream));
    CHECK(current != NULL);
    CHECK(current == default_stream);
    return 0;
}

typedef struct current_probe {
    const char *device;
    tp_stream *seen_first;
    tp_stream *set_to;
} current_probe;

static void *probe_current(void *arg)
{
    current_probe *probe = arg;
    CHECK_OK(tp_stream_current(probe->device, &probe->seen_first));
    CHECK_OK(tp_stream_set_current(probe->set_to));
    tp_stream *now = NULL;
    CHECK_OK(tp_stream_current(probe->device, &now));
    CHECK(now == probe->set_to);
    return NULL;
}

TEST(rule11_current_stream_is_per_thread)
{
    tp_stream *mine = new_stream(env->device);
    tp_stream *theirs = new_stream(env->device);
    tp_stream *default_stream = NULL;
    CHECK_OK(tp_stream_default(env->device, &default_stream));
    CHECK_OK(tp_stream_set_current(mine));

    current_probe probe = {env->device, NULL, theirs};
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, probe_current, &probe) == 0);
    CHECK(pthread_join(thread, NULL) == 0);
    CHECK(probe.seen_first == default_stream); /* not `mine` */

    tp_stream *current = NULL;
    CHECK_OK(tp_stream_current(env->device, &current));
    CHECK(current == mine); /* not `theirs` */

    CHECK_OK(tp_stream_set_current(default_stream));
    CHECK_OK(tp_stream_destroy(theirs));
    CHECK_OK(tp_stream_destroy(mine));
    return 0;
}

TEST(rule11_current_stream_is_per_device)
{
    REQUIRE_PEER(env);
    tp_stream *stream = new_stream(env->device);
    tp_stream *peer_default = NULL, *peer_current = NULL, *current = NULL;
    CHECK_OK(tp_stream_set_current(stream));
    CHECK_OK(tp_stream_default(env->peer, &peer_default));
    CHECK_OK(tp_stream_current(env->peer, &peer_current));
    CHECK(peer_current == peer_default);
    CHECK_OK(tp_stream_current(env->device, &current));
    CHECK(current == stream);

    tp_stream *default_stream = NULL;
    CHECK_OK(tp_stream_default(env->device, &default_stream));
    CHECK_OK(tp_stream_set_current(default_stream));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(rule11_record_null_stream_uses_current_stream)
{
    gate g;
    gate_init(&g);
    tp_stream *held = new_stream(env->device);
    tp_stream *default_stream = NULL;
    CHECK_OK(tp_stream_default(env->device, &default_stream));
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);

    gate_launch(&g, held);
    CHECK_OK(tp_stream_set_current(held));
    CHECK_OK(tp_event_record(event, NULL));
    CHECK(event_pending_for(event, 50));
    gate_open(&g);
    CHECK_OK(tp_event_synchronize(event));
    CHECK(gate_passed(&g) == 1);

    CHECK_OK(tp_stream_set_current(default_stream));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(held));
    gate_destroy(&g);
    return 0;
}

/* --------------------------------------------------------------- rule 12 */

TEST(rule12_host_fns_run_in_submission_order)
{
    enum { count = 100 };
    order_log log;
    order_log_init(&log);
    order_item items[count];
    tp_stream *stream = new_stream(env->device);
    for (int i = 0; i < count; i++) {
        items[i] = (order_item){&log, i};
        CHECK_OK(tp_stream_launch_host_fn(stream, order_log_host_fn, &items[i]));
    }
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK(log.count == count);
    for (int i = 0; i < count; i++)
        CHECK(log.values[i] == i);
    CHECK_OK(tp_stream_destroy(stream));
    order_log_destroy(&log);
    return 0;
}

TEST(rule12_host_fns_on_default_stream_in_order)
{
    enum { count = 50 };
    order_log log;
    order_log_init(&log);
    order_item items[count];
    tp_stream *stream = NULL;
    CHECK_OK(tp_stream_default(env->device, &stream));
    for (int i = 0; i < count; i++) {
        items[i] = (order_item){&log, i};
        CHECK_OK(tp_stream_launch_host_fn(stream, order_log_host_fn, &items[i]));
    }
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK(log.count == count);
    for (int i = 0; i < count; i++)
        CHECK(log.values[i] == i);
    order_log_destroy(&log);
    return 0;
}

TEST(rule12_event_orders_two_streams)
{
    gate g;
    gate_init(&g);
    order_log log;
    order_log_init(&log);
    order_item first = {&log, 1}, second = {&log, 2};
    tp_stream *a = new_stream(env->device);
    tp_stream *b = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);

    gate_launch(&g, a);
    CHECK_OK(tp_stream_launch_host_fn(a, order_log_host_fn, &first));
    CHECK_OK(tp_event_record(event, a));
    CHECK_OK(tp_stream_wait_event(b, event));
    CHECK_OK(tp_stream_launch_host_fn(b, order_log_host_fn, &second));
    sleep_ms(50);
    CHECK(!stream_is_idle(b));
    gate_open(&g);
    CHECK_OK(tp_stream_synchronize(b));
    CHECK_OK(tp_stream_synchronize(a));
    CHECK(log.count == 2);
    CHECK(log.values[0] == 1);
    CHECK(log.values[1] == 2);

    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(b));
    CHECK_OK(tp_stream_destroy(a));
    order_log_destroy(&log);
    gate_destroy(&g);
    return 0;
}

TEST(rule12_streams_without_event_are_independent)
{
    gate g;
    gate_init(&g);
    tp_stream *held = new_stream(env->device);
    tp_stream *other = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);

    gate_launch(&g, held);
    CHECK_OK(tp_event_record(event, other));
    CHECK(event_done_within(event, EVENTUALLY_SECONDS));
    CHECK_OK(tp_stream_synchronize(other));
    CHECK(!stream_is_idle(held));
    gate_open(&g);

    CHECK_OK(tp_stream_synchronize(held));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(other));
    CHECK_OK(tp_stream_destroy(held));
    gate_destroy(&g);
    return 0;
}

TEST(rule12_default_stream_independent_of_created_streams)
{
    /* Created streams do not wait for the default stream (CUDA: non-blocking). */
    gate g;
    gate_init(&g);
    tp_stream *default_stream = NULL;
    CHECK_OK(tp_stream_default(env->device, &default_stream));
    tp_stream *other = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);

    gate_launch(&g, default_stream);
    CHECK_OK(tp_event_record(event, other));
    CHECK(event_done_within(event, EVENTUALLY_SECONDS));
    CHECK(gate_passed(&g) == 0);
    gate_open(&g);

    CHECK_OK(tp_stream_synchronize(default_stream));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(other));
    gate_destroy(&g);
    return 0;
}
