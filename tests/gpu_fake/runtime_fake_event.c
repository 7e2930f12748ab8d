/*
 * The simulated runtime's events (tests/gpu_fake/runtime_fake.h): a record is a fake_record pushed
 * on its stream, reached when the stream's thread gets to it; an event's latest
 * record is the one query, synchronize, waits and elapsed time look at.
 */
#include "tests/gpu_fake/runtime_fake_internal.h"
#include "tests/gpu_fake/native_stream_calls.h"
#include "tests/gpu_fake/probe_calls.h"
#include "common/env.h" /* empty means unset, as for every TPEVENT_* variable */

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

rt_error fake_event_create(rt_event *event, unsigned flags)
{
    FAKE_COUNT_CALL();
    rt_event e = calloc(1, sizeof *e);
    if (!e)
        return FAKE_ERROR_OUT_OF_MEMORY;
    e->device = fake_current_device();
    e->flags = flags;
    pthread_mutex_init(&e->lock, NULL);
    *event = e;
    return RT_SUCCESS;
}

rt_error fake_event_destroy(rt_event e)
{
    FAKE_COUNT_CALL();
    fake_capture_forget(e);
    fake_record_unref(e->latest);
    pthread_mutex_destroy(&e->lock);
    free(e);
    return RT_SUCCESS;
}

/*
 * Contention: with TPEVENT_FAKE_CONTENDED_RECORDS=N, the process's first N records
 * are each reached FAKE_CONTENTION_NS late, in their stream's order, as on a GPU
 * that other processes' work holds (their contexts take turns): what a clock's
 * first calibration must see through (rule 13).
 */
#define FAKE_CONTENTION_NS 3000000L

static atomic_int contended_left;
static pthread_once_t contended_once = PTHREAD_ONCE_INIT;

/* A value that is not a count (from 0 to a million) is a test's mistake: said, and
 * the process stops, rather than a test passing without the contention it set. */
static void contended_read(void)
{
    uint64_t count;
    char refusal[160];
    if (!tp_env_count("TPEVENT_FAKE_CONTENDED_RECORDS", 0, 1000000, 0, &count, refusal, sizeof refusal)) {
        fprintf(stderr, "fake GPU: %s\n", refusal);
        abort();
    }
    atomic_store(&contended_left, (int)count);
}

static long record_lateness(void)
{
    pthread_once(&contended_once, contended_read);
    if (atomic_load(&contended_left) <= 0)
        return 0;
    return atomic_fetch_sub(&contended_left, 1) > 0 ? FAKE_CONTENTION_NS : 0;
}

_Thread_local bool fake_fail_next_record;

rt_error fake_event_record(rt_event e, rt_stream s)
{
    FAKE_COUNT_CALL();
    if (fake_fail_next_record) {
        fake_fail_next_record = false;
        return FAKE_ERROR_INVALID_VALUE;
    }
    s = fake_resolve(s);
    if (!s)
        return FAKE_ERROR_OUT_OF_MEMORY;
    if (s->device != e->device)
        return FAKE_ERROR_INVALID_HANDLE; /* "event and stream must be on the same device" */
    rt_error captured;
    if (fake_capture_record(e, s, &captured))
        return captured;
    fake_capture_forget(e);
    fake_record *record = calloc(1, sizeof *record);
    fake_op *op = fake_op_new(OP_RECORD);
    if (!record || !op) {
        free(record);
        free(op);
        return FAKE_ERROR_OUT_OF_MEMORY;
    }
    atomic_init(&record->refs, 2); /* the event's and the operation's */
    op->record = record;
    op->late_ns = record_lateness();
    pthread_mutex_lock(&e->lock);
    fake_record *previous = e->latest;
    e->latest = record;
    rt_error status = fake_push(s, op);
    pthread_mutex_unlock(&e->lock);
    fake_record_unref(previous);
    if (status != RT_SUCCESS) {
        atomic_store(&record->reached, true); /* a record that will never run */
        fake_record_unref(record);            /* the operation's, freed by push */
    }
    return status;
}

/* The latest record, held; NULL if never recorded. */
static fake_record *latest_of(rt_event e)
{
    pthread_mutex_lock(&e->lock);
    fake_record *record = e->latest;
    if (record)
        atomic_fetch_add(&record->refs, 1);
    pthread_mutex_unlock(&e->lock);
    return record;
}

/* Queries CUDA answers with an error that tpevent should not make (probe_calls.h). */
static atomic_ulong captured_record_queries;

static unsigned long captured_record_queries_count(void)
{
    return atomic_load(&captured_record_queries);
}

atomic_ulong fake_runtime_calls;

