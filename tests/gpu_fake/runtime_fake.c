/*
 * The simulated runtime behind tests/gpu_fake/runtime_fake.h (what it models: see there): its
 * devices and clock, the callback thread, streams and host memory; events are in
 * runtime_fake_event.c, captures in runtime_fake_graph.c.
 *
 * Every stream has a thread that takes its operations in order. Waiting (on a
 * record, a stream, a device, a counter) polls every FAKE_POLL_NS: simple, and
 * slow enough that nothing here hides a missed wake-up of the code under test. A
 * stream waiting for its host function on the callback thread is woken instead:
 * that hand-over is the fake's own, and a GPU's stream goes on as fn returns.
 * Stream structs are never freed (a destroyed stream is kept, drained, on its
 * device's list), so a device-wide synchronize may look at any of them.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include "tests/gpu_fake/runtime_fake_internal.h"
#include "common/env.h" /* empty means unset, as for every TPEVENT_* variable */
#include "common/thread.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FAKE_MAX_DEVICES 8

typedef struct fake_device {
    pthread_mutex_t lock;
    rt_stream streams; /* every stream ever made, the default one included */
    rt_stream default_stream;
} fake_device;

/* The runtime's one thread for host functions, as CUDA's. */
typedef struct fake_callback {
    struct fake_callback *next;
    void (*fn)(void *);
    void *arg;
    bool done; /* under fake.callback_lock */
} fake_callback;

static struct {
    pthread_once_t once;
    int device_count;
    bool wait_value;
    fake_device devices[FAKE_MAX_DEVICES];
    pthread_mutex_t callback_lock;
    pthread_cond_t callback_ready;
    pthread_cond_t callback_done;
    fake_callback *callbacks, *callbacks_last;
} fake = {.once = PTHREAD_ONCE_INIT,
          .callback_lock = PTHREAD_MUTEX_INITIALIZER,
          .callback_ready = PTHREAD_COND_INITIALIZER,
          .callback_done = PTHREAD_COND_INITIALIZER};

static _Thread_local int current_device;
static _Thread_local bool callback_thread;

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

void fake_poll_pause_for(backoff *b)
{
    struct timespec t = {0, b->ns};
    nanosleep(&t, NULL);
    if (b->ns < 1000000L)
        b->ns *= 2;
}

void fake_record_unref(fake_record *record)
{
    if (record && atomic_fetch_sub(&record->refs, 1) == 1)
        free(record);
}

static void *thread_start(void *(*main)(void *), void *arg)
{
    /* Signals go to the program's threads, as for tpevent's own. */
    return tp_thread_start_detached(main, arg) == 0 ? arg : NULL;
}

/* ------------------------------------------------------- the callback thread */

static void *callback_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "fake-callbacks");
    callback_thread = true;
    pthread_mutex_lock(&fake.callback_lock);
    for (;;) {
        while (!fake.callbacks)
            pthread_cond_wait(&fake.callback_ready, &fake.callback_lock);
        fake_callback *call = fake.callbacks;
        fake.callbacks = call->next;
        if (!fake.callbacks)
            fake.callbacks_last = NULL;
        pthread_mutex_unlock(&fake.callback_lock);
        call->fn(call->arg);
        pthread_mutex_lock(&fake.callback_lock);
        call->done = true;
        pthread_cond_broadcast(&fake.callback_done);
    }
    return NULL;
}

/* Runs fn on the callback thread; returns when it has. The stream goes on as fn
 * returns, as a GPU's does (a poll's back-off would add up to a ms to each). */
static void run_on_callback_thread(void (*fn)(void *), void *arg)
{
    fake_callback call = {NULL, fn, arg, false};
    pthread_mutex_lock(&fake.callback_lock);
    if (fake.callbacks_last)
        fake.callbacks_last->next = &call;
    else
        fake.callbacks = &call;
    fake.callbacks_last = &call;
    pthread_cond_signal(&fake.callback_ready);
    while (!call.done)
        pthread_cond_wait(&fake.callback_done, &fake.callback_lock);
    pthread_mutex_unlock(&fake.callback_lock);
}

/* --------------------------------------------------------------- teardown */

