/*
 * Waits across backends on the device (rule 14; issue 56): a record of one backend
 * exported as a timeline semaphore's value, waited for in the other backend's own
 * queue, with no host thread in between (a CUDA stream waiting on a Vulkan record
 * through cudaWaitExternalSemaphoresAsync). core/wait_across.c asks here first and
 * takes its host path when this says no: the backends meet in tp_timeline_export
 * (core/backend.h), neither names the other.
 *
 * Whether a pair can is the drivers' answer to their capability queries, asked by
 * each backend once; tp_wait_across_mechanism says which path a pair takes and,
 * for the host path, why the device's was not taken.
 */
#define _POSIX_C_SOURCE 200809L
#include "core/wait_across.h"

#include "common/env.h"

#include <stdio.h>
#include <string.h>

/* TPEVENT_WAIT_ACROSS_HOST=1: the host path always, to time the two paths against
 * each other (bench/vulkan/vulkan_cuda_wait_bench.c). A bad value counts as 0. */
static bool host_path_forced(void)
{
    uint64_t forced = 0;
    (void)tp_env_count("TPEVENT_WAIT_ACROSS_HOST", 0, 1, 0, &forced, NULL, 0);
    return forced != 0;
}

static bool has_device_path(const tp_backend *owner, const tp_backend *waiting)
{
    return owner->snapshot_export_timeline && owner->timeline_export_support && waiting->stream_wait_timeline &&
           waiting->timeline_import_support;
}

bool tp_wait_across_on_device(tp_stream *stream, const tp_snapshot *snapshot)
{
    const tp_backend *owner = snapshot->backend, *waiting = stream->backend;
    if (!has_device_path(owner, waiting) || host_path_forced())
        return false;
    tp_timeline_export timeline;
    if (owner->snapshot_export_timeline(snapshot, &timeline) != TP_OK)
        return false;
    /* Any refusal (another device, an import the runtime turned down, its window
     * full) leaves the stream as it was, and the host path makes the wait. */
    void (*passed)(void *) = NULL;
    void *arg = NULL;
    if (waiting->stream_wait_timeline(stream, &timeline, &passed, &arg) != TP_OK)
        return false;
    /* The waiting backend counts its queued waits (rule 17): told when this one passed. */
    if (passed && (!owner->snapshot_notify || owner->snapshot_notify(snapshot, passed, arg) != TP_OK))
        passed(arg);
    return true;
}

/* Why the pair takes the host path, into why; false when it takes the device's. */
static bool host_path_reason(const tp_backend *owner, tp_device event_device, const tp_backend *waiting,
                             tp_device stream_device, char *why, size_t size, char *how, size_t how_size)
{
    if (!owner->snapshot_export_timeline || !owner->timeline_export_support) {
        snprintf(why, size, "%s exports no records as timeline semaphores", owner->name);
        return true;
    }
    unsigned char uuid[16];
    char exports[200] = "", imports[200] = "";
    if (owner->timeline_export_support(event_device.index, uuid, exports, sizeof exports) != TP_OK) {
        snprintf(why, size, "%s:%d exports none: %s", owner->name, event_device.index, exports);
        return true;
    }
    if (!waiting->stream_wait_timeline || !waiting->timeline_import_support) {
        snprintf(why, size, "%s:%d exports them (%s), but %s streams wait on none", owner->name, event_device.index,
                 exports, waiting->name);
        return true;
    }
    if (waiting->timeline_import_support(stream_device.index, uuid, imports, sizeof imports) != TP_OK) {
        snprintf(why, size, "%s:%d exports them (%s), but %s:%d cannot wait on them: %s", owner->name,
                 event_device.index, exports, waiting->name, stream_device.index, imports);
        return true;
    }
    if (host_path_forced()) {
        snprintf(why, size, "TPEVENT_WAIT_ACROSS_HOST=1 (else %s:%d exports (%s), %s:%d waits (%s))", owner->name,
                 event_device.index, exports, waiting->name, stream_device.index, imports);
        return true;
    }
    snprintf(how, how_size, "%s:%d exports (%s), %s:%d waits (%s)", owner->name, event_device.index, exports,
             waiting->name, stream_device.index, imports);
    return false;
}

tp_status tp_wait_across_mechanism(const char *event_device_str, const char *stream_device_str, char *buf, size_t size)
{
    if (!buf || size == 0)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_wait_across_mechanism: buf is NULL or size is 0");
    tp_device event_device, stream_device;
    const tp_backend *owner, *waiting;
    tp_status status = tp_device_resolve(event_device_str, &event_device, &owner);
    if (status == TP_OK)
        status = tp_device_resolve(stream_device_str, &stream_device, &waiting);
    if (status != TP_OK)
        return status;
    if (event_device.type == stream_device.type)
        return tp_fail(TP_ERR_INVALID_ARGUMENT,
                       "tp_wait_across_mechanism: %s and %s are of one backend, whose own wait is used", owner->name,
                       waiting->name);
    char why[600] = "", how[600] = "";
    if (!host_path_reason(owner, event_device, waiting, stream_device, why, sizeof why, how, sizeof how)) {
        snprintf(buf, size, "device: a timeline semaphore: %s", how);
        return TP_OK;
    }
    char host[200] = "";
    if (!waiting->wait_mechanism || waiting->wait_mechanism(stream_device.index, host, sizeof host) != TP_OK)
        snprintf(host, sizeof host, "%s's hold or host function", waiting->name);
    snprintf(buf, size, "host: %s (the device's path not taken: %s)", host, why);
    return TP_OK;
}