static unsigned long runtime_calls_count(void)
{
    return atomic_load(&fake_runtime_calls);
}

_Thread_local unsigned long fake_thread_runtime_calls;

static unsigned long thread_runtime_calls_count(void)
{
    return fake_thread_runtime_calls;
}

__attribute__((visibility("default"))) const probe_calls tpevent_fake_probe_calls = {
    captured_record_queries_count, runtime_calls_count, fake_sm_clock_max_queries, thread_runtime_calls_count};

rt_error fake_event_query(rt_event e)
{
    FAKE_COUNT_CALL();
    rt_error forbidden;
    if (fake_capture_forbids_event(e, &forbidden) || fake_capture_forbids_unsafe(&forbidden))
        return forbidden;
    /* CUDA's "invalid argument", as compute-sanitizer reported it on the GPU machine (issue 47). */
    if (fake_capture_ended_record(e)) {
        atomic_fetch_add(&captured_record_queries, 1);
        return FAKE_ERROR_INVALID_VALUE;
    }
    fake_record *record = latest_of(e);
    bool reached = !record || atomic_load(&record->reached);
    fake_record_unref(record);
    return reached ? RT_SUCCESS : FAKE_ERROR_NOT_READY;
}

rt_error fake_event_synchronize(rt_event e)
{
    FAKE_COUNT_CALL();
    rt_error forbidden;
    if (fake_capture_forbids_event(e, &forbidden) || fake_capture_forbids_unsafe(&forbidden))
        return forbidden;
    fake_record *record = latest_of(e);
    backoff b = BACKOFF_INIT;
    while (record && !atomic_load(&record->reached))
        fake_poll_pause_for(&b);
    fake_record_unref(record);
    return RT_SUCCESS;
}

rt_error fake_stream_wait_event(rt_stream s, rt_event e)
{
    FAKE_COUNT_CALL();
    rt_error captured;
    if (fake_capture_wait(fake_resolve(s), e, &captured))
        return captured;
    fake_record *record = latest_of(e);
    if (!record)
        return RT_SUCCESS;
    fake_op *op = fake_op_new(OP_WAIT_EVENT);
    if (!op) {
        fake_record_unref(record);
        return FAKE_ERROR_OUT_OF_MEMORY;
    }
    op->record = record;
    return fake_push(s, op);
}

rt_error fake_event_elapsed(float *ms, rt_event start, rt_event end)
{
    FAKE_COUNT_CALL();
    if ((start->flags | end->flags) & RT_EVENT_DISABLE_TIMING)
        return FAKE_ERROR_INVALID_HANDLE;
    rt_error forbidden;
    if (fake_capture_forbids_event(start, &forbidden) || fake_capture_forbids_event(end, &forbidden))
        return forbidden;
    fake_record *a = latest_of(start), *b = latest_of(end);
    rt_error status = RT_SUCCESS;
    if (!a || !b)
        status = FAKE_ERROR_INVALID_HANDLE;
    else if (!atomic_load(&a->reached) || !atomic_load(&b->reached))
        status = FAKE_ERROR_NOT_READY;
    else
        *ms = (float)((double)((int64_t)atomic_load(&b->time_ns) - (int64_t)atomic_load(&a->time_ns)) / 1e6);
    fake_record_unref(a);
    fake_record_unref(b);
    return status;
}

rt_error fake_ipc_get_event_handle(rt_ipc_event_handle *handle, rt_event e)
{
    if (!(e->flags & RT_EVENT_INTERPROCESS))
        return FAKE_ERROR_INVALID_HANDLE;
    memset(handle, 0, sizeof *handle);
    uintptr_t address = (uintptr_t)e;
    pid_t pid = getpid();
    memcpy(handle->bytes, &pid, sizeof pid);
    memcpy(handle->bytes + 8, &address, sizeof address);
    return RT_SUCCESS;
}

/* ---------------------------------------- native streams, for the tests */

static int native_record_and_wait(void *stream)
{
    rt_stream s = stream;
    int previous = fake_current_device();
    fake_set_current_device(fake_resolve(s)->device); /* the event's device: the stream's */
    rt_event event;
    rt_error e = fake_event_create(&event, RT_EVENT_DISABLE_TIMING);
    fake_set_current_device(previous);
    if (e != RT_SUCCESS)
        return e;
    e = fake_event_record(event, s);
    if (e == RT_SUCCESS)
        e = fake_event_synchronize(event);
    (void)fake_event_destroy(event);
    return e;
}

__attribute__((visibility("default")))
const native_stream_calls tpevent_fake_native_stream = {native_record_and_wait, fake_live_streams};
