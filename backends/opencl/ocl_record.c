/*
 * Records: a marker (clEnqueueMarkerWithWaitList) after all the queue's work,
 * retained, and what the rules ask of it: is it reached, wait for it, its END, its
 * host time. A record is shared by the event whose latest it is, snapshots and
 * waits, by reference; the last reference releases the marker and gives the record
 * back to a free list, the backend's pool of native events: OpenCL makes a new
 * cl_event for every command, so what a warmed-up record reuses is tpevent's part.
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/opencl/ocl_internal.h"
#include "common/free_list.h"
#include "common/spin.h"
#include "common/thread.h"

#include <limits.h>
#include <stddef.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

_Static_assert(offsetof(ocl_record, next_free) == 0, "a record starts with its free list link");

/* One pool for every device: a record of one device is as good for another. */
static tp_free_list record_pool = TP_FREE_LIST_INIT;

tp_status tp_ocl_record_enqueue(ocl_device *device, cl_context context, cl_command_queue queue, const void *stream,
                                const char *call, ocl_record **out)
{
    cl_event marker = NULL;
    cl_int error = clEnqueueMarkerWithWaitList(queue, 0, NULL, &marker);
    /* PoCL may keep an unflushed command from its device until the queue is
     * flushed: a record must be reached without anyone waiting for it (rule 4). */
    if (error == CL_SUCCESS)
        error = clFlush(queue);
    if (error != CL_SUCCESS) {
        if (marker)
            clReleaseEvent(marker);
        return tp_ocl_fail(call, "clEnqueueMarkerWithWaitList", error);
    }
    ocl_record *record = tp_free_list_take(&record_pool, sizeof *record);
    if (!record) {
        clReleaseEvent(marker);
        return tp_ocl_host()->fail(TP_ERR_OUT_OF_MEMORY, "%s: out of memory", call);
    }
    atomic_init(&record->refs, 1);
    record->marker = marker;
    record->device = device;
    record->context = context;
    record->stream = stream;
    atomic_init(&record->host_ns, INT64_MIN);
    atomic_init(&record->reached, false);
    atomic_init(&record->end_ns, 0);
    *out = record;
    return TP_OK;
}

tp_status tp_ocl_record_wrap(ocl_device *device, cl_context context, cl_command_queue queue, cl_event marker,
                             const char *call, ocl_record **out)
{
    ocl_record *record = tp_free_list_take(&record_pool, sizeof *record);
    if (!record)
        return tp_ocl_host()->fail(TP_ERR_OUT_OF_MEMORY, "%s: out of memory", call);
    cl_int error = clRetainEvent(marker);
    if (error != CL_SUCCESS) {
        tp_free_list_give(&record_pool, record);
        return tp_ocl_fail(call, "clRetainEvent", error);
    }
    atomic_init(&record->refs, 1);
    record->marker = marker;
    record->device = device;
    record->context = context;
    record->stream = queue; /* identity only: never a tpevent stream, so never a self-wait */
    atomic_init(&record->host_ns, INT64_MIN);
    atomic_init(&record->reached, false);
    atomic_init(&record->end_ns, 0);
    *out = record;
    return TP_OK;
}

void tp_ocl_record_ref(ocl_record *record)
{
    atomic_fetch_add_explicit(&record->refs, 1, memory_order_relaxed);
}

void tp_ocl_record_unref(ocl_record *record)
{
    if (atomic_fetch_sub_explicit(&record->refs, 1, memory_order_acq_rel) != 1)
        return;
    clReleaseEvent(record->marker);
    tp_free_list_give(&record_pool, record);
}

tp_status tp_ocl_record_query(ocl_record *record, const char *call, bool *reached)
{
    cl_int state = CL_QUEUED;
    cl_int error = clGetEventInfo(record->marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof state, &state, NULL);
    if (TP_UNLIKELY(error != CL_SUCCESS))
        return tp_ocl_fail(call, "clGetEventInfo", error);
    if (TP_UNLIKELY(state < 0))
        return tp_ocl_fail(call, "the marker's command", state);
    *reached = state == CL_COMPLETE;
    return TP_OK;
}

bool tp_ocl_marker_done(cl_event marker)
{
    cl_int state = CL_QUEUED;
    cl_int error = clGetEventInfo(marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof state, &state, NULL);
    return error != CL_SUCCESS || state <= CL_COMPLETE;
}

static bool marker_complete(const void *marker)
{
    return tp_ocl_marker_done(*(const cl_event *)marker);
}

/*
 * The sleeping half of a wait: woken by the marker's CL_COMPLETE callback, and
 * bounded by polling its state between sleeps that double up to 1 ms. Either alone
 * falls short. NVIDIA's clWaitForEvents spins a CPU for as long as it waits. Its
 * callback came 20 ms after the command completed every other time (H200: a
 * marker behind a 128 MB fill, its state seen CL_COMPLETE by a query 100-400 us
 * after the enqueue, its callback 0.2 or 19.7-20.1 ms after), so that a cold
 * tp_measure's host function and a stream synchronize were late by as much. And
 * polling alone woke PoCL's waiters later than its prompt callback does (ASan under
 * load: rule 18's host functions 2-8x their length, against 1-3x).
 *
 * The callback may come after the waiter went on, so the two share the wake-up by
 * reference and the last one frees it.
 */
typedef struct completion_wake {
    pthread_mutex_t lock;
    pthread_cond_t completed; /* CLOCK_MONOTONIC: the bounded sleeps wait on it */
    bool done;
    atomic_int refs;
} completion_wake;

