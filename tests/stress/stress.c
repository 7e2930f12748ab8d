/*
 * Stress: many threads doing random things to a shared pool of streams and events
 * on two virtual CPU devices (rule 10: every function may be called from any thread
 * at the same time), for a given time.
 *
 *   tpevent_stress [--seconds S] [--watchdog S] [--seed N] [--threads N]
 *
 * --seconds: how long to run (default: $TPEVENT_STRESS_SECONDS, else 5);
 * --watchdog: fail if one call takes, or no thread finishes a call for, this long
 *   (default 30 s): a deadlock, reported with what each thread was doing;
 * --seed: the random choices (printed; the interleaving is the scheduler's).
 *
 * What it checks:
 *   - every call answers TP_OK, or one of the statuses documented for it in that
 *     situation (record on another device's stream: TP_ERR_DEVICE_MISMATCH, exactly
 *     when the devices differ; elapsed time and timestamps: rule 7's errors,
 *     TIMING_DISABLED exactly when a flag is missing, events of two devices timed);
 *   - no call hangs (the watchdog);
 *   - every host function launched runs, streams destroyed with work pending
 *     included (rule 9);
 *   - nothing leaks (ASan's leak check, in the asan preset) and nothing races (the
 *     tsan preset).
 *
 * Handles are shared, so destruction must not race with use: a thread uses a
 * handle only while it holds a use count on its pool slot, and destroys only a
 * handle it has taken out of its slot (which needs the use count to be zero); it
 * then puts a new one in. A thread never waits for a slot: a slot in use or empty
 * makes it pick another operation, so the pool itself cannot deadlock and what the
 * watchdog sees is the library's.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tpevent/tpevent.h>

#define STRESS_DEVICES 2
#define STRESS_STREAMS 64
#define STRESS_EVENTS 256
#define STRESS_THREADS_DEFAULT 16
#define STRESS_THREADS_MAX 256
#define STRESS_SECONDS_DEFAULT 5.0
#define STRESS_WATCHDOG_DEFAULT 30.0

static const char *const device_names[STRESS_DEVICES] = {"cpu:0", "cpu:1"};

/* ----------------------------------------------------------- operations */

#define STRESS_OPS(X)                                                                \
    X(EVENT_RECORD, "tp_event_record", 14)                                           \
    X(EVENT_RECORD_CURRENT, "tp_event_record(NULL stream)", 4)                       \
    X(EVENT_QUERY, "tp_event_query", 14)                                             \
    X(EVENT_SYNCHRONIZE, "tp_event_synchronize", 6)                                  \
    X(EVENT_WAIT, "tp_event_wait", 8)                                                \
    X(EVENT_ELAPSED, "tp_event_elapsed_time", 8)                                     \
    X(EVENT_REPLACE, "tp_event_destroy+create", 5)                                   \
    X(HOST_FN, "tp_stream_launch_host_fn", 14)                                       \
    X(STREAM_QUERY, "tp_stream_query", 6)                                            \
    X(STREAM_SYNCHRONIZE, "tp_stream_synchronize", 4)                                \
    X(STREAM_WAIT_STREAM, "tp_stream_wait_stream", 4)                                \
    X(STREAM_RECORD_NEW_EVENT, "tp_stream_record_event(new)", 3)                     \
    X(STREAM_REPLACE, "tp_stream_destroy+create", 1)                                 \
    X(DEVICE_SYNCHRONIZE, "tp_device_synchronize", 1)

typedef enum op_kind {
    OP_IDLE,
#define STRESS_OP_ENUM(name, text, weight) OP_##name,
    STRESS_OPS(STRESS_OP_ENUM)
#undef STRESS_OP_ENUM
    OP_KIND_COUNT
} op_kind;

static const char *const op_names[OP_KIND_COUNT] = {
    "(between operations)",
#define STRESS_OP_NAME(name, text, weight) text,
    STRESS_OPS(STRESS_OP_NAME)
#undef STRESS_OP_NAME
};

static const unsigned op_weights[OP_KIND_COUNT] = {
    0,
#define STRESS_OP_WEIGHT(name, text, weight) weight,
    STRESS_OPS(STRESS_OP_WEIGHT)
#undef STRESS_OP_WEIGHT
};

/* ------------------------------------------------------------------ pool */

typedef struct stream_slot {
    pthread_mutex_t lock;
    tp_stream *stream; /* NULL while a thread has it out to replace it */
    int device;
    unsigned users;
} stream_slot;

