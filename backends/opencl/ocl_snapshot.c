/*
 * Snapshots (docs/design.md, "Snapshots"): a pending one holds a reference on the record,
 * whose retained marker keeps meaning that record when the event is recorded again
 * or destroyed, and when its queue is released (rules 6, 9).
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/opencl/ocl_internal.h"

tp_status tp_ocl_snapshot_take(tp_event *event, tp_snapshot *out)
{
    out->backend = event->backend;
    out->device = event->device;
    out->flags = event->flags;
    out->object = NULL;
    ocl_record *record = tp_ocl_event_latest((ocl_event *)event);
    if (!record) {
        out->state = TP_SNAPSHOT_NEVER_RECORDED;
        return TP_OK;
    }
    bool reached = false;
    tp_status status = tp_ocl_record_query(record, "snapshot of a record", &reached);
    if (status != TP_OK || reached) {
        tp_ocl_record_unref(record);
        out->state = TP_SNAPSHOT_REACHED;
        return status;
    }
    out->state = TP_SNAPSHOT_PENDING;
    out->object = record; /* takes over the reference */
    return TP_OK;
}

void tp_ocl_snapshot_release(tp_snapshot *snapshot)
{
    if (snapshot->state == TP_SNAPSHOT_PENDING)
        tp_ocl_record_unref(snapshot->object);
}

tp_status tp_ocl_snapshot_query(const tp_snapshot *snapshot, bool *reached)
{
    return tp_ocl_record_query(snapshot->object, "tp_event_query", reached);
}

tp_status tp_ocl_snapshot_synchronize(const tp_snapshot *snapshot)
{
    return tp_ocl_record_wait(snapshot->object, snapshot->flags & TP_EVENT_BLOCKING, "tp_event_synchronize");
}

/* The notice retains the marker itself: the snapshot's reference may go at once. */
tp_status tp_ocl_snapshot_notify(const tp_snapshot *snapshot, void (*fn)(void *), void *arg)
{
    return tp_ocl_record_notify(snapshot->object, fn, arg, "tp_event_wait");
}
