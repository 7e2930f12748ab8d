/*
 * The GPU backend's tables (see gpu_internal.h for how its files fit). Events come
 * in two kinds, each with a table of its own: plain ones (gpu_event.c) and
 * interprocess ones (gpu_ipc_event.c, TP_EVENT_INTERPROCESS, which an event keeps
 * for life). The registry knows `gpu_table`; interprocess events point at
 * `gpu_ipc_table`, the same but for the entries that take an event, so a call on
 * either kind is one indirect call, and the plain event's code has no IPC branch.
 * Only creation picks the kind.
 */
#include "backends/gpu/gpu_internal.h"

#include <stdio.h>

static const tp_backend gpu_table, gpu_ipc_table;

static tp_status init(const tp_host *host, char *reason, size_t reason_size)
{
    return gpu_init(&gpu_table, &gpu_ipc_table, host, reason, reason_size);
}

static tp_status event_create(int device, unsigned flags, tp_event **out)
{
    if (TP_UNLIKELY(flags & TP_EVENT_INTERPROCESS))
        return gpu_ipc_event_create(device, flags, out);
    return gpu_plain_event_create(device, flags, out);
}

/* A host function (gpu_host_fn.c) holds its stream until it returns: a
 * device-wide synchronize from one would wait for it forever. */
static tp_status device_synchronize(int device)
{
    if (TP_UNLIKELY(gpu_host_fn_on_device(device)))
        return gpu.host->fail(TP_ERR_INVALID_ARGUMENT,
                              "tp_device_synchronize: called from a host function on a stream of %s:%d, which "
                              "would wait for itself forever",
                              RT_BACKEND_NAME, device);
    return gpu_device_synchronize(device);
}

/* What both tables share: everything but the entries that take an event. */
#define GPU_SHARED_ENTRIES                                                                                         \
    .abi_version = TP_BACKEND_ABI_VERSION, .size = sizeof(tp_backend), .name = RT_BACKEND_NAME,                   \
    .type = RT_DEVICE_TYPE, .init = init, .device_count = gpu_device_count, .device_name = gpu_device_name,         \
    .device_synchronize = device_synchronize,       .stream_create = gpu_stream_create,                               \
    .stream_from_native = gpu_stream_from_native, .stream_default = gpu_stream_default,                             \
    .stream_destroy = gpu_stream_destroy, .stream_query = gpu_stream_query,                                         \
    .stream_synchronize = gpu_stream_synchronize, .stream_launch_host_fn = gpu_host_fn_launch,                     \
    .stream_native = gpu_stream_native, .event_create = event_create, .event_ipc_import = gpu_event_ipc_import,     \
    .native_sample = gpu_native_sample, .snapshot_take = gpu_snapshot_take,                                           \
    .snapshot_release = gpu_snapshot_release, .snapshot_query = gpu_snapshot_query,                                 \
    .snapshot_synchronize = gpu_snapshot_synchronize, .snapshot_time = NULL /* the clock issue */,                  \
    .snapshot_notify = gpu_snapshot_notify, .stream_hold = NULL /* the cross-backend waits */

static const tp_backend gpu_table = {
    GPU_SHARED_ENTRIES,
    .stream_wait_event = gpu_plain_stream_wait_event,
    .event_destroy = gpu_plain_event_destroy,
    .event_record = gpu_plain_event_record,
    .event_query = gpu_plain_event_query,
    .event_synchronize = gpu_plain_event_synchronize,
    .event_elapsed = gpu_event_elapsed,
    .event_ipc_export = NULL, /* the core lets only interprocess events export */
};

static const tp_backend gpu_ipc_table = {
    GPU_SHARED_ENTRIES,
    .stream_wait_event = gpu_ipc_stream_wait_event,
    .event_destroy = gpu_ipc_event_destroy,
    .event_record = gpu_ipc_event_record,
    .event_query = gpu_ipc_event_query,
    .event_synchronize = gpu_ipc_event_synchronize,
    .event_elapsed = gpu_event_elapsed, /* the core lets only timing events, never interprocess ones (rule 8) */
    .event_ipc_export = gpu_event_ipc_export,
};

tp_status GPU_ENTRY(uint32_t core_abi, const tp_backend **out, char *reason, size_t reason_size)
{
    if (core_abi != TP_BACKEND_ABI_VERSION) {
        snprintf(reason, reason_size, "the %s backend speaks backend ABI version %u, the core %u", RT_BACKEND_NAME,
                 (unsigned)TP_BACKEND_ABI_VERSION, (unsigned)core_abi);
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    *out = &gpu_table;
    return TP_OK;
}