typedef struct event_slot {
    pthread_mutex_t lock;
    tp_event *event; /* NULL while a thread has it out to replace it */
    int device;
    unsigned flags;
    unsigned users;
} event_slot;

/*
 * What a thread is doing, for the watchdog's dump: written by its thread, read by
 * the watchdog, hence atomics. Slot indices are -1 when unused.
 */
typedef struct activity {
    atomic_int op;
    atomic_int stream_slots[2];
    atomic_int event_slots[2];
    atomic_int device; /* of tp_device_synchronize */
    _Atomic uintptr_t handles[2];
    _Atomic uint64_t since_ns;
    _Atomic uint64_t done; /* operations finished */
} activity;

typedef struct stress stress;

typedef struct worker {
    stress *stress;
    int index;
    uint64_t rng;
    activity activity;
    uint64_t op_counts[OP_KIND_COUNT];
    uint64_t status_counts[TP_STATUS_COUNT];
    pthread_t thread;
} worker;

struct stress {
    double seconds;
    double watchdog_seconds;
    uint64_t seed;
    int thread_count;

    stream_slot streams[STRESS_STREAMS];
    event_slot events[STRESS_EVENTS];

    atomic_bool stop;
    _Atomic uint64_t host_fns_launched;
    _Atomic uint64_t host_fns_ran;
    _Atomic uint64_t last_progress_ns;

    worker workers[STRESS_THREADS_MAX];
};

/* ---------------------------------------------------------------- helpers */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_us(long us)
{
    struct timespec left = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
}

/* splitmix64: small, good enough, one state word per thread. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static unsigned random_below(uint64_t *state, unsigned bound)
{
    return (unsigned)(next_random(state) % bound);
}

static _Noreturn void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static _Noreturn void fail(const char *fmt, ...)
{
    va_list args;
    fprintf(stderr, "stress: FAILED: ");
    va_start(args, fmt);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fprintf(stderr, "\n");
    fflush(stderr);
    /* Not exit(): other threads are still inside the library. */
    _Exit(1);
}

/* Fails unless the status is one of those listed (TP_OK must be listed if OK is). */
static void expect_status(worker *w, tp_status got, int count, ...)
{
    va_list allowed;
    va_start(allowed, count);
    for (int i = 0; i < count; i++) {
        if ((tp_status)va_arg(allowed, int) == got) {
            va_end(allowed);
            if ((unsigned)got < TP_STATUS_COUNT)
                w->status_counts[got]++;
            return;
        }
    }
    va_end(allowed);
    activity *a = &w->activity;
    fail("thread %d: %s (stream slots %d %d, event slots %d %d) returned %s: %s", w->index,
         op_names[atomic_load(&a->op)], atomic_load(&a->stream_slots[0]), atomic_load(&a->stream_slots[1]),
         atomic_load(&a->event_slots[0]), atomic_load(&a->event_slots[1]), tp_status_name(got), tp_last_error());
}

#define EXPECT_OK(w, call) expect_status((w), (call), 1, TP_OK)

/* ------------------------------------------------------------ pool access */

/* A use count on the slot's stream, or NULL if it is out being replaced. */
static tp_stream *borrow_stream(stream_slot *slot, int *device)
{
    pthread_mutex_lock(&slot->lock);
    tp_stream *stream = slot->stream;
    if (stream) {
        slot->users++;
        *device = slot->device;
    }
    pthread_mutex_unlock(&slot->lock);
    return stream;
}

static void return_stream(stream_slot *slot)
{
    pthread_mutex_lock(&slot->lock);
    slot->users--;
    pthread_mutex_unlock(&slot->lock);
}

/* The slot's stream, taken out for this thread alone, or NULL if someone uses it. */
static tp_stream *take_stream(stream_slot *slot)
{
    pthread_mutex_lock(&slot->lock);
    tp_stream *stream = NULL;
    if (slot->users == 0) {
        stream = slot->stream;
        slot->stream = NULL;
    }
    pthread_mutex_unlock(&slot->lock);
    return stream;
}

static void put_stream(stream_slot *slot, tp_stream *stream, int device)
{
    pthread_mutex_lock(&slot->lock);
    slot->stream = stream;
    slot->device = device;
    pthread_mutex_unlock(&slot->lock);
}

