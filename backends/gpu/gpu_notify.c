/*
 * snapshot_notify's calls (core/backend.h): fn(arg) once a snapshot's marker is
 * reached, for another backend's stream held on this one's record (an OpenCL stream
 * waiting on a CUDA event: core/wait_across.c).
 *
 * Nothing is queued on the device for it: the marker is pinned to its pool
 * (gpu_pool_pin: handed out again only once fn ran), and the device's poller, a
 * thread made at the first notify, asks each marker it holds whether it was
 * reached, a pass every POLL_PAUSE_MIN_NS to POLL_PAUSE_MAX_NS (the longer while
 * passes find nothing). fn is late by at most a pass and a pause, never early.
 * The poller also watches counters in host memory for an interprocess event's
 * waits (gpu_ipc_page.c): another process's record is reached when its channel of
 * the shared page reaches the record's value, and no marker of ours says so.
 *
 * Why not a runtime host function behind the marker, which the runtime would call
 * the moment the stream gets there: launching one can block its caller (rule 17).
 * On the H100 an OpenCL stream's 10,000 waits on pending CUDA records blocked in
 * cuLaunchHostFunc for 10 s (the test's watchdog), with at most 256 such host
 * functions queued, spread over 16 snapshot streams that also held the markers'
 * records. Where the driver's limit lies is not known (200 host functions behind
 * a blocked one on one stream do not block); a poller has none.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include "backends/gpu/gpu_internal.h"
#include "common/free_list.h"
#include "common/thread.h"

#include <stdio.h>
#include <string.h>

#define POLL_PAUSE_MIN_NS 20000u
#define POLL_PAUSE_MAX_NS 200000u

struct gpu_notify_call {
    gpu_notify_call *next;           /* first (tp_free_item's layout): on the poller's list, or the spares */
    rt_event marker;                 /* pinned until fn ran; NULL: a counter's call */
    const _Atomic uint64_t *counter; /* a counter's call: reached once it is at least value */
    uint64_t value;
    void (*fn)(void *);
    void *arg;
};

/* ------------------------------------------------------------- the poller */

rt_error gpu_event_query_relaxed(const gpu_device *device, rt_event event, const char **call)
{
    rt_guard guard;
    *call = RT_CALL("SetDevice");
    rt_error e = gpu_guard_enter_if(RT_QUERY_NEEDS_CONTEXT, &guard, device->context, RT_NEED_CONTEXT);
    if (e != RT_SUCCESS)
        return e;
    /* Rule 16: a query from a thread not relaxed (a CPU stream's worker, this
     * poller) would invalidate another thread's capture in global mode. */
    rt_capture_mode mode = rt_thread_capture_relax_save();
    *call = RT_CALL("EventQuery");
    e = rt_event_query(event);
    rt_thread_capture_restore(mode);
    rt_guard_leave(&guard);
    return e;
}

/* A query that fails counts as reached, as core/wait_across.c's does: the stream
 * held on it must not stay held. */
static bool call_reached(const gpu_device *device, const gpu_notify_call *call)
{
    if (!call->marker)
        return atomic_load_explicit(call->counter, memory_order_acquire) >= call->value;
    const char *failed;
    return gpu_event_query_relaxed(device, call->marker, &failed) != RT_ERROR_NOT_READY;
}

/* One pass over `calls`: runs and frees those reached; returns the others, in order,
 * and whether any was reached. */
static gpu_notify_call *poll_pass(gpu_device *device, gpu_notify_call *calls, bool *any_reached)
{
    gpu_notify_call *left = NULL, **tail = &left;
    *any_reached = false;
    while (calls) {
        gpu_notify_call *call = calls;
        calls = call->next;
        if (call_reached(device, call)) {
            call->fn(call->arg);
            if (call->marker)
                gpu_pool_unpin(call->marker, false);
            tp_free_list_give(&device->notifier.spare, call);
            *any_reached = true;
        } else {
            call->next = NULL;
            *tail = call;
            tail = &call->next;
        }
    }
    return left;
}

