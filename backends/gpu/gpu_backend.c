/*
 * The GPU backend's table (see gpu_internal.h for how its files fit). Events come
 * in two kinds: plain ones (gpu_event.c) and interprocess ones (gpu_ipc_event.c),
 * told apart by TP_EVENT_INTERPROCESS, which an event keeps for life; each event
 * entry here passes the call to its kind, in one branch that the hot paths of plain
 * events fall through.
 */
#include "backends/gpu/gpu_internal.h"

#include <stdio.h>

static inline bool is_interprocess(const tp_event *event)
{
    return (event->flags & TP_EVENT_INTERPROCESS) != 0;
}

static tp_status event_create(int device, unsigned flags, tp_event **out)
{
    if (TP_UNLIKELY(flags & TP_EVENT_INTERPROCESS))
        return gpu_ipc_event_create(device, flags, out);
    return gpu_plain_event_create(device, flags, out);
}

static tp_status event_destroy(tp_event *event)
{
    if (TP_UNLIKELY(is_interprocess(event)))
        return gpu_ipc_event_destroy(event);
    return gpu_plain_event_destroy(event);
}

static tp_status event_record(tp_event *event, tp_stream *stream)
{
    if (TP_UNLIKELY(is_interprocess(event)))
        return gpu_ipc_event_record(event, stream);
    return gpu_plain_event_record(event, stream);
}

static tp_status event_query(tp_event *event, bool *done)
{
    if (TP_UNLIKELY(is_interprocess(event)))
        return gpu_ipc_event_query(event, done);
    return gpu_plain_event_query(event, done);
}

static tp_status event_synchronize(tp_event *event)
{
    if (TP_UNLIKELY(is_interprocess(event)))
        return gpu_ipc_event_synchronize(event);
    return gpu_plain_event_synchronize(event);
}

static tp_status stream_wait_event(tp_stream *stream, tp_event *event)
{
    if (TP_UNLIKELY(is_interprocess(event)))
        return gpu_ipc_stream_wait_event(stream, event);
    return gpu_plain_stream_wait_event(stream, event);
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

const tp_backend gpu_table = {
    .abi_version = TP_BACKEND_ABI_VERSION,
    .size = sizeof(tp_backend),
    .name = RT_BACKEND_NAME,
    .type = RT_DEVICE_TYPE,
    .init = gpu_init,
    .device_count = gpu_device_count,
    .device_name = gpu_device_name,
    .device_synchronize = device_synchronize,
    .stream_create = gpu_stream_create,
    .stream_from_native = gpu_stream_from_native,
    .stream_default = gpu_stream_default,
    .stream_destroy = gpu_stream_destroy,
    .stream_query = gpu_stream_query,
    .stream_synchronize = gpu_stream_synchronize,
    .stream_wait_event = stream_wait_event,
    .stream_launch_host_fn = gpu_host_fn_launch,
    .stream_native = gpu_stream_native,
    .event_create = event_create,
    .event_destroy = event_destroy,
    .event_record = event_record,
    .event_query = event_query,
    .event_synchronize = event_synchronize,
    .event_elapsed = gpu_event_elapsed, /* timing events only, never interprocess (rule 8) */
    .event_ipc_export = gpu_event_ipc_export,
    .event_ipc_import = gpu_event_ipc_import,
    .native_sample = gpu_native_sample,
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
