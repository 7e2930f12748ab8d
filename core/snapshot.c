/*
 * Snapshots as the core uses them (core/backend.h): one record of one event, taken
 * through the event's table and read back through the same table.
 */
#include "core/internal.h"

tp_status tp_snapshot_take(tp_event *event, tp_snapshot *out)
{
    const tp_backend *backend = event->backend;
    if (!tp_backend_has_snapshots(backend))
        return tp_unsupported(backend, "snapshots of records");
    return backend->snapshot_take(event, out);
}

void tp_snapshot_release(tp_snapshot *snapshot)
{
    snapshot->backend->snapshot_release(snapshot);
}

tp_status tp_snapshot_reached(const tp_snapshot *snapshot, bool *reached)
{
    if (snapshot->state != TP_SNAPSHOT_PENDING) {
        *reached = true; /* never recorded counts as reached, as in query (rule 4) */
        return TP_OK;
    }
    return snapshot->backend->snapshot_query(snapshot, reached);
}
