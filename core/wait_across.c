/*
 * Waits across backends (rules 6 and 14): a stream of one backend waits on a
 * record of an event of another. Built from snapshots (core/backend.h), so that no
 * backend knows another: the event's backend names the record and says when it is
 * reached; the stream's backend holds the stream's later work.
 *
 * The record is the one that was latest at the call (rule 6): a snapshot is taken
 * now and the wait is for it alone; a later record of the event changes nothing.
 * Never recorded or reached already: nothing to wait for, nothing is enqueued.
 *
 * Two mechanisms, picked by the waiting backend's host_fn_may_block (see there):
 *   - blocking task (the CPU): a host function on the stream that spins briefly on
 *     the snapshot, then blocks in snapshot_synchronize (sleeping with
 *     TP_EVENT_BLOCKING), and releases it. The stream's own worker is the thread
 *     that waits, so the next task starts the moment the record is seen.
 *   - hold + notify (CUDA, HIP): stream_hold enqueues what holds the stream (a
 *     stream memory operation on host memory, no thread held), and the event's
 *     backend runs the release once the record is reached (snapshot_notify).
 *
 * Before both, the device's own path where the two drivers have one: the record
 * exported as a timeline semaphore that the waiting stream's queue waits on
 * (core/wait_across_device.c); these two are its fallback.
 *
 * Inside a capture: a host function captured on the waiting stream, that waits
 * at each launch (below).
 *
 * Interprocess events are refused, whatever their state: across backends a dead
 * exporter would either hang the waiting stream or release it early, and an
 * answer that depended on whether the record happened to be reached already
 * would work in tests and fail in production.
 *
 * Not a hot path (the same-backend wait is one table call in event.c), but the
 * blocking task's state comes from a free list, so that a warmed-up program's
 * waits allocate nothing.
 */
#include "core/wait_across.h"

#include "common/free_list.h"
#include "common/spin.h"

#include <pthread.h>
#include <stdlib.h>

/* ---------------------------------------------------- blocking task state */

typedef struct blocking_wait {
    struct blocking_wait *next; /* on the free list */
    tp_snapshot snapshot;       /* the record waited for; released by the task */
} blocking_wait;

static tp_free_list waits = TP_FREE_LIST_INIT; /* of blocking_wait */

/* fork(): the list's lock is held for a few stores; taken around the fork so that
 * the child never finds it held by a thread it does not have. */
static void waits_lock(void)
{
    pthread_mutex_lock(&waits.lock);
}

static void waits_unlock(void)
{
    pthread_mutex_unlock(&waits.lock);
}

__attribute__((constructor)) static void register_waits_fork_handlers(void)
{
    (void)pthread_atfork(waits_lock, waits_unlock, waits_unlock);
}

static blocking_wait *wait_get(void)
{
    return tp_free_list_take(&waits, sizeof(blocking_wait));
}

static void wait_put(blocking_wait *w)
{
    tp_free_list_give(&waits, w);
}

static bool snapshot_reached(const void *arg)
{
    bool reached = false;
    /* A query that fails counts as reached: the synchronize that would follow
     * would fail the same way, and the stream must not stay held on it. */
    return tp_snapshot_reached(arg, &reached) != TP_OK || reached;
}

/* Until a pending record is reached: a short spin, then the backend's
 * synchronize (which sleeps with TP_EVENT_BLOCKING, where it does not spin at all).
 * A failure (a GPU that failed) cannot be reported from here; the stream goes on,
 * as a runtime's own wait would. */
static void wait_for_snapshot(const tp_snapshot *snapshot)
{
    bool spin = !(snapshot->flags & TP_EVENT_BLOCKING);
    if (!(spin && tp_spin_until(snapshot_reached, snapshot, TP_SPIN_NS)))
        (void)snapshot->backend->snapshot_synchronize(snapshot);
}

/* On the waiting stream's worker. */
static void blocking_wait_task(void *arg)
{
    blocking_wait *w = arg;
    wait_for_snapshot(&w->snapshot);
    tp_snapshot_release(&w->snapshot);
    wait_put(w);
}

static tp_status wait_blocking(tp_stream *stream, tp_snapshot *snapshot)
{
    blocking_wait *w = wait_get();
    if (!w) {
        tp_snapshot_release(snapshot);
        return tp_fail(TP_ERR_OUT_OF_MEMORY, "tp_event_wait: out of memory");
    }
    w->snapshot = *snapshot; /* the task releases it from here on */
    tp_status status = stream->backend->stream_launch_host_fn(stream, blocking_wait_task, w);
    if (status != TP_OK) {
        tp_snapshot_release(&w->snapshot);
        wait_put(w);
    }
    return status;
}

/* ------------------------------------------------------------ hold + notify */