static tp_event *borrow_event(event_slot *slot, int *device, unsigned *flags)
{
    pthread_mutex_lock(&slot->lock);
    tp_event *event = slot->event;
    if (event) {
        slot->users++;
        *device = slot->device;
        *flags = slot->flags;
    }
    pthread_mutex_unlock(&slot->lock);
    return event;
}

static void return_event(event_slot *slot)
{
    pthread_mutex_lock(&slot->lock);
    slot->users--;
    pthread_mutex_unlock(&slot->lock);
}

static tp_event *take_event(event_slot *slot)
{
    pthread_mutex_lock(&slot->lock);
    tp_event *event = NULL;
    if (slot->users == 0) {
        event = slot->event;
        slot->event = NULL;
    }
    pthread_mutex_unlock(&slot->lock);
    return event;
}

static void put_event(event_slot *slot, tp_event *event, int device, unsigned flags)
{
    pthread_mutex_lock(&slot->lock);
    slot->event = event;
    slot->device = device;
    slot->flags = flags;
    pthread_mutex_unlock(&slot->lock);
}

/* ---------------------------------------------------------- host functions */

static void host_count(void *arg)
{
    stress *s = arg;
    atomic_fetch_add_explicit(&s->host_fns_ran, 1, memory_order_relaxed);
}

/* Keeps its stream busy for a moment, so that records are pending, elapsed times
 * not ready and waits really wait. */
static void host_busy(void *arg)
{
    sleep_us(50);
    host_count(arg);
}

/* -------------------------------------------------------------- activity */

static void begin_op(worker *w, op_kind op)
{
    activity *a = &w->activity;
    for (int i = 0; i < 2; i++) {
        atomic_store(&a->stream_slots[i], -1);
        atomic_store(&a->event_slots[i], -1);
        atomic_store(&a->handles[i], 0);
    }
    atomic_store(&a->device, -1);
    atomic_store(&a->since_ns, now_ns());
    atomic_store(&a->op, (int)op);
}

static void note_stream(worker *w, int which, int slot, tp_stream *stream)
{
    atomic_store(&w->activity.stream_slots[which], slot);
    atomic_store(&w->activity.handles[which], (uintptr_t)stream);
}

static void note_event(worker *w, int which, int slot, tp_event *event)
{
    atomic_store(&w->activity.event_slots[which], slot);
    atomic_store(&w->activity.handles[which], (uintptr_t)event);
}

static void end_op(worker *w, op_kind op, bool performed)
{
    atomic_store(&w->activity.op, OP_IDLE);
    atomic_store(&w->activity.since_ns, now_ns());
    if (!performed)
        return;
    w->op_counts[op]++;
    atomic_fetch_add_explicit(&w->activity.done, 1, memory_order_relaxed);
    atomic_store_explicit(&w->stress->last_progress_ns, now_ns(), memory_order_relaxed);
}

/* ------------------------------------------------------------- operations */

static unsigned random_event_flags(uint64_t *rng)
{
    static const unsigned choices[] = {
        TP_EVENT_DEFAULT,      TP_EVENT_TIMING, TP_EVENT_BLOCKING, TP_EVENT_TIMING | TP_EVENT_BLOCKING,
        TP_EVENT_INTERPROCESS, TP_EVENT_INTERPROCESS | TP_EVENT_BLOCKING,
    };
    /* Timing events twice as often: elapsed time needs two of them. */
    unsigned pick = random_below(rng, 8);
    return pick < 6 ? choices[pick] : TP_EVENT_TIMING;
}

static tp_event *create_event(worker *w, int device, unsigned flags)
{
    tp_event *event = NULL;
    EXPECT_OK(w, tp_event_create(&event, device_names[device], flags));
    return event;
}

static tp_stream *create_stream(worker *w, int device)
{
    tp_stream *stream = NULL;
    int priority = (int)random_below(&w->rng, 5) - 3; /* -3..1: clamped by the backend */
    EXPECT_OK(w, tp_stream_create(&stream, device_names[device], priority));
    return stream;
}

