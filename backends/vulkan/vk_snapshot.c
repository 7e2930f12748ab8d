/*
 * Snapshots of records (core/backend.h): a pending snapshot holds a reference on
 * the record (its query, for snapshot_time); one reached when taken holds nothing.
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/vulkan/vk_internal.h"

tp_status tp_vk_snapshot_take(tp_event *event, tp_snapshot *out)
{
    *out = (tp_snapshot){.backend = event->backend, .device = event->device, .flags = event->flags};
    vk_record *record = tp_vk_event_latest((vk_event *)event);
    if (!record) {
        out->state = TP_SNAPSHOT_NEVER_RECORDED;
    } else if (tp_vk_record_reached(record) && !(event->flags & TP_EVENT_TIMING)) {
        out->state = TP_SNAPSHOT_REACHED;
        tp_vk_record_unref(record);
    } else {
        /* A timing record keeps its reference even when reached: its time is read later. */
        out->state = tp_vk_record_reached(record) ? TP_SNAPSHOT_REACHED : TP_SNAPSHOT_PENDING;
        out->object = record;
    }
    return TP_OK;
}

void tp_vk_snapshot_release(tp_snapshot *snapshot)
{
    if (snapshot->object)
        tp_vk_record_unref(snapshot->object);
    snapshot->object = NULL;
}

tp_status tp_vk_snapshot_query(const tp_snapshot *snapshot, bool *reached)
{
    *reached = tp_vk_record_reached(snapshot->object);
    return TP_OK;
}

tp_status tp_vk_snapshot_synchronize(const tp_snapshot *snapshot)
{
    static const char call[] = "tp_event_synchronize";
    vk_record *record = snapshot->object;
    if (tp_vk_record_waits_for_caller(record))
        return tp_vk_host()->fail(TP_ERR_INVALID_ARGUMENT,
                                  "%s: the record comes after the host function that calls this, on the same "
                                  "stream: the wait would never end",
                                  call);
    return tp_vk_timeline_wait(record->timeline, record->value, (snapshot->flags & TP_EVENT_BLOCKING) != 0, call);
}

tp_status tp_vk_snapshot_time(const tp_snapshot *snapshot, int64_t *ns)
{
    if (!snapshot->object)
        return TP_ERR_NOT_READY;
    return tp_vk_record_time(snapshot->object, "tp_event_timestamp", ns);
}

tp_status tp_vk_snapshot_notify(const tp_snapshot *snapshot, void (*fn)(void *), void *arg)
{
    const vk_record *record = snapshot->object;
    return tp_vk_notify(record->timeline, record->value, fn, arg, "tp_event_wait");
}
