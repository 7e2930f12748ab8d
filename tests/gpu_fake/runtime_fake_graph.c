/*
 * The simulated runtime's stream capture and graphs (tests/gpu_fake/runtime_fake.h says what is
 * modelled). A capture is a list of the operations that are made again at each
 * launch (external records, external waits, runtime host functions, waits on host
 * memory with the value they were captured with, as CUDA replays them), in the
 * order they were captured, which is a topological order of the captured graph;
 * a launch replays them on the launch stream. Records and waits inside the
 * capture only join streams, as CUDA's turn into edges. Every capture's state
 * changes under one lock.
 */
#include "tests/gpu_fake/runtime_fake_internal.h"
#include "tests/gpu_fake/foreign_capture_calls.h"

#include "common/env.h"

#include <stdio.h>
#include <stdlib.h>

enum { GOP_RECORD, GOP_WAIT, GOP_HOST_FN, GOP_WAIT_VALUE, GOP_WRITE_VALUE };

typedef struct fake_gop {
    int kind;
    rt_event event;
    void (*fn)(void *);
    void *arg;
    uintptr_t counter; /* GOP_WAIT_VALUE, GOP_WRITE_VALUE: replayed with the value captured */
    uint64_t value;
} fake_gop;

typedef struct fake_branch {
    rt_stream stream;
    uint64_t ops;
    uint64_t covered; /* joined back by the origin up to here */
} fake_branch;

typedef struct fake_capture {
    uint64_t id; /* unique in the process, as CUDA's (cudaStreamGetCaptureInfo) */
    int refs;    /* under capture_lock: the capture's own while open, one per event */
    bool open;
    bool invalidated;
    int mode;                       /* FAKE_CAPTURE_MODE_* it began with */
    pthread_t thread;               /* that began it */
    struct fake_capture *next_open; /* open_captures, under capture_lock */
    fake_gop *ops;
    size_t count, capacity;
    fake_branch *branches; /* [0]: the origin */
    size_t branch_count, branch_capacity;
} fake_capture;

struct fake_graph {
    fake_gop *ops;
    size_t count;
    /* An executable graph's: recorded at the end of each launch, and waited on
     * at the start of the next, so that launches of one executable graph run one
     * after the other, on any streams, as CUDA orders them (cudaGraphLaunch);
     * made at the first launch, on the launch stream's device. Launches from two
     * threads take turns (launch_lock), so that each one's operations go in whole. */
    rt_event launched;
    pthread_mutex_t launch_lock;
};

static pthread_mutex_t capture_lock = PTHREAD_MUTEX_INITIALIZER;

/* Open captures not begun relaxed (the only ones that prohibit anything): a list
 * under capture_lock, and its length, read first without the lock. */
static fake_capture *open_captures;
static atomic_int strict_open;

static _Thread_local int thread_mode = FAKE_CAPTURE_MODE_GLOBAL;

int fake_thread_exchange_capture_mode(int mode)
{
    int previous = thread_mode;
    thread_mode = mode;
    return previous;
}

bool fake_capture_forbids_unsafe(rt_error *e)
{
    if (atomic_load(&strict_open) == 0 || thread_mode == FAKE_CAPTURE_MODE_RELAXED)
        return false;
    bool forbidden = false;
    pthread_mutex_lock(&capture_lock);
    for (fake_capture *c = open_captures; c; c = c->next_open) {
        bool own = pthread_equal(c->thread, pthread_self());
        if (own || (c->mode == FAKE_CAPTURE_MODE_GLOBAL && thread_mode == FAKE_CAPTURE_MODE_GLOBAL)) {
            c->invalidated = true;
            forbidden = true;
        }
    }
    pthread_mutex_unlock(&capture_lock);
    *e = FAKE_ERROR_CAPTURE_UNSUPPORTED;
    return forbidden;
}

/* Under capture_lock: c, begun not relaxed, is open, or no longer. */
static void strict_list_add(fake_capture *c)
{
    c->next_open = open_captures;
    open_captures = c;
    atomic_fetch_add(&strict_open, 1);
}

static void strict_list_remove(fake_capture *c)
{
    for (fake_capture **at = &open_captures; *at; at = &(*at)->next_open)
        if (*at == c) {
            *at = c->next_open;
            atomic_fetch_sub(&strict_open, 1);
            return;
        }
}