static bool op_event_record(worker *w)
{
    stress *s = w->stress;
    int ei = (int)random_below(&w->rng, STRESS_EVENTS), si = (int)random_below(&w->rng, STRESS_STREAMS);
    int event_device, stream_device;
    unsigned flags;
    tp_event *event = borrow_event(&s->events[ei], &event_device, &flags);
    if (!event)
        return false;
    tp_stream *stream = borrow_stream(&s->streams[si], &stream_device);
    if (stream) {
        note_event(w, 0, ei, event);
        note_stream(w, 1, si, stream);
        /* Rule 1: exactly when the devices differ. */
        expect_status(w, tp_event_record(event, stream), 1,
                      event_device == stream_device ? TP_OK : TP_ERR_DEVICE_MISMATCH);
        return_stream(&s->streams[si]);
    }
    return_event(&s->events[ei]);
    return stream != NULL;
}

static bool op_event_record_current(worker *w)
{
    stress *s = w->stress;
    int ei = (int)random_below(&w->rng, STRESS_EVENTS), si = (int)random_below(&w->rng, STRESS_STREAMS);
    int event_device, stream_device;
    unsigned flags;
    tp_stream *stream = borrow_stream(&s->streams[si], &stream_device);
    if (!stream)
        return false;
    tp_event *event = borrow_event(&s->events[ei], &event_device, &flags);
    if (event) {
        note_stream(w, 0, si, stream);
        note_event(w, 1, ei, event);
        /* Rule 11: the current stream of the event's device, which is this stream
         * if it is of that device and the default stream otherwise. Made current
         * only while borrowed: another thread may destroy it afterwards. */
        EXPECT_OK(w, tp_stream_set_current(stream));
        EXPECT_OK(w, tp_event_record(event, NULL));
        tp_stream *default_stream = NULL;
        EXPECT_OK(w, tp_stream_default(device_names[stream_device], &default_stream));
        EXPECT_OK(w, tp_stream_set_current(default_stream));
        return_event(&s->events[ei]);
    }
    return_stream(&s->streams[si]);
    return event != NULL;
}

static bool op_on_event(worker *w, op_kind op)
{
    stress *s = w->stress;
    int ei = (int)random_below(&w->rng, STRESS_EVENTS);
    int device;
    unsigned flags;
    tp_event *event = borrow_event(&s->events[ei], &device, &flags);
    if (!event)
        return false;
    note_event(w, 0, ei, event);
    bool done = false;
    if (op == OP_EVENT_QUERY)
        EXPECT_OK(w, tp_event_query(event, &done));
    else
        EXPECT_OK(w, tp_event_synchronize(event));
    return_event(&s->events[ei]);
    return true;
}

static bool op_event_wait(worker *w)
{
    stress *s = w->stress;
    int ei = (int)random_below(&w->rng, STRESS_EVENTS), si = (int)random_below(&w->rng, STRESS_STREAMS);
    int event_device, stream_device;
    unsigned flags;
    tp_event *event = borrow_event(&s->events[ei], &event_device, &flags);
    if (!event)
        return false;
    tp_stream *stream = borrow_stream(&s->streams[si], &stream_device);
    if (stream) {
        note_event(w, 0, ei, event);
        note_stream(w, 1, si, stream);
        /* Any stream, of any device, may wait (rule 1); both spellings. */
        if (random_below(&w->rng, 2))
            EXPECT_OK(w, tp_event_wait(event, stream));
        else
            EXPECT_OK(w, tp_stream_wait_event(stream, event));
        return_stream(&s->streams[si]);
    }
    return_event(&s->events[ei]);
    return stream != NULL;
}

static bool op_event_elapsed(worker *w)
{
    stress *s = w->stress;
    int ai = (int)random_below(&w->rng, STRESS_EVENTS), bi = (int)random_below(&w->rng, STRESS_EVENTS);
    int a_device, b_device;
    unsigned a_flags, b_flags;
    tp_event *start = borrow_event(&s->events[ai], &a_device, &a_flags);
    if (!start)
        return false;
    tp_event *end = borrow_event(&s->events[bi], &b_device, &b_flags);
    if (end) {
        note_event(w, 0, ai, start);
        note_event(w, 1, bi, end);
        float ms = NAN;
        tp_status status = tp_event_elapsed_time(start, end, &ms);
        /* Rule 7: TIMING_DISABLED first, and exactly when a flag is missing; the
         * others depend on what the other threads did meanwhile. Two devices are
         * timed too, on the host clock (rule 13). */
        if (!(a_flags & b_flags & TP_EVENT_TIMING))
            expect_status(w, status, 1, TP_ERR_TIMING_DISABLED);
        else
            expect_status(w, status, 3, TP_OK, TP_ERR_NOT_RECORDED, TP_ERR_NOT_READY);
        if (status == TP_OK && (!isfinite(ms) || (start == end && ms != 0.0f)))
            fail("thread %d: elapsed time of event slots %d and %d is %g ms", w->index, ai, bi, (double)ms);
        /* The timestamp behind it (rule 13), while other threads record the event. */
        int64_t ns = 0;
        status = tp_event_timestamp(start, &ns);
        if (!(a_flags & TP_EVENT_TIMING))
            expect_status(w, status, 1, TP_ERR_TIMING_DISABLED);
        else
            expect_status(w, status, 3, TP_OK, TP_ERR_NOT_RECORDED, TP_ERR_NOT_READY);
        return_event(&s->events[bi]);
    }
    return_event(&s->events[ai]);
    return end != NULL;
}

