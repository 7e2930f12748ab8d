/*
 * Rule 7, in one place: tp_event_elapsed_time.
 *
 * The fast path is one table call: the backend computes the milliseconds between
 * two reached records of one device (the call is ~100 ns on CUDA, the budget 3% of
 * it). When that is not what it has, it fails with TP_ERR_NOT_READY and says no
 * more; so does anything of two backends. Then, and only then, the core finds the
 * answer rule 7 gives, in its order, from snapshots of the two records:
 * TP_ERR_TIMING_DISABLED, TP_ERR_NOT_RECORDED, TP_ERR_NOT_READY, then (until the
 * clock issue puts two devices on one clock) TP_ERR_DEVICE_MISMATCH.
 */
#include "core/internal.h"

static const char who[] = "tp_event_elapsed_time";

/* The answer the backend's failure leaves to the core; others pass through. */
static bool rule7_answer(tp_status status)
{
    return status == TP_ERR_NOT_RECORDED || status == TP_ERR_NOT_READY || status == TP_ERR_DEVICE_MISMATCH;
}

static const char *which(bool start_fails)
{
    return start_fails ? "start" : "end";
}

/* Rule 7's checks after TIMING, on both records as they are now. TP_OK: both
 * reached and of one device, for the backend to time. */
static tp_status sequence_records(tp_event *start, tp_event *end)
{
    tp_snapshot first, second;
    tp_status status = tp_snapshot_take(start, &first);
    if (status != TP_OK)
        return status;
    status = tp_snapshot_take(end, &second);
    if (status != TP_OK) {
        tp_snapshot_release(&first);
        return status;
    }
    bool first_reached = false, second_reached = false;
    if (first.state == TP_SNAPSHOT_NEVER_RECORDED || second.state == TP_SNAPSHOT_NEVER_RECORDED)
        status = tp_fail(TP_ERR_NOT_RECORDED, "%s: the %s event was never recorded", who,
                         which(first.state == TP_SNAPSHOT_NEVER_RECORDED));
    else if ((status = tp_snapshot_reached(&first, &first_reached)) == TP_OK &&
             (status = tp_snapshot_reached(&second, &second_reached)) == TP_OK &&
             !(first_reached && second_reached))
        status = tp_fail(TP_ERR_NOT_READY, "%s: the %s event's record is not reached yet", who,
                         which(!first_reached));
    tp_snapshot_release(&second);
    tp_snapshot_release(&first);
    if (status != TP_OK)
        return status;
    if (start->device.type != end->device.type || start->device.index != end->device.index) {
        char start_device[TP_DEVICE_STRING_MAX], end_device[TP_DEVICE_STRING_MAX];
        return tp_fail(TP_ERR_DEVICE_MISMATCH, "%s: start is of %s, end of %s (no common clock yet)", who,
                       tp_device_str(start->device, start_device), tp_device_str(end->device, end_device));
    }
    return TP_OK;
}

TP_COLD static tp_status elapsed_sequenced(tp_event *start, tp_event *end, float *ms)
{
    if (!(start->flags & end->flags & TP_EVENT_TIMING))
        return tp_fail(TP_ERR_TIMING_DISABLED, "%s: the %s event was created without TP_EVENT_TIMING", who,
                       which(!(start->flags & TP_EVENT_TIMING)));
    tp_status status = sequence_records(start, end);
    if (status != TP_OK)
        return status;
    /* Both reached on one device now, though the backend said otherwise a moment
     * ago (a record reached in between): its answer now is the one. */
    status = start->backend->event_elapsed(start, end, ms);
    if (status != TP_OK && rule7_answer(status))
        return tp_fail(status, "%s: the records changed while being timed (recorded again meanwhile?)", who);
    return status;
}

tp_status tp_event_elapsed_time(tp_event *start, tp_event *end, float *ms)
{
    if (TP_UNLIKELY(!start || !end || !ms))
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who, !start ? "start" : !end ? "end" : "ms");
    if (TP_LIKELY((start->flags & end->flags & TP_EVENT_TIMING) && start->device.type == end->device.type)) {
        tp_status status = start->backend->event_elapsed(start, end, ms);
        if (TP_LIKELY(status == TP_OK) || !rule7_answer(status))
            return status;
    }
    return elapsed_sequenced(start, end, ms);
}