static fake_capture *capture_of(rt_stream s)
{
    return s ? atomic_load(&s->capture) : NULL;
}

/* Under capture_lock. */
static void capture_unref(fake_capture *c)
{
    if (--c->refs > 0)
        return;
    free(c->ops);
    free(c->branches);
    free(c);
}

static fake_branch *branch_of(fake_capture *c, rt_stream s)
{
    for (size_t i = 0; i < c->branch_count; i++)
        if (c->branches[i].stream == s)
            return &c->branches[i];
    return NULL;
}

static bool add_branch(fake_capture *c, rt_stream s, uint64_t ops)
{
    if (c->branch_count == c->branch_capacity) {
        size_t capacity = c->branch_capacity ? 2 * c->branch_capacity : 4;
        fake_branch *grown = realloc(c->branches, capacity * sizeof *grown);
        if (!grown)
            return false;
        c->branches = grown;
        c->branch_capacity = capacity;
    }
    c->branches[c->branch_count++] = (fake_branch){s, ops, 0};
    atomic_store(&s->capture, c);
    return true;
}

static rt_error append(fake_capture *c, fake_gop op)
{
    if (c->count == c->capacity) {
        size_t capacity = c->capacity ? 2 * c->capacity : 16;
        fake_gop *grown = realloc(c->ops, capacity * sizeof *grown);
        if (!grown)
            return FAKE_ERROR_OUT_OF_MEMORY;
        c->ops = grown;
        c->capacity = capacity;
    }
    c->ops[c->count++] = op;
    return RT_SUCCESS;
}

/* Under capture_lock: the event's latest record is now one inside c. */
static void mark_captured(rt_event event, fake_capture *c, rt_stream s, uint64_t pos)
{
    if (event->captured_in)
        capture_unref(event->captured_in);
    c->refs++;
    event->captured_in = c;
    event->captured_on = s;
    event->captured_at = pos;
}

static fake_capture *open_capture_of(rt_event event)
{
    fake_capture *c = event->captured_in;
    return c && c->open ? c : NULL;
}

/* ------------------------------------------------------------------ hooks */

void fake_capture_forget(rt_event event)
{
    pthread_mutex_lock(&capture_lock);
    if (event->captured_in)
        capture_unref(event->captured_in);
    event->captured_in = NULL;
    pthread_mutex_unlock(&capture_lock);
}

bool fake_capture_ended_record(rt_event event)
{
    pthread_mutex_lock(&capture_lock);
    bool ended = event->captured_in && !event->captured_in->open;
    pthread_mutex_unlock(&capture_lock);
    return ended;
}

bool fake_capture_record(rt_event event, rt_stream s, rt_error *e)
{
    if (!capture_of(s))
        return false;
    pthread_mutex_lock(&capture_lock);
    fake_capture *c = capture_of(s);
    fake_branch *branch = c ? branch_of(c, s) : NULL;
    if (branch) {
        branch->ops++;
        mark_captured(event, c, s, branch->ops);
        *e = RT_SUCCESS;
    }
    pthread_mutex_unlock(&capture_lock);
    return branch != NULL;
}

rt_error fake_event_record_external(rt_event event, rt_stream s)
{
    s = fake_resolve(s);
    pthread_mutex_lock(&capture_lock);
    fake_capture *c = capture_of(s);
    rt_error e = FAKE_ERROR_ILLEGAL_STATE; /* only valid while capturing */
    if (c) {
        fake_branch *branch = branch_of(c, s);
        branch->ops++;
        mark_captured(event, c, s, branch->ops);
        e = append(c, (fake_gop){.kind = GOP_RECORD, .event = event});
    }
    pthread_mutex_unlock(&capture_lock);
    return e;
}