static bool op_event_replace(worker *w)
{
    stress *s = w->stress;
    int ei = (int)random_below(&w->rng, STRESS_EVENTS);
    tp_event *old = take_event(&s->events[ei]);
    if (!old)
        return false;
    note_event(w, 0, ei, old);
    /* Often with a record still pending (rule 9): the slot's event was just in use. */
    EXPECT_OK(w, tp_event_destroy(old));
    int device = (int)random_below(&w->rng, STRESS_DEVICES);
    unsigned flags = random_event_flags(&w->rng);
    tp_event *event = create_event(w, device, flags);
    note_event(w, 1, ei, event);
    put_event(&s->events[ei], event, device, flags);
    return true;
}

static tp_status launch_host_fn(worker *w, tp_stream *stream)
{
    stress *s = w->stress;
    void (*fn)(void *) = random_below(&w->rng, 4) == 0 ? host_busy : host_count;
    tp_status status = tp_stream_launch_host_fn(stream, fn, s);
    if (status == TP_OK)
        atomic_fetch_add_explicit(&s->host_fns_launched, 1, memory_order_relaxed);
    return status;
}

static bool op_on_stream(worker *w, op_kind op)
{
    stress *s = w->stress;
    int si = (int)random_below(&w->rng, STRESS_STREAMS);
    int device;
    tp_stream *stream = borrow_stream(&s->streams[si], &device);
    if (!stream)
        return false;
    note_stream(w, 0, si, stream);
    bool idle = false;
    tp_event *event = NULL;
    switch (op) {
    case OP_HOST_FN:
        EXPECT_OK(w, launch_host_fn(w, stream));
        break;
    case OP_STREAM_QUERY:
        EXPECT_OK(w, tp_stream_query(stream, &idle));
        break;
    case OP_STREAM_SYNCHRONIZE:
        EXPECT_OK(w, tp_stream_synchronize(stream));
        break;
    case OP_STREAM_RECORD_NEW_EVENT:
        EXPECT_OK(w, tp_stream_record_event(stream, &event));
        note_event(w, 1, -1, event);
        if (random_below(&w->rng, 2))
            EXPECT_OK(w, tp_event_synchronize(event));
        EXPECT_OK(w, tp_event_destroy(event));
        break;
    default:
        fail("op_on_stream: %s", op_names[op]);
    }
    return_stream(&s->streams[si]);
    return true;
}

static bool op_stream_wait_stream(worker *w)
{
    stress *s = w->stress;
    int ai = (int)random_below(&w->rng, STRESS_STREAMS), bi = (int)random_below(&w->rng, STRESS_STREAMS);
    int a_device, b_device;
    tp_stream *waiter = borrow_stream(&s->streams[ai], &a_device);
    if (!waiter)
        return false;
    tp_stream *other = borrow_stream(&s->streams[bi], &b_device);
    if (other) {
        note_stream(w, 0, ai, waiter);
        note_stream(w, 1, bi, other);
        EXPECT_OK(w, tp_stream_wait_stream(waiter, other));
        return_stream(&s->streams[bi]);
    }
    return_stream(&s->streams[ai]);
    return other != NULL;
}

static bool op_stream_replace(worker *w)
{
    stress *s = w->stress;
    int si = (int)random_below(&w->rng, STRESS_STREAMS);
    tp_stream *old = take_stream(&s->streams[si]);
    if (!old)
        return false;
    note_stream(w, 0, si, old);
    /* Work still pending when it goes (rule 9): it must run all the same. */
    EXPECT_OK(w, launch_host_fn(w, old));
    EXPECT_OK(w, tp_stream_destroy(old));
    int device = (int)random_below(&w->rng, STRESS_DEVICES);
    tp_stream *stream = create_stream(w, device);
    note_stream(w, 1, si, stream);
    put_stream(&s->streams[si], stream, device);
    return true;
}