/*
 * Registered at the runtime's start, so it runs after tpevent's exit handler, as
 * a driver's teardown would: a stream still held by a wait on host memory then
 * (nobody will ever write the value) is the hang the shared code must prevent.
 */
static pid_t fake_owner;

static void fake_teardown(void)
{
    if (getpid() != fake_owner)
        return; /* a forked child: the streams are its parent's */
    uint64_t deadline = now_ns() + 5000000000u;
    for (int d = 0; d < fake.device_count; d++) {
        pthread_mutex_lock(&fake.devices[d].lock);
        rt_stream streams = fake.devices[d].streams;
        pthread_mutex_unlock(&fake.devices[d].lock);
        for (rt_stream s = streams; s; s = s->next_on_device) {
            backoff b = BACKOFF_INIT;
            while (atomic_load(&s->in_wait_value)) {
                if (now_ns() > deadline) {
                    static const char message[] =
                        "fake runtime: at exit, a stream is still held by a wait on "
                        "host memory that nobody will release\n";
                    ssize_t written = write(STDERR_FILENO, message, sizeof message - 1);
                    (void)written;
                    _exit(86);
                }
                fake_poll_pause_for(&b);
            }
        }
    }
}

static void fake_start(void)
{
    /* A count out of range makes no device: the backend unavailable, and why. */
    uint64_t count;
    char refusal[160];
    if (!tp_env_count("TPEVENT_FAKE_DEVICES", 0, FAKE_MAX_DEVICES, 2, &count, refusal, sizeof refusal)) {
        fprintf(stderr, "fake GPU: %s\n", refusal);
        count = 0;
    }
    fake.device_count = (int)count;
    fake.wait_value = tp_env("TPEVENT_FAKE_NO_WAIT_VALUE") == NULL;
    for (int d = 0; d < FAKE_MAX_DEVICES; d++)
        pthread_mutex_init(&fake.devices[d].lock, NULL);
    (void)thread_start(callback_main, &fake);
    fake_owner = getpid();
    atexit(fake_teardown);
}

const char *fake_error_name(rt_error e)
{
    return e == FAKE_SUCCESS                     ? "fakeSuccess"
           : e == FAKE_ERROR_INVALID_VALUE       ? "fakeErrorInvalidValue"
           : e == FAKE_ERROR_OUT_OF_MEMORY       ? "fakeErrorMemoryAllocation"
           : e == FAKE_ERROR_INVALID_HANDLE      ? "fakeErrorInvalidResourceHandle"
           : e == FAKE_ERROR_NOT_READY           ? "fakeErrorNotReady"
           : e == FAKE_ERROR_NOT_PERMITTED       ? "fakeErrorNotPermitted"
           : e == FAKE_ERROR_NOT_SUPPORTED       ? "fakeErrorNotSupported"
           : e == FAKE_ERROR_CAPTURE_UNSUPPORTED ? "fakeErrorStreamCaptureUnsupported"
           : e == FAKE_ERROR_CAPTURE_INVALIDATED ? "fakeErrorStreamCaptureInvalidated"
           : e == FAKE_ERROR_CAPTURE_UNJOINED    ? "fakeErrorStreamCaptureUnjoined"
           : e == FAKE_ERROR_CAPTURE_ISOLATION   ? "fakeErrorStreamCaptureIsolation"
           : e == FAKE_ERROR_ILLEGAL_STATE       ? "fakeErrorIllegalState"
                                                 : "fakeErrorUnknown";
}

rt_error fake_device_count(int *count)
{
    pthread_once(&fake.once, fake_start);
    *count = fake.device_count;
    return fake.device_count > 0 ? RT_SUCCESS : FAKE_ERROR_INVALID_VALUE;
}

int fake_current_device(void)
{
    return current_device;
}
bool fake_on_callback_thread(void)
{
    return callback_thread;
}
void fake_set_current_device(int device)
{
    current_device = device;
}
bool fake_wait_value_supported(void)
{
    return fake.wait_value;
}

/* ----------------------------------------------------------------- streams */