/* Under capture_lock: a wait of s on event, external or not. */
static rt_error capture_wait_locked(rt_stream s, rt_event event, bool external, bool *plain)
{
    fake_capture *c = capture_of(s);
    fake_capture *recorded_in = open_capture_of(event);
    *plain = false;
    if (!c && !recorded_in) {
        *plain = true;
        return RT_SUCCESS;
    }
    if (!c)
        return add_branch(recorded_in, s, 1) ? RT_SUCCESS : FAKE_ERROR_OUT_OF_MEMORY; /* joins */
    fake_branch *branch = branch_of(c, s);
    if (recorded_in && recorded_in != c)
        return FAKE_ERROR_CAPTURE_ISOLATION;
    branch->ops++;
    if (recorded_in) {
        fake_branch *joined = branch_of(c, event->captured_on);
        if (branch == &c->branches[0] && joined && joined->covered < event->captured_at)
            joined->covered = event->captured_at;
        return RT_SUCCESS;
    }
    if (!external) {
        /* A record outside the capture: CUDA refuses a plain wait on it. */
        c->invalidated = true;
        return FAKE_ERROR_CAPTURE_ISOLATION;
    }
    return append(c, (fake_gop){.kind = GOP_WAIT, .event = event});
}

bool fake_capture_wait(rt_stream s, rt_event event, rt_error *e)
{
    pthread_mutex_lock(&capture_lock);
    bool plain;
    *e = capture_wait_locked(s, event, false, &plain);
    pthread_mutex_unlock(&capture_lock);
    return !plain;
}

rt_error fake_stream_wait_event_external(rt_stream s, rt_event event)
{
    s = fake_resolve(s);
    if (!capture_of(s))
        return FAKE_ERROR_ILLEGAL_STATE; /* only valid while capturing */
    pthread_mutex_lock(&capture_lock);
    bool plain;
    rt_error e = capture_wait_locked(s, event, true, &plain);
    pthread_mutex_unlock(&capture_lock);
    return e;
}

/* An operation made again at each launch, appended to the stream's capture, if
 * it captures (then *e is the append's answer). */
static bool capture_append(rt_stream s, fake_gop op, rt_error *e)
{
    if (!capture_of(s))
        return false;
    pthread_mutex_lock(&capture_lock);
    fake_capture *c = capture_of(s);
    if (c) {
        branch_of(c, s)->ops++;
        *e = append(c, op);
    }
    pthread_mutex_unlock(&capture_lock);
    return c != NULL;
}

bool fake_capture_host_fn(rt_stream s, void (*fn)(void *), void *arg, rt_error *e)
{
    return capture_append(s, (fake_gop){.kind = GOP_HOST_FN, .fn = fn, .arg = arg}, e);
}

bool fake_capture_wait_value(rt_stream s, uintptr_t counter, uint64_t value, rt_error *e)
{
    return capture_append(s, (fake_gop){.kind = GOP_WAIT_VALUE, .counter = counter, .value = value}, e);
}

bool fake_capture_write_value(rt_stream s, uintptr_t target, uint64_t value, rt_error *e)
{
    return capture_append(s, (fake_gop){.kind = GOP_WRITE_VALUE, .counter = target, .value = value}, e);
}

bool fake_capture_forbids_stream(rt_stream s, rt_error *e)
{
    if (!capture_of(s))
        return false;
    pthread_mutex_lock(&capture_lock);
    fake_capture *c = capture_of(s);
    if (c)
        c->invalidated = true;
    pthread_mutex_unlock(&capture_lock);
    *e = FAKE_ERROR_CAPTURE_UNSUPPORTED;
    return c != NULL;
}

bool fake_capture_forbids_event(rt_event event, rt_error *e)
{
    pthread_mutex_lock(&capture_lock);
    fake_capture *c = open_capture_of(event);
    if (c)
        c->invalidated = true;
    pthread_mutex_unlock(&capture_lock);
    *e = FAKE_ERROR_CAPTURE_UNSUPPORTED;
    return c != NULL;
}

bool fake_stream_is_capturing(rt_stream s)
{
    FAKE_COUNT_CALL(); /* cudaStreamIsCapturing: tpevent asks it of wrapped streams */
    return capture_of(fake_resolve(s)) != NULL;
}

uint64_t fake_stream_capture_id(rt_stream s)
{
    pthread_mutex_lock(&capture_lock);
    fake_capture *c = capture_of(fake_resolve(s));
    uint64_t id = c ? c->id : 0;
    pthread_mutex_unlock(&capture_lock);
    return id;
}

/* ---------------------------------------------------------------- capture */