static void completion_wake_unref(completion_wake *wake)
{
    if (atomic_fetch_sub_explicit(&wake->refs, 1, memory_order_acq_rel) != 1)
        return;
    pthread_cond_destroy(&wake->completed);
    pthread_mutex_destroy(&wake->lock);
    free(wake);
}

static void CL_CALLBACK completion_signal(cl_event marker, cl_int state, void *arg)
{
    (void)marker;
    (void)state;
    completion_wake *wake = arg;
    pthread_mutex_lock(&wake->lock);
    wake->done = true;
    pthread_cond_signal(&wake->completed);
    pthread_mutex_unlock(&wake->lock);
    completion_wake_unref(wake);
}

/* The wake-up, its callback registered; NULL (then the wait only polls) if either
 * could not be had. */
static completion_wake *completion_wake_open(cl_event marker)
{
    completion_wake *wake = malloc(sizeof *wake);
    if (!wake)
        return NULL;
    pthread_mutex_init(&wake->lock, NULL);
    tp_cond_init_monotonic(&wake->completed);
    wake->done = false;
    atomic_init(&wake->refs, 2);
    if (clSetEventCallback(marker, CL_COMPLETE, completion_signal, wake) != CL_SUCCESS) {
        atomic_store_explicit(&wake->refs, 1, memory_order_relaxed);
        completion_wake_unref(wake);
        return NULL;
    }
    return wake;
}

/* Sleeps up to pause_ns, or less once the callback came; whether it has. */
static bool completion_wake_sleep(completion_wake *wake, uint64_t pause_ns)
{
    if (!wake) {
        tp_sleep_ns(pause_ns);
        return false;
    }
    pthread_mutex_lock(&wake->lock);
    if (!wake->done)
        tp_cond_wait_for_ns(&wake->completed, &wake->lock, pause_ns);
    bool done = wake->done;
    pthread_mutex_unlock(&wake->lock);
    return done;
}

void tp_ocl_marker_sleep(cl_event marker)
{
    completion_wake *wake = completion_wake_open(marker);
    uint64_t pause = TP_PAUSE_FIRST_NS;
    while (!tp_ocl_marker_done(marker) && !completion_wake_sleep(wake, pause))
        pause = tp_pause_next(pause);
    if (wake)
        completion_wake_unref(wake);
}

void tp_ocl_marker_wait(cl_event marker, bool sleep)
{
    if (tp_spin_until(marker_complete, &marker, TP_SPIN_NS))
        return;
    if (sleep) {
        tp_ocl_marker_sleep(marker);
        return;
    }
    while (!tp_ocl_marker_done(marker))
        sched_yield();
}

tp_status tp_ocl_record_wait(ocl_record *record, bool sleep, const char *call)
{
    tp_ocl_marker_wait(record->marker, sleep);
    bool reached = false;
    tp_status status = tp_ocl_record_query(record, call, &reached);
    if (status == TP_OK)
        atomic_store_explicit(&record->reached, true, memory_order_release);
    return status;
}

/* The first read of a record's END. The state first, until seen CL_COMPLETE:
 * NVIDIA's OpenCL answers CL_SUCCESS and a meaningless END for a command not
 * complete, where the spec says CL_PROFILING_INFO_NOT_AVAILABLE. */
static tp_status record_end_read(ocl_record *record, const char *call, cl_ulong *end_ns)
{
    if (!atomic_load_explicit(&record->reached, memory_order_acquire)) {
        bool reached = false;
        tp_status status = tp_ocl_record_query(record, call, &reached);
        if (status != TP_OK)
            return status;
        if (!reached)
            return TP_ERR_NOT_READY;
        atomic_store_explicit(&record->reached, true, memory_order_release);
    }
    cl_int error = clGetEventProfilingInfo(record->marker, CL_PROFILING_COMMAND_END, sizeof *end_ns, end_ns, NULL);
    if (error != CL_SUCCESS)
        return tp_ocl_fail(call, "clGetEventProfilingInfo(CL_PROFILING_COMMAND_END)", error);
    atomic_store_explicit(&record->end_ns, *end_ns, memory_order_relaxed);
    return TP_OK;
}

/* A completed command's END never changes: read once, then kept (an END of 0, never
 * seen, would only be read again). */
tp_status tp_ocl_record_end(ocl_record *record, const char *call, cl_ulong *end_ns)
{
    uint64_t known = atomic_load_explicit(&record->end_ns, memory_order_relaxed);
    if (TP_LIKELY(known != 0)) {
        *end_ns = known;
        return TP_OK;
    }
    return record_end_read(record, call, end_ns);
}

tp_status tp_ocl_record_time(ocl_record *record, const char *call, int64_t *host_ns)
{
    int64_t known = atomic_load_explicit(&record->host_ns, memory_order_acquire);
    if (known != INT64_MIN) {
        *host_ns = known;
        return TP_OK;
    }
    cl_ulong end = 0;
    tp_status status = tp_ocl_record_end(record, call, &end);
    if (status == TP_OK)
        status = tp_ocl_clock_convert(record->device, end, &known);
    if (status != TP_OK)
        return status;
    /* Two threads converting at once: the first time given is the one kept. */
    int64_t expected = INT64_MIN;
    if (!atomic_compare_exchange_strong(&record->host_ns, &expected, known))
        known = expected;
    *host_ns = known;
    return TP_OK;
}
