/*
 * Model-based test: random sequences of operations, run on a real backend and on
 * the reference model (model.h), whose predictions are checked at checkpoints.
 *
 *   tpevent_model --device D [--peer P] [--seed S] [--sequences N] [--ops N] [--verbose]
 *
 * Sequence k runs with seed S+k, so `--seed S+k --sequences 1` replays it alone; a
 * failure prints that command line and the operations of the sequence so far.
 * Exit 77 (skip) with the backend's reason when D cannot be used; without a usable
 * peer the cross-device operations are left out.
 *
 * What is checked against the model:
 *   - which host functions (and gates) have run: none the model says cannot have
 *     (blocked behind a closed gate), and, once things settle, all the others;
 *   - in what order: each ran after every host function the model says must come
 *     first (its own stream's earlier ones, rule 12, and those on other streams it
 *     waits for through events and stream waits, rule 6, at the record that was
 *     latest when the wait was made);
 *   - which events are done (query, rules 3 and 4), which streams are idle;
 *   - synchronize of an event, a stream or a device returns only once everything
 *     the model says it depends on has run (rule 5);
 *   - what every call returns: record on another device's stream (rule 1), elapsed
 *     time's and timestamps' errors in rule 7's order, INTERPROCESS|TIMING refused
 *     (rule 8), destroying with work pending (rule 9), the current stream (rule 11);
 *   - elapsed time's sign where the model knows the order of two records, on one
 *     device's clock and, across devices and backends, on the host clock, where it
 *     is the difference of the two timestamps (rules 7 and 13).
 *
 * Host functions of one CUDA or HIP device may all run on one runtime thread, so a
 * closed gate there may hold back host functions of other streams. On those
 * backends, while a gate is closed with an item queued, the test checks only what
 * must NOT have happened (and calls nothing that blocks); what must have happened is
 * checked once the gates are open. The CPU backend runs each stream on its own
 * thread, so there both are checked at every checkpoint.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "model.h"

#define TEST_SKIP 77
#define EVENTUALLY_SECONDS 10.0
#define SEQUENCE_WATCHDOG_SECONDS 120
/* Gates per sequence: each opens once, for good, so a sequence needs several to
 * keep something blocked most of the time. */
#define MODEL_GATES 12
#define MAX_OPS 1000
#define TRACE_WIDTH 96

typedef struct real_gate {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    bool open;
} real_gate;

typedef struct runner runner;

/* The argument of one host function launched: which model item it is. */
typedef struct host_call {
    runner *runner;
    int item;
    int gate; /* -1: a plain host function */
} host_call;

struct runner {
    const char *devices[2]; /* the device under test and its peer (NULL: none) */
    tp_device_type types[2];
    int64_t error_ns[2]; /* tp_device_clock's, for the order on the host clock */
    bool independent_host_threads;
    bool verbose;
    uint64_t base_seed;
    uint64_t seed; /* of this sequence */
    uint64_t rng;
    int sequence;

    model *m;
    tp_stream *streams[MODEL_MAX_STREAMS];
    tp_event *events[MODEL_MAX_EVENTS];
    real_gate gates[MODEL_MAX_GATES];
    host_call calls[MODEL_MAX_ITEMS];

    /* Model items in the order their host functions ran. */
    pthread_mutex_t log_lock;
    int log[MODEL_MAX_ITEMS];
    int log_count;

    /* The main thread's working copies of the log, for the checks. */
    int snapshot[MODEL_MAX_ITEMS];
    int rank[MODEL_MAX_ITEMS];

    char trace[MAX_OPS + 16][TRACE_WIDTH];
    int trace_count;
};

/* ------------------------------------------------------------ reporting */

static const char *device_name_of(const runner *r, int device)
{
    return r->devices[device];
}

static void print_trace(const runner *r)
{
    fprintf(stderr, "operations of this sequence so far:\n");
    for (int i = 0; i < r->trace_count; i++)
        fprintf(stderr, "  %s\n", r->trace[i]);
}