static void run_op(rt_stream s, fake_op *op)
{
    switch (op->kind) {
    case OP_RECORD:
        if (op->late_ns)
            nanosleep(&(struct timespec){0, op->late_ns}, NULL);
        atomic_store(&op->record->time_ns, fake_device_now_ns());
        atomic_store(&op->record->reached, true);
        fake_record_unref(op->record);
        break;
    case OP_WAIT_EVENT: {
        backoff b = BACKOFF_INIT;
        while (!atomic_load(&op->record->reached))
            fake_poll_pause_for(&b);
        fake_record_unref(op->record);
        break;
    }
    case OP_HOST_FN:
        run_on_callback_thread(op->fn, op->arg);
        break;
    case OP_WAIT_VALUE: {
        atomic_store(&s->in_wait_value, true);
        /* CUDA's comparison: cyclic, so UINT64_MAX would not pass a wait for 5. */
        backoff b = BACKOFF_INIT;
        while ((int64_t)(atomic_load(op->counter) - op->value) < 0)
            fake_poll_pause_for(&b);
        atomic_store(&s->in_wait_value, false);
        break;
    }
    case OP_MEMSET:
        memset(op->arg, (int)op->value, op->size);
        break;
    case OP_WRITE_VALUE: /* the device's own store (cuStreamWriteValue64), never the callback thread */
        atomic_store_explicit((_Atomic uint64_t *)op->arg, op->value, memory_order_release);
    }
    free(op);
}

static void *stream_main(void *arg)
{
    rt_stream s = arg;
    char name[16];
    snprintf(name, sizeof name, "fake-stream:%d", s->device);
    pthread_setname_np(pthread_self(), name);
    pthread_mutex_lock(&s->lock);
    for (;;) {
        while (!s->first && !s->destroyed)
            pthread_cond_wait(&s->work, &s->lock);
        fake_op *op = s->first;
        if (!op)
            break;
        s->first = op->next;
        if (!s->first)
            s->last = NULL;
        pthread_mutex_unlock(&s->lock);
        int kind = op->kind;
        run_op(s, op);
        pthread_mutex_lock(&s->lock);
        atomic_fetch_add(&s->completed, 1);
        if (kind == OP_WAIT_VALUE)
            s->pending_waits--;
        if (s->pushes_waiting)
            pthread_cond_broadcast(&s->room);
    }
    pthread_mutex_unlock(&s->lock);
    atomic_store(&s->drained, true);
    return NULL;
}

static rt_stream stream_new(int device, int priority)
{
    rt_stream s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->device = device;
    s->priority = priority;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->work, NULL);
    pthread_cond_init(&s->room, NULL);
    if (!thread_start(stream_main, s)) {
        free(s);
        return NULL;
    }
    fake_device *d = &fake.devices[device];
    pthread_mutex_lock(&d->lock);
    s->next_on_device = d->streams;
    d->streams = s;
    pthread_mutex_unlock(&d->lock);
    return s;
}

/* The calling thread's per-thread default stream of each device (handle 2), made
 * on first use and never destroyed (it stays on its device's list). */
static _Thread_local rt_stream per_thread_streams[FAKE_MAX_DEVICES];

static rt_stream per_thread_stream(void)
{
    rt_stream *slot = &per_thread_streams[current_device];
    if (!*slot)
        *slot = stream_new(current_device, 0);
    return *slot;
}

/* NULL and the legacy handle (1): the current device's default stream, made on
 * first use; the per-thread handle (2): the calling thread's own. */
rt_stream fake_resolve(rt_stream s)
{
    if (s == FAKE_STREAM_PER_THREAD)
        return per_thread_stream();
    if (s && s != FAKE_STREAM_LEGACY)
        return s;
    fake_device *d = &fake.devices[current_device];
    pthread_mutex_lock(&d->lock);
    rt_stream found = d->default_stream;
    pthread_mutex_unlock(&d->lock);
    if (found)
        return found;
    rt_stream made = stream_new(current_device, 0);
    pthread_mutex_lock(&d->lock);
    if (!d->default_stream)
        d->default_stream = made; /* a loser's stream stays unused on the list */
    found = d->default_stream;
    pthread_mutex_unlock(&d->lock);
    return found;
}

