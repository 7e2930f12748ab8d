/*
 * Rules 7 and 13, in one place: tp_event_elapsed_time and tp_event_timestamp.
 *
 * The fast paths are one table call: the backend computes the milliseconds
 * between two reached records of one device (the call is ~100 ns on CUDA, the
 * budget 3% of it), or one reached record's host-clock time. When that is not
 * what it has, it fails with TP_ERR_NOT_READY and says no more. Then, and only
 * then, the core finds the answer rule 7 gives, in its order, from snapshots of
 * the records: TP_ERR_TIMING_DISABLED, TP_ERR_NOT_RECORDED, TP_ERR_NOT_READY.
 *
 * Events of two devices or two backends are timed on the host clock: the
 * difference of their timestamps (rule 7, revised by rule 13).
 */
#include "core/internal.h"

/* The answer the backend's failure leaves to the core; others pass through. */
static bool rule7_answer(tp_status status)
{
    return status == TP_ERR_NOT_RECORDED || status == TP_ERR_NOT_READY || status == TP_ERR_DEVICE_MISMATCH;
}

/* Rule 7's checks after TIMING, on the records of `events` as they are now, in
 * order: every one recorded, then every one reached. `names` say which failed. */
static tp_status sequence_records(const char *who, tp_event *const *events, const char *const *names, int count)
{
    tp_snapshot snapshots[2];
    tp_status status = TP_OK;
    int taken = 0;
    for (; taken < count && status == TP_OK; taken++)
        status = tp_snapshot_take(events[taken], &snapshots[taken]);
    if (status != TP_OK)
        taken--; /* the failed take holds nothing */
    for (int i = 0; i < taken && status == TP_OK; i++)
        if (snapshots[i].state == TP_SNAPSHOT_NEVER_RECORDED)
            status = tp_fail(TP_ERR_NOT_RECORDED, "%s: the %sevent was never recorded", who, names[i]);
    for (int i = 0; i < taken && status == TP_OK; i++) {
        bool reached = false;
        status = tp_snapshot_reached(&snapshots[i], &reached);
        if (status == TP_OK && !reached)
            status = tp_fail(TP_ERR_NOT_READY, "%s: the %sevent's record is not reached yet", who, names[i]);
    }
    for (int i = 0; i < taken; i++)
        tp_snapshot_release(&snapshots[i]);
    return status;
}

TP_COLD static tp_status timing_disabled(const char *who, const char *name)
{
    return tp_fail(TP_ERR_TIMING_DISABLED, "%s: the %sevent was created without TP_EVENT_TIMING", who, name);
}

TP_COLD static tp_status changed_meanwhile(const char *who, tp_status status)
{
    return tp_fail(status, "%s: the records changed while being timed (recorded again meanwhile?)", who);
}

/* ------------------------------------------------------------- timestamps */

static tp_status timestamp_sequenced(const char *who, tp_event *event, int64_t *ns)
{
    if (!(event->flags & TP_EVENT_TIMING))
        return timing_disabled(who, "");
    if (!event->backend->event_timestamp)
        return tp_unsupported(event->backend, "tp_event_timestamp");
    const char *name = "";
    tp_status status = sequence_records(who, &event, &name, 1);
    if (status != TP_OK)
        return status;
    /* Reached now, though the backend said otherwise a moment ago. */
    status = event->backend->event_timestamp(event, ns);
    return status != TP_OK && rule7_answer(status) ? changed_meanwhile(who, status) : status;
}

tp_status tp_event_timestamp(tp_event *event, int64_t *ns)
{
    if (TP_UNLIKELY(!event || !ns))
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_event_timestamp: %s is NULL", !event ? "event" : "ns");
    if (TP_LIKELY((event->flags & TP_EVENT_TIMING) && event->backend->event_timestamp)) {
        tp_status status = event->backend->event_timestamp(event, ns);
        if (TP_LIKELY(status == TP_OK) || !rule7_answer(status))
            return status;
    }
    return timestamp_sequenced("tp_event_timestamp", event, ns);
}

/* ---------------------------------------------------------------- elapsed */

static const char who[] = "tp_event_elapsed_time";

/* Two devices or two backends: on the host clock. Both reached (sequenced). */
static tp_status elapsed_on_host_clock(tp_event *start, tp_event *end, float *ms)
{
    int64_t start_ns = 0, end_ns = 0;
    tp_status status = timestamp_sequenced(who, start, &start_ns);
    if (status == TP_OK)
        status = timestamp_sequenced(who, end, &end_ns);
    if (status == TP_OK)
        *ms = (float)((double)(end_ns - start_ns) / 1e6);
    return status;
}

/* Set while this thread's tp_elapsed_sequenced asks the backend once more: a
 * backend that again has no answer (a record made again meanwhile) calls back in,
 * and is told so instead of going round again. */
static _Thread_local bool asking_backend_again;

TP_COLD tp_status tp_elapsed_sequenced(tp_event *start, tp_event *end, float *ms)
{
    if (asking_backend_again)
        return changed_meanwhile(who, TP_ERR_NOT_READY);
    if (!(start->flags & end->flags & TP_EVENT_TIMING))
        return timing_disabled(who, !(start->flags & TP_EVENT_TIMING) ? "start " : "end ");
    tp_event *events[2] = {start, end};
    static const char *const names[2] = {"start ", "end "};
    tp_status status = sequence_records(who, events, names, 2);
    if (status != TP_OK)
        return status;
    if (!tp_device_same(start->device, end->device))
        return elapsed_on_host_clock(start, end, ms);
    /* Both reached on one device now, though the backend said otherwise a moment
     * ago (a record reached in between): its answer now is the one. */
    asking_backend_again = true;
    status = start->backend->event_elapsed(start, end, ms);
    asking_backend_again = false;
    return status != TP_OK && rule7_answer(status) ? changed_meanwhile(who, status) : status;
}

/* The common case is one tail call: the backend answers, or hands rule 7's answer
 * back to tp_elapsed_sequenced (core/backend.h), so nothing is kept here across it. */
tp_status tp_event_elapsed_time(tp_event *start, tp_event *end, float *ms)
{
    if (TP_UNLIKELY(!start || !end || !ms))
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who, !start ? "start" : !end ? "end" : "ms");
    if (TP_UNLIKELY(!(start->flags & end->flags & TP_EVENT_TIMING) || !tp_device_same(start->device, end->device)))
        return tp_elapsed_sequenced(start, end, ms);
    return start->backend->event_elapsed(start, end, ms);
}