static _Noreturn void fail(runner *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static _Noreturn void fail(runner *r, const char *fmt, ...)
{
    va_list args;
    fflush(stdout);
    print_trace(r);
    fprintf(stderr, "model: FAILED: ");
    va_start(args, fmt);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fprintf(stderr, "\n  tp_last_error (this thread): \"%s\"\n", tp_last_error());
    fprintf(stderr, "  sequence %d; replay it with: --device %s%s%s --seed %" PRIu64 " --sequences 1\n", r->sequence,
            r->devices[0], r->devices[1] ? " --peer " : "", r->devices[1] ? r->devices[1] : "", r->seed);
    fflush(stderr);
    /* Not exit(): host functions may be blocked on gates nobody will open. */
    _Exit(1);
}

static void trace(runner *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void trace(runner *r, const char *fmt, ...)
{
    if (r->trace_count >= MAX_OPS + 16)
        return;
    va_list args;
    va_start(args, fmt);
    vsnprintf(r->trace[r->trace_count], TRACE_WIDTH, fmt, args);
    va_end(args);
    if (r->verbose)
        printf("  %s\n", r->trace[r->trace_count]);
    r->trace_count++;
}

#define EXPECT_STATUS(r, call, expected)                                                                  \
    do {                                                                                               \
        tp_status got_ = (call);                                                                       \
        tp_status want_ = (expected);                                                                  \
        if (got_ != want_)                                                                             \
            fail((r), "%s:%d: %s returned %s, the model expects %s", __FILE__, __LINE__, #call,      \
                 tp_status_name(got_), tp_status_name(want_));                                         \
    } while (0)

#define EXPECT_OK(r, call) EXPECT_STATUS(r, call, TP_OK)

/*
 * The watchdog: SIGALRM after SEQUENCE_WATCHDOG_SECONDS per sequence, or
 * BLOCKING_CALL_SECONDS around a call that blocks. A signal handler can only write
 * what is ready, so the message is written beforehand and the trace is read as it
 * stands (the main thread is blocked in the library, not writing it).
 */
#define BLOCKING_CALL_SECONDS 30

static struct {
    char message[320];
    const runner *runner;
} watchdog;

static void write_text(const char *text)
{
    ssize_t written = write(STDERR_FILENO, text, strlen(text));
    (void)written;
}

static void on_watchdog(int signo)
{
    (void)signo;
    const runner *r = watchdog.runner;
    if (r) {
        write_text("operations of this sequence so far:\n");
        for (int i = 0; i < r->trace_count; i++) {
            write_text("  ");
            write_text(r->trace[i]);
            write_text("\n");
        }
    }
    write_text(watchdog.message);
    _exit(1);
}

static void watch(runner *r, unsigned seconds, const char *what)
{
    snprintf(watchdog.message, sizeof watchdog.message,
             "model: FAILED: %s hangs (more than %u s) in sequence %d; replay it with: --device %s%s%s --seed %" PRIu64
             " --sequences 1 --verbose\n",
             what, seconds, r->sequence, r->devices[0], r->devices[1] ? " --peer " : "",
             r->devices[1] ? r->devices[1] : "", r->seed);
    watchdog.runner = r;
    alarm(seconds);
}

/* Around a call the model says returns. */
static void blocking_call(runner *r, const char *what)
{
    watch(r, BLOCKING_CALL_SECONDS, what);
}

static void blocking_call_returned(runner *r)
{
    watch(r, SEQUENCE_WATCHDOG_SECONDS, "the sequence");
}

/* ---------------------------------------------------------------- time */

static double monotonic_seconds(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static void sleep_us(long us)
{
    struct timespec left = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
}

/* ------------------------------------------------------------- random */

static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static int random_below(runner *r, int bound)
{
    return (int)(next_random(&r->rng) % (uint64_t)bound);
}

static int device_count(const runner *r)
{
    return r->devices[1] ? 2 : 1;
}

/* A random index among those that pass `pick`, or -1. */
static int random_stream(runner *r, int device, bool allow_default)
{
    int candidates[MODEL_MAX_STREAMS], count = 0;
    for (int i = 0; i < r->m->stream_count; i++) {
        const model_stream *s = &r->m->streams[i];
        if (s->alive && (device < 0 || s->device == device) && (allow_default || !s->is_default))
            candidates[count++] = i;
    }
    return count ? candidates[random_below(r, count)] : -1;
}

static int random_event(runner *r)
{
    int candidates[MODEL_MAX_EVENTS], count = 0;
    for (int i = 0; i < r->m->event_count; i++)
        if (r->m->events[i].alive)
            candidates[count++] = i;
    return count ? candidates[random_below(r, count)] : -1;
}

/* A random gate: a closed one if `closed` (-1 if none is left), else any. */
static int random_gate(runner *r, bool closed)
{
    int candidates[MODEL_MAX_GATES], count = 0;
    for (int g = 0; g < MODEL_GATES; g++)
        if (!closed || !r->m->gate_open[g])
            candidates[count++] = g;
    return count ? candidates[random_below(r, count)] : -1;
}

static int default_stream_of(const runner *r, int device)
{
    for (int i = 0; i < r->m->stream_count; i++)
        if (r->m->streams[i].is_default && r->m->streams[i].device == device)
            return i;
    return -1;
}

/* ------------------------------------------------------- host functions */

static void log_append(runner *r, int item)
{
    pthread_mutex_lock(&r->log_lock);
    if (r->log_count < MODEL_MAX_ITEMS)
        r->log[r->log_count++] = item;
    pthread_mutex_unlock(&r->log_lock);
}

static void host_call_run(void *arg)
{
    host_call *call = arg;
    runner *r = call->runner;
    if (call->gate >= 0) {
        real_gate *g = &r->gates[call->gate];
        pthread_mutex_lock(&g->lock);
        while (!g->open)
            pthread_cond_wait(&g->changed, &g->lock);
        pthread_mutex_unlock(&g->lock);
    }
    log_append(r, call->item);
}

static void gate_open(real_gate *g)
{
    pthread_mutex_lock(&g->lock);
    g->open = true;
    pthread_cond_broadcast(&g->changed);
    pthread_mutex_unlock(&g->lock);
}

/* The log as it is now; *count entries. */
static int snapshot_log(runner *r, int *log)
{
    pthread_mutex_lock(&r->log_lock);
    int count = r->log_count;
    memcpy(log, r->log, sizeof(int) * (size_t)count);
    pthread_mutex_unlock(&r->log_lock);
    return count;
}

static bool item_is_logged(const model_item *item)
{
    return item->kind == MODEL_HOST_FN || item->kind == MODEL_GATE;
}

static void describe_item(const model *m, int item, char *buf, size_t size)
{
    const model_item *it = &m->items[item];
    snprintf(buf, size, "%s #%d (stream s%d, position %d)", it->kind == MODEL_GATE ? "gate fn" : "host fn", item,
             it->stream, it->position);
}

/* ----------------------------------------------------------- real calls */

static bool real_event_done(runner *r, int event)
{
    bool done = false;
    EXPECT_OK(r, tp_event_query(r->events[event], &done));
    return done;
}

static bool real_stream_idle(runner *r, int stream)
{
    bool idle = false;
    EXPECT_OK(r, tp_stream_query(r->streams[stream], &idle));
    return idle;
}

/* ----------------------------------------------------------- checks */

/*
 * What the model says must have happened and has not yet, in words (NULL if
 * nothing): a host function done in the model missing from the log, an event done
 * in the model not done, a stream idle in the model busy.
 */
static bool find_missing(runner *r, char *what, size_t size)
{
    const model *m = r->m;
    int *log = r->snapshot;
    bool present[MODEL_MAX_ITEMS] = {false};
    int count = snapshot_log(r, log);
    for (int i = 0; i < count; i++)
        present[log[i]] = true;
    for (int i = 0; i < m->item_count; i++) {
        if (item_is_logged(&m->items[i]) && model_item_done(m, i) && !present[i]) {
            char item[80];
            describe_item(m, i, item, sizeof item);
            snprintf(what, size, "%s has not run", item);
            return true;
        }
    }
    for (int e = 0; e < m->event_count; e++) {
        if (m->events[e].alive && model_event_done(m, e) && !real_event_done(r, e)) {
            snprintf(what, size, "event e%d is not done (query false)", e);
            return true;
        }
    }
    for (int s = 0; s < m->stream_count; s++) {
        if (m->streams[s].alive && model_stream_idle(m, s) && !real_stream_idle(r, s)) {
            snprintf(what, size, "stream s%d is not idle (query false)", s);
            return true;
        }
    }
    return false;
}

static void wait_for_what_must_happen(runner *r)
{
    char what[160];
    double deadline = monotonic_seconds() + EVENTUALLY_SECONDS;
    while (find_missing(r, what, sizeof what)) {
        if (monotonic_seconds() > deadline)
            fail(r, "after %.0f s, %s, though the model says nothing blocks it", EVENTUALLY_SECONDS, what);
        sleep_us(200);
    }
}

/*
 * The order: for each host function that ran, the last host function of each
 * stream that must precede it (by its start clock) ran before it. With that
 * checked for every entry, every predecessor, not only the last, ran first.
 */
static void check_order(runner *r, const int *log, int count)
{
    const model *m = r->m;
    int *rank = r->rank;
    for (int i = 0; i < m->item_count; i++)
        rank[i] = -1;
    for (int i = 0; i < count; i++)
        rank[log[i]] = i;
    for (int i = 0; i < count; i++) {
        const model_item *x = &m->items[log[i]];
        for (int t = 0; t < m->stream_count; t++) {
            const model_stream *s = &m->streams[t];
            for (int p = x->start_clock[t] - 1; p >= 0; p--) {
                int y = s->items[p];
                if (!item_is_logged(&m->items[y]))
                    continue;
                if (rank[y] < 0 || rank[y] > i) {
                    char before[80], after[80];
                    describe_item(m, y, before, sizeof before);
                    describe_item(m, log[i], after, sizeof after);
                    fail(r, "%s ran %s %s, which the model says must run first", after,
                         rank[y] < 0 ? "without" : "before", before);
                }
                break; /* the last one suffices: it was checked against its own */
            }
        }
    }
}

/* Nothing ran, or is done, that the model says is blocked; the order is right. */
static void check_nothing_early(runner *r)
{
    const model *m = r->m;
    int *log = r->snapshot;
    bool seen[MODEL_MAX_ITEMS] = {false};
    int count = snapshot_log(r, log);
    for (int i = 0; i < count; i++) {
        int item = log[i];
        char text[80];
        if (item < 0 || item >= m->item_count || !item_is_logged(&m->items[item]))
            fail(r, "the log holds %d, which is no host function", item);
        describe_item(m, item, text, sizeof text);
        if (seen[item])
            fail(r, "%s ran twice", text);
        seen[item] = true;
        if (!model_item_done(m, item))
            fail(r, "%s ran, but the model says a closed gate blocks it", text);
    }
    check_order(r, log, count);
    for (int e = 0; e < m->event_count; e++)
        if (m->events[e].alive && !model_event_done(m, e) && real_event_done(r, e))
            fail(r, "event e%d is done, but the model says its record (s%d, after %d items) is blocked", e,
                 m->events[e].stream, m->events[e].count);
    for (int s = 0; s < m->stream_count; s++)
        if (m->streams[s].alive && !model_stream_idle(m, s) && real_stream_idle(r, s))
            fail(r, "stream s%d is idle, but the model says it has blocked work", s);
}

/* The device's error_ns as it is now (it grows when a GPU's calibration meets a
 * wider anchor), and never less than at the start. */
static int64_t error_ns_now(const runner *r, int device)
{
    tp_clock_info clock = {0, 0};
    if (tp_device_clock(r->devices[device], &clock) == TP_OK && clock.error_ns > r->error_ns[device])
        return clock.error_ns;
    return r->error_ns[device];
}

/* How far, in ms, elapsed_time(a, b) of records in that order may fall below 0:
 * none on one device (its own clock); on the host clock, the two devices' error_ns
 * (rule 13), and a float's step. */
static double order_tolerance_ms(const runner *r, int a, int b, float ms)
{
    const model_event *x = &r->m->events[a], *y = &r->m->events[b];
    if (x->device == y->device)
        return 0.0;
    return (double)(error_ns_now(r, x->device) + error_ns_now(r, y->device)) / 1e6 + fabs((double)ms) * FLT_EPSILON;
}

/* Rule 13: one event's timestamp answers as elapsed_time(e, e) does (rule 7's
 * errors), and is written only on success. */
static void check_timestamp(runner *r, int a, bool settled, int64_t *ns)
{
    tp_status want = model_elapsed(r->m, a, a);
    *ns = INT64_MIN;
    tp_status got = tp_event_timestamp(r->events[a], ns);
    if (!(got == want || (!settled && got == TP_ERR_NOT_READY && want == TP_OK)))
        fail(r, "timestamp(e%d) returned %s, the model expects %s", a, tp_status_name(got), tp_status_name(want));
    if (got != TP_OK && *ns != INT64_MIN)
        fail(r, "timestamp(e%d) returned %s but wrote %" PRId64, a, tp_status_name(got), *ns);
    if (got != TP_OK)
        *ns = INT64_MIN;
}

static void check_elapsed(runner *r, bool settled)
{
    const model *m = r->m;
    int64_t timestamps[MODEL_MAX_EVENTS];
    for (int a = 0; a < m->event_count; a++)
        if (m->events[a].alive)
            check_timestamp(r, a, settled, &timestamps[a]);
    for (int a = 0; a < m->event_count; a++) {
        for (int b = 0; b < m->event_count; b++) {
            if (!m->events[a].alive || !m->events[b].alive)
                continue;
            float ms = NAN;
            tp_status want = model_elapsed(m, a, b);
            tp_status got = tp_event_elapsed_time(r->events[a], r->events[b], &ms);
            /* Unsettled (a gate closed on a backend that may hold other host
             * functions back with it): a record the model calls reached may not be
             * yet. */
            bool allowed = got == want || (!settled && got == TP_ERR_NOT_READY && want == TP_OK);
            if (!allowed)
                fail(r, "elapsed_time(e%d, e%d) returned %s, the model expects %s", a, b, tp_status_name(got),
                     tp_status_name(want));
            if (got != TP_OK)
                continue;
            if (!isfinite(ms))
                fail(r, "elapsed_time(e%d, e%d) = %g ms", a, b, (double)ms);
            /* A record that must follow another (on its stream, or through waits)
             * cannot be earlier in time, on either clock. */
            if (model_record_precedes(m, a, b) && (double)ms < -order_tolerance_ms(r, a, b, ms))
                fail(r, "elapsed_time(e%d, e%d) = %g ms, though e%d's record follows e%d's (on s%d after s%d)", a,
                     b, (double)ms, b, a, m->events[b].stream, m->events[a].stream);
            if (a == b && ms != 0.0f)
                fail(r, "elapsed_time(e%d, e%d) = %g ms, not 0", a, a, (double)ms);
            /* Two devices: the difference of the two timestamps (rule 13). */
            if (m->events[a].device != m->events[b].device && timestamps[a] != INT64_MIN &&
                timestamps[b] != INT64_MIN) {
                double diff = (double)(timestamps[b] - timestamps[a]) / 1e6;
                if (fabs(ms - diff) > fabs(diff) * FLT_EPSILON)
                    fail(r, "elapsed_time(e%d, e%d) = %.9f ms across devices, but the timestamps differ by %.9f ms",
                         a, b, (double)ms, diff);
            }
        }
    }
}

static void checkpoint(runner *r)
{
    model_settle(r->m);
    bool settled = r->independent_host_threads || !model_gate_pending(r->m);
    trace(r, "-- checkpoint (%s)", settled ? "done and not done" : "not done only: a gate holds the host thread");
    if (settled)
        wait_for_what_must_happen(r);
    check_nothing_early(r);
    check_elapsed(r, settled);
}

/* Everything with a clock below `clock` has run: after a synchronize (rule 5). */
static void check_ran_up_to(runner *r, const int clock[MODEL_MAX_STREAMS], const char *what)
{
    const model *m = r->m;
    int *log = r->snapshot;
    bool present[MODEL_MAX_ITEMS] = {false};
    int count = snapshot_log(r, log);
    for (int i = 0; i < count; i++)
        present[log[i]] = true;
    for (int t = 0; t < m->stream_count; t++) {
        for (int p = 0; p < clock[t]; p++) {
            int item = m->streams[t].items[p];
            if (item_is_logged(&m->items[item]) && !present[item]) {
                char text[80];
                describe_item(m, item, text, sizeof text);
                fail(r, "%s returned before %s ran", what, text);
            }
        }
    }
}

/* A call that blocks may be made if the model says it returns: the CPU always
 * runs unblocked work; other backends only with no gate closed on a queued item. */
static bool may_block_on(runner *r, bool done_in_model)
{
    return done_in_model && (r->independent_host_threads || !model_gate_pending(r->m));
}

/* ---------------------------------------------------------- operations */

typedef enum op_kind {
    OP_HOST_FN,
    OP_GATE,
    OP_RECORD,
    OP_RECORD_CURRENT,
    OP_RECORD_NEW_EVENT,
    OP_WAIT_EVENT,
    OP_WAIT_STREAM,
    OP_CREATE_EVENT,
    OP_DESTROY_EVENT,
    OP_CREATE_STREAM,
    OP_DESTROY_STREAM,
    OP_OPEN_GATE,
    OP_SET_CURRENT,
    OP_QUERY_EVENT,
    OP_SYNC_EVENT,
    OP_SYNC_STREAM,
    OP_SYNC_DEVICE,
    OP_CHECKPOINT,
    OP_KIND_COUNT
} op_kind;

static const int op_weights[OP_KIND_COUNT] = {
    [OP_HOST_FN] = 18,     [OP_GATE] = 5,          [OP_RECORD] = 16,       [OP_RECORD_CURRENT] = 4,
    [OP_RECORD_NEW_EVENT] = 2, [OP_WAIT_EVENT] = 10, [OP_WAIT_STREAM] = 5, [OP_CREATE_EVENT] = 4,
    [OP_DESTROY_EVENT] = 2, [OP_CREATE_STREAM] = 2, [OP_DESTROY_STREAM] = 2, [OP_OPEN_GATE] = 3,
    [OP_SET_CURRENT] = 3,  [OP_QUERY_EVENT] = 5,   [OP_SYNC_EVENT] = 4,    [OP_SYNC_STREAM] = 3,
    [OP_SYNC_DEVICE] = 1,  [OP_CHECKPOINT] = 6,
};

static op_kind pick_op(runner *r)
{
    int total = 0;
    for (int i = 0; i < OP_KIND_COUNT; i++)
        total += op_weights[i];
    int pick = random_below(r, total);
    for (int i = 0; i < OP_KIND_COUNT; i++) {
        if (pick < op_weights[i])
            return (op_kind)i;
        pick -= op_weights[i];
    }
    return OP_CHECKPOINT;
}

static unsigned random_flags(runner *r)
{
    static const unsigned choices[] = {
        TP_EVENT_DEFAULT,      TP_EVENT_TIMING,
        TP_EVENT_BLOCKING,     TP_EVENT_TIMING | TP_EVENT_BLOCKING,
        TP_EVENT_INTERPROCESS, TP_EVENT_INTERPROCESS | TP_EVENT_TIMING, /* refused, rule 8 */
        TP_EVENT_TIMING,       TP_EVENT_TIMING,
    };
    return choices[random_below(r, (int)(sizeof choices / sizeof choices[0]))];
}

static void launch(runner *r, int stream, int item, int gate)
{
    r->calls[item] = (host_call){.runner = r, .item = item, .gate = gate};
    EXPECT_OK(r, tp_stream_launch_host_fn(r->streams[stream], host_call_run, &r->calls[item]));
}

static void create_stream(runner *r, int device)
{
    tp_stream *stream = NULL;
    EXPECT_OK(r, tp_stream_create(&stream, device_name_of(r, device), 0));
    int s = model_add_stream(r->m, device, false);
    r->streams[s] = stream;
    trace(r, "s%d = stream_create(%s)", s, device_name_of(r, device));
}

static void create_event(runner *r, int device, unsigned flags)
{
    tp_event *event = NULL;
    int e;
    tp_status want = model_create_event(r->m, device, flags, &e);
    trace(r, "e%d = event_create(%s, flags 0x%x) -> %s", e, device_name_of(r, device), flags, tp_status_name(want));
    EXPECT_STATUS(r, tp_event_create(&event, device_name_of(r, device), flags), want);
    if (want == TP_OK)
        r->events[e] = event;
}

static void op_sync_event(runner *r)
{
    int e = random_event(r);
    if (e < 0)
        return;
    model_settle(r->m);
    if (!may_block_on(r, model_event_done(r->m, e)))
        return;
    trace(r, "event_synchronize(e%d)", e);
    blocking_call(r, "event_synchronize");
    EXPECT_OK(r, tp_event_synchronize(r->events[e]));
    blocking_call_returned(r);
    int clock[MODEL_MAX_STREAMS];
    model_event_clock(r->m, e, clock);
    check_ran_up_to(r, clock, "event_synchronize");
    if (!real_event_done(r, e))
        fail(r, "e%d not done after event_synchronize returned", e);
}

static void op_sync_stream(runner *r)
{
    int s = random_stream(r, -1, true);
    if (s < 0)
        return;
    model_settle(r->m);
    if (!may_block_on(r, model_stream_idle(r->m, s)))
        return;
    trace(r, "stream_synchronize(s%d)", s);
    blocking_call(r, "stream_synchronize");
    EXPECT_OK(r, tp_stream_synchronize(r->streams[s]));
    blocking_call_returned(r);
    check_ran_up_to(r, r->m->streams[s].clock, "stream_synchronize");
    if (!real_stream_idle(r, s))
        fail(r, "s%d not idle after stream_synchronize returned", s);
}

/* Every stream of the device, destroyed ones included: their work is the
 * device's work too. */
static void op_sync_device(runner *r)
{
    int device = random_below(r, device_count(r));
    model *m = r->m;
    model_settle(m);
    bool idle = true;
    for (int s = 0; s < m->stream_count; s++)
        if (m->streams[s].device == device && !model_stream_idle(m, s))
            idle = false;
    if (!may_block_on(r, idle))
        return;
    trace(r, "device_synchronize(%s)", device_name_of(r, device));
    blocking_call(r, "device_synchronize");
    EXPECT_OK(r, tp_device_synchronize(device_name_of(r, device)));
    blocking_call_returned(r);
    for (int s = 0; s < m->stream_count; s++)
        if (m->streams[s].device == device)
            check_ran_up_to(r, m->streams[s].clock, "device_synchronize");
}

static void op_query_event(runner *r)
{
    int e = random_event(r);
    if (e < 0)
        return;
    model_settle(r->m);
    bool want = model_event_done(r->m, e);
    trace(r, "event_query(e%d) -> %s", e, want ? "done (eventually)" : "not done");
    if (!want) {
        if (real_event_done(r, e))
            fail(r, "e%d is done, but the model says its record is blocked", e);
        return;
    }
    if (!may_block_on(r, true))
        return;
    double deadline = monotonic_seconds() + EVENTUALLY_SECONDS;
    while (!real_event_done(r, e)) {
        if (monotonic_seconds() > deadline)
            fail(r, "e%d not done after %.0f s, though the model says nothing blocks it", e, EVENTUALLY_SECONDS);
        sleep_us(200);
    }
}

static void op_record(runner *r, op_kind op)
{
    model *m = r->m;
    int e = random_event(r);
    if (e < 0)
        return;
    if (op == OP_RECORD_CURRENT) {
        /* NULL stream: the thread's current stream of the event's device (rule 11). */
        int s = m->current[m->events[e].device];
        tp_status want = model_record(m, e, s);
        trace(r, "event_record(e%d, NULL = current s%d) -> %s", e, s, tp_status_name(want));
        EXPECT_STATUS(r, tp_event_record(r->events[e], NULL), want);
        return;
    }
    int s = random_stream(r, -1, true);
    tp_status want = model_record(m, e, s);
    trace(r, "event_record(e%d, s%d) -> %s", e, s, tp_status_name(want));
    EXPECT_STATUS(r, tp_event_record(r->events[e], r->streams[s]), want);
}

static void op_record_new_event(runner *r)
{
    model *m = r->m;
    if (m->event_count == MODEL_MAX_EVENTS)
        return;
    int s = random_stream(r, -1, true);
    tp_event *event = NULL;
    EXPECT_OK(r, tp_stream_record_event(r->streams[s], &event));
    int e;
    /* A new event is created with timing (the seed's record_event()). */
    EXPECT_STATUS(r, model_create_event(m, m->streams[s].device, TP_EVENT_TIMING, &e), TP_OK);
    EXPECT_OK(r, model_record(m, e, s));
    r->events[e] = event;
    unsigned flags = 0;
    EXPECT_OK(r, tp_event_flags(event, &flags));
    if (!(flags & TP_EVENT_TIMING))
        fail(r, "stream_record_event made an event without TP_EVENT_TIMING (flags 0x%x)", flags);
    trace(r, "e%d = stream_record_event(s%d, new)", e, s);
}

/* Whether a stream of device `a` waiting on device `b` spans two backends. Such a
 * wait means what a wait on one backend means (rules 6, 14), except on an
 * interprocess event: refused with TP_ERR_UNSUPPORTED, and the model then does
 * nothing. */
static bool across_backends(const runner *r, int a, int b)
{
    return r->types[a] != r->types[b];
}

static void op_wait(runner *r, op_kind op)
{
    int s = random_stream(r, -1, true);
    if (op == OP_WAIT_STREAM) {
        int other = random_stream(r, -1, true);
        trace(r, "stream_wait_stream(s%d, s%d)%s", s, other,
              across_backends(r, r->m->streams[s].device, r->m->streams[other].device) ? " across backends" : "");
        model_wait_stream(r->m, s, other);
        EXPECT_OK(r, tp_stream_wait_stream(r->streams[s], r->streams[other]));
        return;
    }
    int e = random_event(r);
    if (e < 0)
        return;
    bool across = across_backends(r, r->m->streams[s].device, r->m->events[e].device);
    trace(r, "event_wait(e%d, s%d)%s", e, s, across ? " across backends" : "");
    if (across && (r->m->events[e].flags & TP_EVENT_INTERPROCESS)) {
        EXPECT_STATUS(r, tp_event_wait(r->events[e], r->streams[s]), TP_ERR_UNSUPPORTED);
        return;
    }
    model_wait_event(r->m, s, e);
    if (random_below(r, 2))
        EXPECT_OK(r, tp_event_wait(r->events[e], r->streams[s]));
    else
        EXPECT_OK(r, tp_stream_wait_event(r->streams[s], r->events[e]));
}

static void op_destroy_stream(runner *r)
{
    model *m = r->m;
    int s = random_stream(r, -1, false);
    if (s < 0)
        return;
    int device = m->streams[s].device;
    if (m->current[device] == s)
        EXPECT_OK(r, tp_stream_set_current(r->streams[default_stream_of(r, device)]));
    trace(r, "stream_destroy(s%d)%s", s, model_stream_idle(m, s) ? "" : " with work pending");
    model_destroy_stream(m, s);
    EXPECT_OK(r, tp_stream_destroy(r->streams[s]));
    r->streams[s] = NULL;
}

static void perform(runner *r, op_kind op)
{
    model *m = r->m;
    int s, e, g, item;
    switch (op) {
    case OP_HOST_FN:
        s = random_stream(r, -1, true);
        item = model_host_fn(m, s);
        trace(r, "launch_host_fn(s%d) = #%d", s, item);
        launch(r, s, item, -1);
        break;
    case OP_GATE:
        s = random_stream(r, -1, true);
        /* Mostly a closed gate: an open one is a plain host function. */
        g = random_gate(r, random_below(r, 8) != 0);
        if (g < 0)
            g = random_gate(r, false);
        item = model_gate(m, s, g);
        trace(r, "launch_host_fn(s%d, gate g%d%s) = #%d", s, g, m->gate_open[g] ? ", open" : "", item);
        launch(r, s, item, g);
        break;
    case OP_RECORD:
    case OP_RECORD_CURRENT:
        op_record(r, op);
        break;
    case OP_RECORD_NEW_EVENT:
        op_record_new_event(r);
        break;
    case OP_WAIT_EVENT:
    case OP_WAIT_STREAM:
        op_wait(r, op);
        break;
    case OP_CREATE_EVENT:
        if (m->event_count < MODEL_MAX_EVENTS)
            create_event(r, random_below(r, device_count(r)), random_flags(r));
        break;
    case OP_DESTROY_EVENT:
        e = random_event(r);
        if (e < 0)
            break;
        trace(r, "event_destroy(e%d)%s", e, model_event_done(m, e) ? "" : " with its record pending");
        model_destroy_event(m, e);
        EXPECT_OK(r, tp_event_destroy(r->events[e]));
        r->events[e] = NULL;
        break;
    case OP_CREATE_STREAM:
        if (m->stream_count < MODEL_MAX_STREAMS)
            create_stream(r, random_below(r, device_count(r)));
        break;
    case OP_DESTROY_STREAM:
        op_destroy_stream(r);
        break;
    case OP_OPEN_GATE:
        g = random_gate(r, true);
        if (g < 0)
            break;
        trace(r, "open gate g%d", g);
        model_open_gate(m, g);
        gate_open(&r->gates[g]);
        break;
    case OP_SET_CURRENT:
        s = random_stream(r, -1, true);
        trace(r, "stream_set_current(s%d)", s);
        EXPECT_OK(r, tp_stream_set_current(r->streams[s]));
        m->current[m->streams[s].device] = s;
        break;
    case OP_QUERY_EVENT:
        op_query_event(r);
        break;
    case OP_SYNC_EVENT:
        op_sync_event(r);
        break;
    case OP_SYNC_STREAM:
        op_sync_stream(r);
        break;
    case OP_SYNC_DEVICE:
        op_sync_device(r);
        break;
    case OP_CHECKPOINT:
    case OP_KIND_COUNT:
        checkpoint(r);
        break;
    }
}

/* ------------------------------------------------------------ sequences */

static void start_sequence(runner *r)
{
    model *m = r->m;
    model_init(m, MODEL_GATES);
    r->trace_count = 0;
    pthread_mutex_lock(&r->log_lock);
    r->log_count = 0;
    pthread_mutex_unlock(&r->log_lock);
    for (int g = 0; g < MODEL_GATES; g++) {
        pthread_mutex_lock(&r->gates[g].lock);
        r->gates[g].open = false;
        pthread_mutex_unlock(&r->gates[g].lock);
    }
    for (int d = 0; d < device_count(r); d++) {
        int s = model_add_stream(m, d, true);
        EXPECT_OK(r, tp_stream_default(device_name_of(r, d), &r->streams[s]));
        EXPECT_OK(r, tp_stream_set_current(r->streams[s]));
        trace(r, "s%d = stream_default(%s)", s, device_name_of(r, d));
    }
    create_stream(r, 0);
    create_stream(r, 0);
    create_stream(r, device_count(r) - 1);
    create_event(r, 0, TP_EVENT_TIMING);
    create_event(r, 0, TP_EVENT_DEFAULT);
    create_event(r, device_count(r) - 1, TP_EVENT_TIMING | TP_EVENT_BLOCKING);
}

/* Opens every gate: then everything must run; drains and frees the sequence. */
static void finish_sequence(runner *r)
{
    model *m = r->m;
    trace(r, "open every gate");
    for (int g = 0; g < MODEL_GATES; g++) {
        model_open_gate(m, g);
        gate_open(&r->gates[g]);
    }
    model_settle(m);
    for (int s = 0; s < m->stream_count; s++)
        if (!model_stream_idle(m, s))
            fail(r, "the model itself is stuck: s%d has %d of %d items done with every gate open", s,
                 m->streams[s].completed, m->streams[s].length);
    checkpoint(r);
    for (int s = 0; s < m->stream_count; s++)
        if (m->streams[s].alive)
            EXPECT_OK(r, tp_stream_synchronize(r->streams[s]));
    /* Streams destroyed with work pending: done too, and their host functions have
     * returned, so that the gates and the log may be reused. */
    for (int d = 0; d < device_count(r); d++) {
        EXPECT_OK(r, tp_device_synchronize(device_name_of(r, d)));
        EXPECT_OK(r, tp_stream_set_current(r->streams[default_stream_of(r, d)]));
    }
    for (int s = 0; s < m->stream_count; s++) {
        if (m->streams[s].alive && !m->streams[s].is_default)
            EXPECT_OK(r, tp_stream_destroy(r->streams[s]));
        r->streams[s] = NULL;
    }
    for (int e = 0; e < m->event_count; e++) {
        if (m->events[e].alive)
            EXPECT_OK(r, tp_event_destroy(r->events[e]));
        r->events[e] = NULL;
    }
}

static void run_sequence(runner *r, int ops)
{
    watch(r, SEQUENCE_WATCHDOG_SECONDS, "the sequence");
    r->rng = r->seed;
    if (r->verbose)
        printf("sequence %d, seed %" PRIu64 ":\n", r->sequence, r->seed);
    start_sequence(r);
    for (int i = 0; i < ops; i++)
        perform(r, pick_op(r));
    finish_sequence(r);
    alarm(0);
}

/* ------------------------------------------------------------------ main */

/* 0 if the device can be used; else prints why and returns TEST_SKIP. */
static int usable(const char *device, const char *role, bool quiet)
{
    tp_device parsed;
    const char *reason = NULL;
    int count = 0;
    if (tp_device_parse(device, &parsed) != TP_OK || parsed.index == TP_DEVICE_INDEX_CURRENT) {
        fprintf(stderr, "bad %s device \"%s\": give a type and an index (\"cpu:0\")\n", role, device);
        exit(2);
    }
    const char *type = tp_device_type_name(parsed.type);
    if (tp_backend_status(type, &reason) != TP_OK) {
        if (!quiet)
            printf("skipped: %s\n", reason ? reason : "(no reason given)");
        return TEST_SKIP;
    }
    if (tp_device_count(type, &count) != TP_OK || parsed.index >= count) {
        if (!quiet)
            printf("skipped: %s device %s does not exist (%d %s device%s)\n", role, device, count, type,
                   count == 1 ? "" : "s");
        return TEST_SKIP;
    }
    return 0;
}

static long parse_number(const char *text, const char *what, long max)
{
    char *end;
    errno = 0;
    long long value = strtoll(text, &end, 0);
    if (errno != 0 || end == text || *end != '\0' || value < 0 || value > max) {
        fprintf(stderr, "%s: expected a whole number from 0 to %ld, got \"%s\"\n", what, max, text);
        exit(2);
    }
    return (long)value;
}

int main(int argc, char **argv)
{
    static runner r;
    static model m;
    const char *device = NULL, *peer = NULL;
    long sequences = 20, ops = 150;
    bool seeded = false;

    for (int i = 1; i < argc; i++) {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--verbose") == 0) {
            r.verbose = true;
            continue;
        }
        if (!value) {
            fprintf(stderr, "usage: %s --device D [--peer P] [--seed S] [--sequences N] [--ops N] [--verbose]\n",
                    argv[0]);
            return 2;
        }
        if (strcmp(argv[i], "--device") == 0)
            device = value;
        else if (strcmp(argv[i], "--peer") == 0)
            peer = value;
        else if (strcmp(argv[i], "--seed") == 0) {
            char *end;
            errno = 0;
            r.base_seed = strtoull(value, &end, 0);
            if (errno != 0 || end == value || *end != '\0') {
                fprintf(stderr, "--seed: expected a whole number, got \"%s\"\n", value);
                return 2;
            }
            seeded = true;
        } else if (strcmp(argv[i], "--sequences") == 0)
            sequences = parse_number(value, "--sequences", 1000000);
        else if (strcmp(argv[i], "--ops") == 0)
            ops = parse_number(value, "--ops", MAX_OPS);
        else {
            fprintf(stderr, "unknown option %s\n", argv[i]);
            return 2;
        }
        i++;
    }
    if (!device) {
        fprintf(stderr, "--device is required\n");
        return 2;
    }
    if (!seeded) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        r.base_seed = (uint64_t)now.tv_sec * 1000003u ^ (uint64_t)now.tv_nsec ^ (uint64_t)getpid() << 20;
    }
    if (usable(device, "test", false) != 0)
        return TEST_SKIP;
    r.devices[0] = device;
    tp_device parsed, parsed_peer;
    tp_device_parse(device, &parsed);
    r.types[0] = parsed.type;
    /* The peer may be of another backend: everything of two devices then spans two
     * backends (elapsed time on the host clock, rules 7 and 13; waits, which answer
     * TP_ERR_UNSUPPORTED only for interprocess events, op_wait). */
    if (peer && strcmp(peer, device) != 0 && usable(peer, "peer", true) == 0 &&
        tp_device_parse(peer, &parsed_peer) == TP_OK) {
        r.devices[1] = peer;
        r.types[1] = parsed_peer.type;
    }
    for (int d = 0; d < 2; d++) {
        tp_clock_info clock = {0, 0};
        if (r.devices[d] && tp_device_clock(r.devices[d], &clock) != TP_OK) {
            fprintf(stderr, "FAILED: tp_device_clock(\"%s\"): %s\n", r.devices[d], tp_last_error());
            return 1;
        }
        r.error_ns[d] = clock.error_ns;
    }
    r.independent_host_threads = parsed.type == TP_DEVICE_CPU && (!r.devices[1] || r.types[1] == TP_DEVICE_CPU);
    r.m = &m;
    pthread_mutex_init(&r.log_lock, NULL);
    for (int g = 0; g < MODEL_GATES; g++) {
        pthread_mutex_init(&r.gates[g].lock, NULL);
        pthread_cond_init(&r.gates[g].changed, NULL);
    }
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_watchdog;
    sigemptyset(&action.sa_mask);
    sigaction(SIGALRM, &action, NULL);

    printf("model: --device %s --peer %s --seed %" PRIu64 " --sequences %ld --ops %ld%s\n", device,
           r.devices[1] ? r.devices[1] : "(none usable)", r.base_seed, sequences, ops,
           r.independent_host_threads ? "" : " (host functions may share a thread: positive checks once gates open)");
    fflush(stdout);

    long items = 0, checks = 0;
    for (long k = 0; k < sequences; k++) {
        r.sequence = (int)k;
        r.seed = r.base_seed + (uint64_t)k;
        run_sequence(&r, (int)ops);
        items += m.item_count;
        for (int i = 0; i < r.trace_count; i++)
            checks += strncmp(r.trace[i], "-- checkpoint", 13) == 0;
    }
    printf("model: %ld sequences of %ld operations passed: %ld stream items, %ld checkpoints\n", sequences, ops, items,
           checks);

    for (int g = 0; g < MODEL_GATES; g++) {
        pthread_cond_destroy(&r.gates[g].changed);
        pthread_mutex_destroy(&r.gates[g].lock);
    }
    pthread_mutex_destroy(&r.log_lock);
    return 0;
}
