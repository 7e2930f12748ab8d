/*
 * Waits across backends on the device: the part of the backend contract
 * (core/backend.h, whose four appended entries these are) that lets a record of one
 * backend be waited for in another backend's queue, no host thread in between
 * (issue 56: Vulkan's records waited for by CUDA streams through
 * cudaWaitExternalSemaphoresAsync). Apart from backend.h, which is at the tree's 600
 * lines.
 *
 * core/wait_across_device.c decides: for a pending record, outside captures, it
 * takes this path when the event's backend exports the snapshot and the stream's
 * backend imports it, and the host path (core/wait_across.c) when either says no.
 * Neither backend knows the other: they meet in tp_timeline_export.
 *
 *   timeline_export_support(device, uuid, how, how_size)
 *   timeline_import_support(device, uuid, how, how_size)
 *       Whether the device can export its records, or wait on an export of a device
 *       of `uuid`, as the drivers answered their capability queries (asked once, not
 *       assumed). TP_OK with `how` saying by what (the handle type, the runtime's
 *       call), or TP_ERR_UNSUPPORTED with no message set and `how` saying why not
 *       (the query's answer). Never block. Export: *uuid is the device's UUID
 *       (VkPhysicalDeviceIDProperties, cudaDeviceProp.uuid: the same bytes for one
 *       GPU).
 *   snapshot_export_timeline(snapshot, out)
 *       For a TP_SNAPSHOT_PENDING snapshot, the record as a timeline semaphore's
 *       value; TP_ERR_UNSUPPORTED with no message set where the device cannot
 *       export. The fd stays the exporter's (the importer dups what it keeps); the
 *       semaphore lives as long as the process, so an importer may keep its import
 *       by `key`. The snapshot may be released once this returns.
 *   stream_wait_timeline(stream, timeline, passed, arg)
 *       Later work of the stream waits, on the device, until the semaphore's counter
 *       reaches `value`; TP_ERR_UNSUPPORTED with no message set where the stream
 *       cannot (another device, an import the runtime refused, rule 17's window
 *       full): the core then takes the host path. The stream does not capture (the
 *       core asked). On TP_OK, *passed (NULL: none) is called with *arg once, when
 *       the record is reached (the core asks the exporter's snapshot_notify), so
 *       that the backend can count the waits still queued on its stream against
 *       its window (rule 17: a runtime's queue is finite).
 */
#ifndef TPEVENT_CORE_BACKEND_TIMELINE_H
#define TPEVENT_CORE_BACKEND_TIMELINE_H

#include <stdint.h>

/* A record as a timeline semaphore's value: reached once the semaphore's counter is
 * at least `value`. */
typedef struct tp_timeline_export {
    int fd;                 /* an opaque fd of the semaphore (VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT),
                               the exporter's: an importer dups it */
    uint64_t value;         /* the record's */
    uint64_t key;           /* the semaphore's, the same at each export and unique in the process */
    unsigned char uuid[16]; /* the exporting device's UUID: an importer waits on its own device's only */
} tp_timeline_export;

#endif /* TPEVENT_CORE_BACKEND_TIMELINE_H */