rt_error fake_push(rt_stream s, fake_op *op)
{
    s = fake_resolve(s);
    if (!s) {
        free(op);
        return FAKE_ERROR_OUT_OF_MEMORY;
    }
    pthread_mutex_lock(&s->lock);
    if (s->destroyed) {
        pthread_mutex_unlock(&s->lock);
        free(op);
        return FAKE_ERROR_INVALID_HANDLE;
    }
    /* As on the H200: with this many waits on host memory pending, submitting
     * another blocks the caller until one passes (100 host functions launched at
     * once hung there while the launch held a lock the releasing thread needed).
     * And a host function (or a memory wait) submitted behind FAKE_QUEUE_DEPTH
     * pending operations of any kind blocks, while records and waits on events
     * never do: a model of what the H100 showed, not its measured rule (an OpenCL
     * stream's 10,000 waits on CUDA records, a host function each, at most 256 at
     * once, on 16 streams also holding records, blocked in cuLaunchHostFunc until
     * the records came; 200 host functions behind a blocked one did not). */
    bool waits_for_room = op->kind == OP_WAIT_VALUE || (op->kind == OP_HOST_FN && !op->replayed);
    while (waits_for_room && !s->destroyed &&
           ((op->kind == OP_WAIT_VALUE && s->pending_waits >= FAKE_WAIT_DEPTH) ||
            s->submitted - atomic_load(&s->completed) >= FAKE_QUEUE_DEPTH)) {
        s->pushes_waiting++;
        pthread_cond_wait(&s->room, &s->lock);
        s->pushes_waiting--;
    }
    if (op->kind == OP_WAIT_VALUE)
        s->pending_waits++;
    op->next = NULL;
    if (s->last)
        s->last->next = op;
    else
        s->first = op;
    s->last = op;
    s->submitted++;
    pthread_cond_signal(&s->work);
    pthread_mutex_unlock(&s->lock);
    return RT_SUCCESS;
}

fake_op *fake_op_new(int kind)
{
    fake_op *op = calloc(1, sizeof *op);
    if (op)
        op->kind = kind;
    return op;
}

rt_error fake_stream_create(rt_stream *stream, int priority)
{
    FAKE_COUNT_CALL();
    rt_stream s = stream_new(current_device, priority);
    if (!s)
        return FAKE_ERROR_OUT_OF_MEMORY;
    *stream = s;
    return RT_SUCCESS;
}

/* A destroyed stream answers every call with CUDA's "invalid resource handle"
 * (where CUDA's answer is undefined, this is the one a test can see): its struct
 * is kept, so that the fake can tell. */
rt_error fake_stream_destroy(rt_stream s)
{
    FAKE_COUNT_CALL();
    if (rt_stream_follows_current_device(s))
        return FAKE_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&s->lock);
    bool twice = s->destroyed;
    s->destroyed = true;
    pthread_cond_signal(&s->work);
    pthread_mutex_unlock(&s->lock);
    return twice ? FAKE_ERROR_INVALID_HANDLE : RT_SUCCESS;
}

int fake_live_streams(int device)
{
    if (device < 0 || device >= fake.device_count)
        return -1;
    fake_device *d = &fake.devices[device];
    pthread_mutex_lock(&d->lock);
    rt_stream streams = d->streams;
    pthread_mutex_unlock(&d->lock);
    int live = 0;
    for (rt_stream s = streams; s; s = s->next_on_device) {
        pthread_mutex_lock(&s->lock);
        live += !s->destroyed;
        pthread_mutex_unlock(&s->lock);
    }
    return live;
}

/* Work submitted so far; false for a destroyed stream. */
static bool submitted_now(rt_stream s, uint64_t *submitted)
{
    pthread_mutex_lock(&s->lock);
    bool destroyed = s->destroyed;
    *submitted = s->submitted;
    pthread_mutex_unlock(&s->lock);
    return !destroyed;
}

rt_error fake_stream_query(rt_stream s)
{
    FAKE_COUNT_CALL();
    s = fake_resolve(s);
    rt_error forbidden;
    if (fake_capture_forbids_stream(s, &forbidden) || fake_capture_forbids_unsafe(&forbidden))
        return forbidden;
    uint64_t submitted;
    if (!submitted_now(s, &submitted))
        return FAKE_ERROR_INVALID_HANDLE;
    return atomic_load(&s->completed) >= submitted ? RT_SUCCESS : FAKE_ERROR_NOT_READY;
}