static bool op_device_synchronize(worker *w)
{
    int device = (int)random_below(&w->rng, STRESS_DEVICES);
    atomic_store(&w->activity.device, device);
    EXPECT_OK(w, tp_device_synchronize(device_names[device]));
    return true;
}

static op_kind pick_op(uint64_t *rng)
{
    unsigned total = 0;
    for (int op = 0; op < OP_KIND_COUNT; op++)
        total += op_weights[op];
    unsigned pick = random_below(rng, total);
    for (int op = 1; op < OP_KIND_COUNT; op++) {
        if (pick < op_weights[op])
            return (op_kind)op;
        pick -= op_weights[op];
    }
    return OP_EVENT_QUERY;
}

static bool perform(worker *w, op_kind op)
{
    switch (op) {
    case OP_EVENT_RECORD:
        return op_event_record(w);
    case OP_EVENT_RECORD_CURRENT:
        return op_event_record_current(w);
    case OP_EVENT_QUERY:
    case OP_EVENT_SYNCHRONIZE:
        return op_on_event(w, op);
    case OP_EVENT_WAIT:
        return op_event_wait(w);
    case OP_EVENT_ELAPSED:
        return op_event_elapsed(w);
    case OP_EVENT_REPLACE:
        return op_event_replace(w);
    case OP_HOST_FN:
    case OP_STREAM_QUERY:
    case OP_STREAM_SYNCHRONIZE:
    case OP_STREAM_RECORD_NEW_EVENT:
        return op_on_stream(w, op);
    case OP_STREAM_WAIT_STREAM:
        return op_stream_wait_stream(w);
    case OP_STREAM_REPLACE:
        return op_stream_replace(w);
    case OP_DEVICE_SYNCHRONIZE:
        return op_device_synchronize(w);
    case OP_IDLE:
    case OP_KIND_COUNT:
        break;
    }
    fail("perform: operation %d", (int)op);
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    while (!atomic_load_explicit(&w->stress->stop, memory_order_relaxed)) {
        op_kind op = pick_op(&w->rng);
        begin_op(w, op);
        end_op(w, op, perform(w, op));
    }
    return NULL;
}

/* --------------------------------------------------------------- watchdog */

typedef struct watchdog {
    stress *stress;
    atomic_bool done;
    /* What the main thread is doing once the workers have stopped. */
    _Atomic(const char *) main_phase;
    _Atomic uint64_t main_since_ns;
    pthread_t thread;
} watchdog;

static _Noreturn void dump_and_fail(const stress *s, const char *why)
{
    uint64_t now = now_ns();
    fprintf(stderr, "stress: FAILED: %s (watchdog: %.0f s). What each thread was doing:\n", why,
            s->watchdog_seconds);
    for (int i = 0; i < s->thread_count; i++) {
        const activity *a = &s->workers[i].activity;
        int op = atomic_load(&a->op);
        double for_s = (double)(now - atomic_load(&a->since_ns)) / 1e9;
        int device = atomic_load(&a->device);
        fprintf(stderr,
                "  thread %2d: %-30s for %6.2f s  %s%s stream slots %3d %3d, event slots %3d %3d, "
                "handles %#" PRIxPTR " %#" PRIxPTR "; %" PRIu64 " operations done\n",
                i, op >= 0 && op < OP_KIND_COUNT ? op_names[op] : "?", for_s,
                device >= 0 && device < STRESS_DEVICES ? device_names[device] : "", device >= 0 ? "," : "",
                atomic_load(&a->stream_slots[0]), atomic_load(&a->stream_slots[1]), atomic_load(&a->event_slots[0]),
                atomic_load(&a->event_slots[1]), atomic_load(&a->handles[0]), atomic_load(&a->handles[1]),
                atomic_load(&a->done));
    }
    fprintf(stderr, "  host functions: %" PRIu64 " launched, %" PRIu64 " ran\n",
            atomic_load(&s->host_fns_launched), atomic_load(&s->host_fns_ran));
    fflush(stderr);
    _Exit(1);
}