static tp_status wait_held(tp_stream *stream, tp_snapshot *snapshot)
{
    void (*release)(void *) = NULL;
    void *arg = NULL;
    tp_status status = stream->backend->stream_hold(stream, &release, &arg);
    if (status == TP_OK) {
        status = snapshot->backend->snapshot_notify(snapshot, release, arg);
        if (status != TP_OK)
            release(arg); /* nothing else would ever let the stream go */
    }
    tp_snapshot_release(snapshot);
    return status;
}

/* ------------------------------------------------------- inside a capture
 *
 * Rule 16: the wait is made again at each launch, for the event's latest record
 * when the launch reaches it; so only a TP_EVENT_EXTERNAL event's (as for a wait
 * of one backend: a plain event's latest record is the one of the call, which a
 * graph would wait for at every launch). It is a captured host function on the
 * waiting stream (stream_capture_host_fn: on a thread that may block) that takes
 * a snapshot and waits for it, as the blocking task above does. The graph holds
 * the event (tp_event_hold) until it is gone, even past the event's destroy.
 */

/* At each launch, on a tpevent thread of the waiting stream. A failure (a GPU
 * that failed, or the event's latest record inside a capture still open) waits for
 * nothing, as the runtime's own waits go on. */
static void captured_wait_task(void *held_event)
{
    tp_event *event = held_event;
    tp_snapshot snapshot;
    if (event->backend->snapshot_take(event, &snapshot) != TP_OK)
        return;
    if (snapshot.state == TP_SNAPSHOT_PENDING)
        wait_for_snapshot(&snapshot);
    tp_snapshot_release(&snapshot);
}

static void captured_wait_release(void *held_event)
{
    tp_event_release_hold(held_event);
}

static tp_status wait_in_capture(tp_event *event, tp_stream *stream, tp_snapshot *snapshot)
{
    bool recorded = snapshot->state != TP_SNAPSHOT_NEVER_RECORDED;
    tp_snapshot_release(snapshot);
    if (!(event->flags & TP_EVENT_EXTERNAL))
        return recorded ? tp_refuse_wait_in_capture(event, stream) : TP_OK; /* rule 6: nothing to wait for */
    if (!stream->backend->stream_capture_host_fn || !event->backend->snapshot_synchronize)
        return tp_refuse_wait_in_capture(event, stream);
    tp_event_hold(event); /* the host function's argument: the graph keeps the event */
    tp_status status = stream->backend->stream_capture_host_fn(stream, captured_wait_task, event,
                                                               captured_wait_release);
    if (status != TP_OK)
        captured_wait_release(event);
    return status;
}

/* ------------------------------------------------------------------ entry */

TP_COLD static tp_status refused(const tp_event *event, const tp_stream *stream, const char *why)
{
    char event_device[TP_DEVICE_STRING_MAX], stream_device[TP_DEVICE_STRING_MAX];
    return tp_fail(TP_ERR_UNSUPPORTED, "tp_event_wait: a stream of %s cannot wait on an event of %s: %s",
                   tp_device_str(stream->device, stream_device), tp_device_str(event->device, event_device), why);
}

tp_status tp_wait_across_backends(tp_event *event, tp_stream *stream)
{
    const tp_backend *waiting = stream->backend, *owner = event->backend;
    if (event->flags & TP_EVENT_INTERPROCESS)
        return refused(event, stream,
                       "interprocess events cannot be waited on across backends yet (a process that exits before "
                       "its record would hang the stream or release it early); wait on a stream of the event's "
                       "own backend, or synchronize the event");
    bool blocking = waiting->host_fn_may_block;
    if (blocking ? !waiting->stream_launch_host_fn : !waiting->stream_hold)
        return refused(event, stream,
                       blocking ? "its backend has no host functions"
                                : "its backend cannot hold a stream (stream_hold)");
    bool owner_can = blocking ? owner->snapshot_synchronize != NULL : owner->snapshot_notify != NULL;
    if (!tp_backend_has_snapshots(owner) || !owner_can)
        return refused(event, stream, "the event's backend offers no snapshots of its records");
    tp_snapshot snapshot;
    tp_status status = owner->snapshot_take(event, &snapshot);
    if (status != TP_OK)
        return status;
    bool capturing = false;
    if (waiting->stream_is_capturing && waiting->stream_is_capturing(stream, &capturing) == TP_OK && capturing)
        return wait_in_capture(event, stream, &snapshot);
    if (snapshot.state != TP_SNAPSHOT_PENDING || tp_wait_across_on_device(stream, &snapshot)) {
        /* Never recorded or reached: nothing to wait for (rule 6); or the stream waits
         * on the device (core/wait_across_device.c), for a semaphore that outlives the
         * record. */
        tp_snapshot_release(&snapshot);
        return TP_OK;
    }
    return blocking ? wait_blocking(stream, &snapshot) : wait_held(stream, &snapshot);
}