rt_error fake_stream_synchronize(rt_stream s)
{
    FAKE_COUNT_CALL();
    s = fake_resolve(s);
    rt_error forbidden;
    if (fake_capture_forbids_stream(s, &forbidden) || fake_capture_forbids_unsafe(&forbidden))
        return forbidden;
    uint64_t target;
    if (!submitted_now(s, &target))
        return FAKE_ERROR_INVALID_HANDLE;
    backoff b = BACKOFF_INIT;
    while (atomic_load(&s->completed) < target)
        fake_poll_pause_for(&b);
    return RT_SUCCESS;
}

rt_error fake_device_synchronize(void)
{
    FAKE_COUNT_CALL();
    rt_error forbidden;
    if (fake_capture_forbids_unsafe(&forbidden))
        return forbidden;
    fake_device *d = &fake.devices[current_device];
    pthread_mutex_lock(&d->lock);
    rt_stream streams = d->streams;
    pthread_mutex_unlock(&d->lock);
    for (rt_stream s = streams; s; s = s->next_on_device) {
        uint64_t target;
        (void)submitted_now(s, &target); /* a destroyed one's pending work still counts */
        backoff b = BACKOFF_INIT;
        while (atomic_load(&s->completed) < target)
            fake_poll_pause_for(&b);
    }
    return RT_SUCCESS;
}

rt_error fake_stream_priority(rt_stream s, int *priority)
{
    *priority = fake_resolve(s)->priority;
    return RT_SUCCESS;
}

rt_error fake_stream_device(rt_stream s, int *device)
{
    *device = fake_resolve(s)->device;
    return RT_SUCCESS;
}

static rt_error launch_host_fn(rt_stream s, void (*fn)(void *), void *arg, bool replayed)
{
    rt_error captured;
    if (fake_capture_host_fn(fake_resolve(s), fn, arg, &captured))
        return captured;
    fake_op *op = fake_op_new(OP_HOST_FN);
    if (!op)
        return FAKE_ERROR_OUT_OF_MEMORY;
    op->fn = fn;
    op->arg = arg;
    op->replayed = replayed;
    return fake_push(s, op);
}

rt_error fake_launch_host_fn(rt_stream s, void (*fn)(void *), void *arg)
{
    return launch_host_fn(s, fn, arg, false);
}

rt_error fake_replay_host_fn(rt_stream s, void (*fn)(void *), void *arg)
{
    return launch_host_fn(s, fn, arg, true);
}

rt_error fake_stream_wait_value64(rt_stream s, uintptr_t counter, uint64_t value)
{
    if (!fake.wait_value)
        return FAKE_ERROR_NOT_SUPPORTED;
    rt_error captured;
    if (fake_capture_wait_value(fake_resolve(s), counter, value, &captured))
        return captured;
    fake_op *op = fake_op_new(OP_WAIT_VALUE);
    if (!op)
        return FAKE_ERROR_OUT_OF_MEMORY;
    op->counter = (_Atomic uint64_t *)counter;
    op->value = value;
    return fake_push(s, op);
}

/* The device's memory is the host's: a fill is a memset in stream order. */
rt_error fake_memset_async(void *memory, int value, size_t size, rt_stream s)
{
    if (fake_stream_is_capturing(s))
        return FAKE_ERROR_NOT_SUPPORTED; /* not modelled inside a capture */
    fake_op *op = fake_op_new(OP_MEMSET);
    if (!op)
        return FAKE_ERROR_OUT_OF_MEMORY;
    op->arg = memory;
    op->value = (uint64_t)(unsigned char)value;
    op->size = size;
    return fake_push(s, op);
}

/* tp_measure's floor, an empty kernel: a fill of no bytes, in stream order. */
rt_error fake_launch_empty(rt_stream s)
{
    static unsigned char nothing;
    if (fake_stream_is_capturing(s))
        return FAKE_ERROR_NOT_SUPPORTED; /* not modelled inside a capture */
    fake_op *op = fake_op_new(OP_MEMSET);
    if (!op)
        return FAKE_ERROR_OUT_OF_MEMORY;
    op->arg = &nothing;
    op->size = 0;
    return fake_push(s, op);
}