static void *watchdog_main(void *arg)
{
    watchdog *dog = arg;
    stress *s = dog->stress;
    uint64_t limit_ns = (uint64_t)(s->watchdog_seconds * 1e9);
    char why[160];
    while (!atomic_load(&dog->done)) {
        sleep_us(100000);
        uint64_t now = now_ns();
        const char *phase = atomic_load(&dog->main_phase);
        if (phase) {
            if (now - atomic_load(&dog->main_since_ns) > limit_ns) {
                snprintf(why, sizeof why, "the main thread hangs %s", phase);
                dump_and_fail(s, why);
            }
            continue;
        }
        for (int i = 0; i < s->thread_count; i++) {
            const activity *a = &s->workers[i].activity;
            int op = atomic_load(&a->op);
            uint64_t since = atomic_load(&a->since_ns);
            if (op != OP_IDLE && now > since && now - since > limit_ns) {
                snprintf(why, sizeof why, "thread %d hangs in %s", i, op_names[op]);
                dump_and_fail(s, why);
            }
        }
        uint64_t last = atomic_load_explicit(&s->last_progress_ns, memory_order_relaxed);
        if (now > last && now - last > limit_ns)
            dump_and_fail(s, "no thread finished an operation");
    }
    return NULL;
}

static void main_phase(watchdog *dog, const char *phase)
{
    atomic_store(&dog->main_since_ns, now_ns());
    atomic_store(&dog->main_phase, phase);
}

/* ------------------------------------------------------------------- main */

static double parse_seconds(const char *text, const char *what)
{
    char *end;
    errno = 0;
    double value = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !(value > 0) || value > 1e6)
        fail("%s: expected a positive number of seconds, got \"%s\"", what, text);
    return value;
}

static uint64_t parse_u64(const char *text, const char *what)
{
    char *end;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 0);
    if (errno != 0 || end == text || *end != '\0')
        fail("%s: expected a whole number, got \"%s\"", what, text);
    return (uint64_t)value;
}

static void parse_arguments(stress *s, int argc, char **argv)
{
    const char *env = getenv("TPEVENT_STRESS_SECONDS");
    s->seconds = env && *env ? parse_seconds(env, "TPEVENT_STRESS_SECONDS") : STRESS_SECONDS_DEFAULT;
    s->watchdog_seconds = STRESS_WATCHDOG_DEFAULT;
    s->seed = now_ns() ^ ((uint64_t)(uintptr_t)s << 16);
    s->thread_count = STRESS_THREADS_DEFAULT;
    for (int i = 1; i < argc; i += 2) { /* every option takes a value */
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--seconds") == 0 && value)
            s->seconds = parse_seconds(value, "--seconds");
        else if (strcmp(argv[i], "--watchdog") == 0 && value)
            s->watchdog_seconds = parse_seconds(value, "--watchdog");
        else if (strcmp(argv[i], "--seed") == 0 && value)
            s->seed = parse_u64(value, "--seed");
        else if (strcmp(argv[i], "--threads") == 0 && value) {
            uint64_t threads = parse_u64(value, "--threads");
            if (threads < 1 || threads > STRESS_THREADS_MAX)
                fail("--threads: from 1 to %d", STRESS_THREADS_MAX);
            s->thread_count = (int)threads;
        } else {
            fprintf(stderr, "usage: %s [--seconds S] [--watchdog S] [--seed N] [--threads N]\n", argv[0]);
            exit(2);
        }
    }
}

static void fill_pool(stress *s, worker *setup)
{
    for (int i = 0; i < STRESS_STREAMS; i++) {
        pthread_mutex_init(&s->streams[i].lock, NULL);
        int device = i % STRESS_DEVICES;
        put_stream(&s->streams[i], create_stream(setup, device), device);
    }
    for (int i = 0; i < STRESS_EVENTS; i++) {
        pthread_mutex_init(&s->events[i].lock, NULL);
        int device = (int)random_below(&setup->rng, STRESS_DEVICES);
        unsigned flags = random_event_flags(&setup->rng);
        put_event(&s->events[i], create_event(setup, device, flags), device, flags);
    }
}

/* Destroys what is left, with whatever work is still pending on it (rule 9). */
static void empty_pool(stress *s, worker *setup)
{
    for (int i = 0; i < STRESS_STREAMS; i++) {
        EXPECT_OK(setup, tp_stream_destroy(s->streams[i].stream));
        pthread_mutex_destroy(&s->streams[i].lock);
    }
    for (int i = 0; i < STRESS_EVENTS; i++) {
        EXPECT_OK(setup, tp_event_destroy(s->events[i].event));
        pthread_mutex_destroy(&s->events[i].lock);
    }
}