static void *poller_main(void *arg)
{
    gpu_device *device = arg;
#if defined(__GLIBC__)
    char name[16]; /* the kernel's limit, NUL included */
    snprintf(name, sizeof name, "tpevent-n%s:%d", RT_BACKEND_NAME, device->index);
    pthread_setname_np(pthread_self(), name);
#endif
    gpu_notifier *notifier = &device->notifier;
    uint64_t pause_ns = POLL_PAUSE_MIN_NS;
    pthread_mutex_lock(&notifier->lock);
    for (;;) {
        while (!notifier->polled)
            pthread_cond_wait(&notifier->polled_added, &notifier->lock);
        gpu_notify_call *calls = notifier->polled;
        notifier->polled = NULL;
        bool fresh = notifier->fresh; /* some came since the last pass */
        notifier->fresh = false;
        pthread_mutex_unlock(&notifier->lock);
        bool any_reached = false;
        gpu_notify_call *left = poll_pass(device, calls, &any_reached);
        pthread_mutex_lock(&notifier->lock);
        /* Short pauses while records are being reached or waits come, so that a
         * fresh wait is let go soon; longer ones while old waits stay pending. */
        bool added = notifier->polled != NULL;
        pause_ns = any_reached || fresh || added ? POLL_PAUSE_MIN_NS : pause_ns * 2;
        if (pause_ns > POLL_PAUSE_MAX_NS)
            pause_ns = POLL_PAUSE_MAX_NS;
        if (!left)
            continue;
        gpu_notify_call **tail = &left;
        while (*tail)
            tail = &(*tail)->next;
        *tail = notifier->polled; /* with those added during the pass */
        notifier->polled = left;
        if (!added)
            tp_cond_wait_for_ns(&notifier->polled_added, &notifier->lock, pause_ns);
    }
    return NULL;
}

/* Hands a filled call to the poller, started at the first. On failure the caller
 * takes the call back. */
static tp_status poller_add(gpu_device *device, gpu_notify_call *call)
{
    gpu_notifier *notifier = &device->notifier;
    pthread_mutex_lock(&notifier->lock);
    if (!notifier->poller_started) {
        int err = tp_thread_start_detached(poller_main, device);
        if (err != 0) {
            pthread_mutex_unlock(&notifier->lock);
            return gpu.host->fail(TP_ERR_BACKEND, "tp_event_wait: cannot start the %s notifier thread: %s",
                                  RT_BACKEND_NAME, strerror(err));
        }
        notifier->poller_started = true;
    }
    call->next = notifier->polled;
    notifier->polled = call; /* the pass order does not matter: each is asked */
    notifier->fresh = true;
    pthread_cond_signal(&notifier->polled_added);
    pthread_mutex_unlock(&notifier->lock);
    return TP_OK;
}

tp_status gpu_notify_when_reached(gpu_device *device, rt_event marker, void (*fn)(void *), void *arg)
{
    gpu_notify_call *call = tp_free_list_take(&device->notifier.spare, sizeof *call);
    if (!call)
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_event_wait: out of memory");
    *call = (gpu_notify_call){.marker = marker, .fn = fn, .arg = arg};
    gpu_pool_pin(marker);
    tp_status status = poller_add(device, call);
    if (status != TP_OK) {
        gpu_pool_unpin(marker, false);
        tp_free_list_give(&device->notifier.spare, call);
    }
    return status;
}

tp_status gpu_notify_when_counter_reaches(gpu_device *device, const _Atomic uint64_t *counter, uint64_t value,
                                          void (*fn)(void *), void *arg)
{
    gpu_notify_call *call = tp_free_list_take(&device->notifier.spare, sizeof *call);
    if (!call)
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_stream_wait_event: out of memory");
    *call = (gpu_notify_call){.counter = counter, .value = value, .fn = fn, .arg = arg};
    tp_status status = poller_add(device, call);
    if (status != TP_OK)
        tp_free_list_give(&device->notifier.spare, call);
    return status;
}