static rt_error begin_capture(rt_stream s, int mode)
{
    s = fake_resolve(s);
    fake_capture *c = calloc(1, sizeof *c);
    if (!c)
        return FAKE_ERROR_OUT_OF_MEMORY;
    static atomic_uint_fast64_t last_id;
    c->id = atomic_fetch_add(&last_id, 1) + 1;
    c->refs = 1;
    c->open = true;
    c->mode = mode;
    c->thread = pthread_self();
    pthread_mutex_lock(&capture_lock);
    rt_error e = RT_SUCCESS;
    if (capture_of(s))
        e = FAKE_ERROR_ILLEGAL_STATE;
    else if (!add_branch(c, s, 0))
        e = FAKE_ERROR_OUT_OF_MEMORY;
    if (e != RT_SUCCESS)
        capture_unref(c);
    else if (mode != FAKE_CAPTURE_MODE_RELAXED)
        strict_list_add(c);
    pthread_mutex_unlock(&capture_lock);
    return e;
}

/* tpevent's own captures, as on CUDA (runtime_cuda.h): relaxed. */
rt_error fake_stream_begin_capture(rt_stream s)
{
    return begin_capture(s, FAKE_CAPTURE_MODE_RELAXED);
}

rt_error fake_stream_end_capture(rt_stream s, rt_graph *out)
{
    s = fake_resolve(s);
    pthread_mutex_lock(&capture_lock);
    fake_capture *c = capture_of(s);
    if (!c || c->branches[0].stream != s) {
        pthread_mutex_unlock(&capture_lock);
        return FAKE_ERROR_ILLEGAL_STATE;
    }
    rt_error e = c->invalidated ? FAKE_ERROR_CAPTURE_INVALIDATED : RT_SUCCESS;
    for (size_t i = 1; i < c->branch_count && e == RT_SUCCESS; i++)
        if (c->branches[i].covered < c->branches[i].ops)
            e = FAKE_ERROR_CAPTURE_UNJOINED;
    for (size_t i = 0; i < c->branch_count; i++)
        atomic_store(&c->branches[i].stream->capture, NULL);
    c->open = false;
    if (c->mode != FAKE_CAPTURE_MODE_RELAXED)
        strict_list_remove(c);
    struct fake_graph *graph = NULL;
    if (e == RT_SUCCESS) {
        graph = calloc(1, sizeof *graph);
        if (graph) {
            graph->ops = c->ops; /* the graph takes the list over */
            graph->count = c->count;
            c->ops = NULL;
            c->count = c->capacity = 0;
        } else {
            e = FAKE_ERROR_OUT_OF_MEMORY;
        }
    }
    capture_unref(c);
    pthread_mutex_unlock(&capture_lock);
    if (e == RT_SUCCESS)
        *out = graph;
    return e;
}

/* ------------------------------------------------------------------ graphs */

rt_error fake_graph_instantiate(rt_graph_exec *x, rt_graph g)
{
    struct fake_graph *exec = calloc(1, sizeof *exec);
    fake_gop *ops = g->count ? malloc(g->count * sizeof *ops) : NULL;
    if (!exec || (g->count && !ops)) {
        free(exec);
        free(ops);
        return FAKE_ERROR_OUT_OF_MEMORY;
    }
    for (size_t i = 0; i < g->count; i++)
        ops[i] = g->ops[i];
    exec->ops = ops;
    exec->count = g->count;
    pthread_mutex_init(&exec->launch_lock, NULL);
    *x = exec;
    return RT_SUCCESS;
}

/*
 * Failed launches, for the tests of what a failed cudaGraphLaunch leaves (tpevent
 * takes back what it queued for the launch): with TPEVENT_FAKE_FAILED_LAUNCHES_EVERY=N
 * (1 to 1,000), every Nth launch of the process fails, queuing nothing, as a launch
 * the runtime refuses. With TPEVENT_FAKE_FAILED_MARKS_EVERY=N every Nth launch that
 * succeeds leaves the calling thread's next event record to fail (tpevent's marker
 * after the launch). A value out of range is a test's mistake: said, and the process
 * stops.
 */
static atomic_ulong launches_made, launches_done;
static uint64_t failed_launches_every, failed_marks_every;
static pthread_once_t failures_once = PTHREAD_ONCE_INIT;