static void report(const stress *s, double elapsed)
{
    uint64_t ops[OP_KIND_COUNT] = {0}, statuses[TP_STATUS_COUNT] = {0}, total = 0;
    for (int i = 0; i < s->thread_count; i++) {
        for (int op = 0; op < OP_KIND_COUNT; op++) {
            ops[op] += s->workers[i].op_counts[op];
            total += s->workers[i].op_counts[op];
        }
        for (int st = 0; st < TP_STATUS_COUNT; st++)
            statuses[st] += s->workers[i].status_counts[st];
    }
    printf("stress: %" PRIu64 " operations in %.1f s (%.0f/s) by %d threads\n", total, elapsed,
           (double)total / elapsed, s->thread_count);
    for (int op = 1; op < OP_KIND_COUNT; op++)
        printf("  %-30s %10" PRIu64 "\n", op_names[op], ops[op]);
    printf("  statuses answered:");
    for (int st = 0; st < TP_STATUS_COUNT; st++)
        if (statuses[st])
            printf(" %s %" PRIu64, tp_status_name((tp_status)st), statuses[st]);
    printf("\n  host functions: %" PRIu64 " launched, %" PRIu64 " ran\n", atomic_load(&s->host_fns_launched),
           atomic_load(&s->host_fns_ran));
}

int main(int argc, char **argv)
{
    stress *s = calloc(1, sizeof *s);
    if (!s)
        fail("out of memory");
    parse_arguments(s, argc, argv);
    /* Two virtual CPU devices unless the caller chose; at least two are needed. */
    setenv("TPEVENT_CPU_DEVICES", "2", 0);
    int cpu_devices = 0;
    if (tp_device_count("cpu", &cpu_devices) != TP_OK || cpu_devices < STRESS_DEVICES)
        fail("needs %d CPU devices (TPEVENT_CPU_DEVICES), has %d: %s", STRESS_DEVICES, cpu_devices,
             tp_last_error());

    printf("stress: %d threads, %d streams, %d events on cpu:0 and cpu:1, %.1f s, watchdog %.0f s, --seed %" PRIu64
           "\n",
           s->thread_count, STRESS_STREAMS, STRESS_EVENTS, s->seconds, s->watchdog_seconds, s->seed);
    fflush(stdout);

    worker setup = {.stress = s, .index = -1, .rng = s->seed};
    fill_pool(s, &setup);

    atomic_store(&s->last_progress_ns, now_ns());
    for (int i = 0; i < s->thread_count; i++) {
        worker *w = &s->workers[i];
        w->stress = s;
        w->index = i;
        w->rng = s->seed + 0x1000193u * (uint64_t)(i + 1);
        atomic_store(&w->activity.since_ns, now_ns());
        if (pthread_create(&w->thread, NULL, worker_main, w) != 0)
            fail("pthread_create for thread %d", i);
    }
    watchdog dog = {.stress = s};
    if (pthread_create(&dog.thread, NULL, watchdog_main, &dog) != 0)
        fail("pthread_create for the watchdog");

    uint64_t start = now_ns();
    sleep_us((long)(s->seconds * 1e6));
    atomic_store(&s->stop, true);
    for (int i = 0; i < s->thread_count; i++)
        pthread_join(s->workers[i].thread, NULL);
    double elapsed = (double)(now_ns() - start) / 1e9;

    main_phase(&dog, "destroying the pool");
    empty_pool(s, &setup);
    main_phase(&dog, "in tp_device_synchronize");
    for (int d = 0; d < STRESS_DEVICES; d++)
        EXPECT_OK(&setup, tp_device_synchronize(device_names[d]));
    /* Streams destroyed with work pending finish it on their own (rule 9); every
     * host function launched must run. */
    main_phase(&dog, "waiting for every host function launched to run");
    while (atomic_load(&s->host_fns_ran) < atomic_load(&s->host_fns_launched))
        sleep_us(1000);
    atomic_store(&dog.done, true);
    pthread_join(dog.thread, NULL);

    report(s, elapsed);
    if (atomic_load(&s->host_fns_ran) != atomic_load(&s->host_fns_launched))
        fail("more host functions ran than were launched");
    free(s);
    return 0;
}