static void failure_setting_read(const char *name, uint64_t *out)
{
    char refusal[160];
    if (!tp_env_count(name, 0, 1000, 0, out, refusal, sizeof refusal)) {
        fprintf(stderr, "fake GPU: %s\n", refusal);
        abort();
    }
}

static void failures_read(void)
{
    failure_setting_read("TPEVENT_FAKE_FAILED_LAUNCHES_EVERY", &failed_launches_every);
    failure_setting_read("TPEVENT_FAKE_FAILED_MARKS_EVERY", &failed_marks_every);
}

static bool launch_fails(void)
{
    pthread_once(&failures_once, failures_read);
    return failed_launches_every > 0 && (atomic_fetch_add(&launches_made, 1) + 1) % failed_launches_every == 0;
}

static void launch_done(void)
{
    if (failed_marks_every > 0 && (atomic_fetch_add(&launches_done, 1) + 1) % failed_marks_every == 0)
        fake_fail_next_record = true;
}

rt_error fake_graph_launch(rt_graph_exec x, rt_stream s)
{
    s = fake_resolve(s);
    if (capture_of(s))
        return FAKE_ERROR_CAPTURE_UNSUPPORTED; /* not modelled */
    if (launch_fails())
        return FAKE_ERROR_INVALID_VALUE;
    rt_error e = RT_SUCCESS;
    pthread_mutex_lock(&x->launch_lock);
    if (!x->launched) {
        e = fake_event_create(&x->launched, RT_EVENT_DISABLE_TIMING);
        if (e == RT_SUCCESS)
            x->launched->device = s->device;
    }
    if (e == RT_SUCCESS)
        e = fake_stream_wait_event(s, x->launched); /* the previous launch, wherever it went */
    for (size_t i = 0; i < x->count && e == RT_SUCCESS; i++) {
        const fake_gop *op = &x->ops[i];
        switch (op->kind) {
        case GOP_RECORD:
            e = fake_event_record(op->event, s);
            break;
        case GOP_WAIT:
            e = fake_stream_wait_event(s, op->event);
            break;
        case GOP_WAIT_VALUE:
            e = fake_stream_wait_value64(s, op->counter, op->value);
            break;
        case GOP_WRITE_VALUE:
            e = fake_stream_write_value64(s, op->counter, op->value);
            break;
        default:
            e = fake_replay_host_fn(s, op->fn, op->arg);
            break;
        }
    }
    if (e == RT_SUCCESS)
        e = fake_event_record(x->launched, s);
    pthread_mutex_unlock(&x->launch_lock);
    if (e == RT_SUCCESS)
        launch_done();
    return e;
}

rt_error fake_graph_destroy(rt_graph g)
{
    if (g) {
        if (g->launched)
            (void)fake_event_destroy(g->launched); /* its records stay with the launches */
        free(g->ops);
        free(g);
    }
    return RT_SUCCESS;
}

/* ------------------------------------------------- foreign captures (tests) */

/*
 * What a test needs to capture a stream as someone else would (torch.cuda.graph
 * on a stream tpevent wraps): begin in a mode, end (and instantiate), launch,
 * destroy. Exported from the module, unlike the rest: the conformance suite
 * looks it up by name (tests/conformance/foreign_capture.c). Answers are 0 or the
 * fake's error codes.
 */
static int foreign_begin(void *stream, int mode)
{
    return begin_capture(stream, mode);
}

static int foreign_end(void *stream, void **exec)
{
    rt_graph graph = NULL;
    rt_error e = fake_stream_end_capture(stream, &graph);
    if (e != RT_SUCCESS)
        return e;
    rt_graph_exec x = NULL;
    e = fake_graph_instantiate(&x, graph);
    fake_graph_destroy(graph);
    if (e == RT_SUCCESS)
        *exec = x;
    return e;
}

static int foreign_launch(void *exec, void *stream)
{
    return fake_graph_launch(exec, stream);
}

static void foreign_destroy(void *exec)
{
    fake_graph_destroy(exec);
}

__attribute__((visibility("default"))) const foreign_capture_calls tpevent_fake_foreign_capture = {
    foreign_begin, foreign_end, foreign_launch, foreign_destroy};
