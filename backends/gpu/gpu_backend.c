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
#include "backends/gpu/gpu_graph.h"

#include <stdio.h>

static const tp_backend gpu_table, gpu_ipc_table, gpu_wrapped_table;

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

/* Rule 15, for the core's timed waits: the untimed one asks the same. */
static bool stream_waits_for_itself(tp_stream *stream)
{
    return gpu_host_fn_would_wait_for_itself(gpu_as_stream(stream));
}

/* tp_event_from_native: wrappers point at gpu_wrapped_table. */
static tp_status event_from_native(int device, void *native, tp_event **out)
{
    return gpu_wrapped_event_create(device, native, &gpu_wrapped_table, out);
}

/*
 * fork() (gpu_device.c): in a child of the process that initialized the driver,
 * every entry that can reach the runtime fails at once. One relaxed load and a
 * branch in front of the entry, then a tail call.
 */
#define FORK_GUARDED(entry, operation, params, args)                                                                          \
    static tp_status guarded_##entry params                                                                        \
    {                                                                                                              \
        if (TP_UNLIKELY(atomic_load_explicit(&gpu_in_forked_child, memory_order_relaxed)))                         \
            return gpu_forked_fail(operation);                                                                        \
        return entry args;                                                                                         \
    }

FORK_GUARDED(device_synchronize, "tp_device_synchronize", (int d), (d))
FORK_GUARDED(gpu_stream_create, "tp_stream_create", (int d, int priority, tp_stream **out), (d, priority, out))
FORK_GUARDED(gpu_stream_from_native, "tp_stream_from_native", (int d, void *native, tp_stream **out), (d, native, out))
FORK_GUARDED(gpu_stream_default, "tp_stream_default", (int d, tp_stream **out), (d, out))
FORK_GUARDED(event_create, "tp_event_create", (int d, unsigned flags, tp_event **out), (d, flags, out))
FORK_GUARDED(gpu_event_ipc_import, "tp_event_from_ipc_handle", (int d, const unsigned char *payload, size_t length, tp_event **out),
             (d, payload, length, out))
FORK_GUARDED(gpu_native_sample, "tp_native_sample", (int d, tp_native_op op, uint64_t *samples_ns, size_t count),
             (d, op, samples_ns, count))
FORK_GUARDED(gpu_snapshot_query, "snapshot_query", (const tp_snapshot *snapshot, bool *reached), (snapshot, reached))
FORK_GUARDED(gpu_snapshot_synchronize, "snapshot_synchronize", (const tp_snapshot *snapshot), (snapshot))
FORK_GUARDED(gpu_snapshot_notify, "snapshot_notify", (const tp_snapshot *snapshot, void (*fn)(void *), void *arg), (snapshot, fn, arg))
FORK_GUARDED(gpu_stream_hold, "tp_event_wait", (tp_stream * stream, void (**release)(void *), void **arg), (stream, release, arg))
FORK_GUARDED(gpu_wait_mechanism, "tp_device_wait_mechanism", (int d, char *buf, size_t size), (d, buf, size))
FORK_GUARDED(gpu_device_clock, "tp_device_clock", (int d, tp_clock_info *info), (d, info))
FORK_GUARDED(gpu_ipc_event_destroy, "tp_event_destroy", (tp_event * event), (event))
FORK_GUARDED(gpu_ipc_event_query, "tp_event_query", (tp_event * event, bool *done), (event, done))
FORK_GUARDED(gpu_ipc_event_synchronize, "tp_event_synchronize", (tp_event * event), (event))
FORK_GUARDED(event_from_native, "tp_event_from_native", (int d, void *native, tp_event **out), (d, native, out))
FORK_GUARDED(gpu_stream_priority_range, "tp_stream_priority_range", (int d, int *least, int *greatest), (d, least, greatest))
FORK_GUARDED(gpu_wrapped_event_destroy, "tp_event_destroy", (tp_event * event), (event))
FORK_GUARDED(gpu_wrapped_event_record, "tp_event_record", (tp_event * event, tp_stream *stream), (event, stream))
FORK_GUARDED(gpu_capture_event_record, "tp_event_record", (tp_event * event, tp_stream *stream), (event, stream))
FORK_GUARDED(gpu_capture_wait_event, "tp_event_wait", (tp_stream * stream, tp_event *event), (stream, event))
FORK_GUARDED(gpu_capture_ipc_wait_event, "tp_event_wait", (tp_stream * stream, tp_event *event), (stream, event))
FORK_GUARDED(gpu_capture_ipc_event_record, "tp_event_record", (tp_event * event, tp_stream *stream), (event, stream))
FORK_GUARDED(gpu_capture_host_fn_launch, "tp_stream_launch_host_fn", (tp_stream * stream, void (*fn)(void *), void *arg), (stream, fn, arg))
FORK_GUARDED(gpu_capture_event_query, "tp_event_query", (tp_event * event, bool *done), (event, done))
FORK_GUARDED(gpu_capture_event_synchronize, "tp_event_synchronize", (tp_event * event), (event))
FORK_GUARDED(gpu_capture_event_elapsed, "tp_event_elapsed_time", (tp_event * start, tp_event *end, float *ms), (start, end, ms))
FORK_GUARDED(gpu_capture_event_timestamp, "tp_event_timestamp", (tp_event * event, int64_t *ns), (event, ns))
FORK_GUARDED(gpu_capture_snapshot_take, "snapshot_take", (tp_event * event, tp_snapshot *out), (event, out))
FORK_GUARDED(gpu_capture_event_destroy, "tp_event_destroy", (tp_event * event), (event))
FORK_GUARDED(gpu_capture_stream_query, "tp_stream_query", (tp_stream * stream, bool *idle), (stream, idle))
FORK_GUARDED(gpu_capture_stream_synchronize, "tp_stream_synchronize", (tp_stream * stream), (stream))
FORK_GUARDED(gpu_capture_stream_destroy, "tp_stream_destroy", (tp_stream * stream), (stream))
FORK_GUARDED(gpu_stream_begin_capture, "tp_stream_begin_capture", (tp_stream * stream), (stream))
FORK_GUARDED(gpu_stream_end_capture, "tp_stream_end_capture", (tp_stream * stream, tp_graph **out), (stream, out))
FORK_GUARDED(gpu_stream_is_capturing, "tp_stream_is_capturing", (tp_stream * stream, bool *capturing), (stream, capturing))
FORK_GUARDED(gpu_graph_launch, "tp_graph_launch", (tp_graph * graph, tp_stream *stream), (graph, stream))
FORK_GUARDED(gpu_graph_destroy, "tp_graph_destroy", (tp_graph * graph), (graph))
FORK_GUARDED(gpu_event_ipc_export, "tp_event_ipc_handle", (tp_event * event, unsigned char *payload, size_t *length), (event, payload, length))

/* What both tables share: everything but the entries that take an event. */
#define GPU_SHARED_ENTRIES                                                                                         \
    .abi_version = TP_BACKEND_ABI_VERSION, .size = sizeof(tp_backend), .name = RT_BACKEND_NAME,                   \
    .type = RT_DEVICE_TYPE, .init = init, .device_count = gpu_device_count, .device_name = gpu_device_name,         \
    .device_synchronize = guarded_device_synchronize,       .stream_create = guarded_gpu_stream_create,                               \
    .stream_from_native = guarded_gpu_stream_from_native, .stream_default = guarded_gpu_stream_default,                             \
    .stream_destroy = guarded_gpu_capture_stream_destroy, .stream_query = guarded_gpu_capture_stream_query,                                         \
    .stream_synchronize = guarded_gpu_capture_stream_synchronize, .stream_launch_host_fn = guarded_gpu_capture_host_fn_launch,                     \
    .stream_native = gpu_stream_native, .event_create = guarded_event_create, .event_ipc_import = guarded_gpu_event_ipc_import,     \
    .native_sample = guarded_gpu_native_sample, .snapshot_take = guarded_gpu_capture_snapshot_take,                                           \
    .snapshot_release = gpu_snapshot_release, .snapshot_query = guarded_gpu_snapshot_query,                                 \
    .snapshot_synchronize = guarded_gpu_snapshot_synchronize, .snapshot_time = NULL /* timestamps go by the event */,      \
    .snapshot_notify = guarded_gpu_snapshot_notify, .stream_hold = guarded_gpu_stream_hold,                                  \
    .host_fn_may_block = false /* stream_hold holds no thread (core/backend.h) */,                                            \
    .wait_mechanism = guarded_gpu_wait_mechanism, .event_timestamp = guarded_gpu_capture_event_timestamp,             \
    .device_clock = guarded_gpu_device_clock, .event_native = gpu_event_native_handle,                                    \
    .event_from_native = guarded_event_from_native, .stream_priority_range = guarded_gpu_stream_priority_range,          \
    .stream_begin_capture = guarded_gpu_stream_begin_capture, .stream_end_capture = guarded_gpu_stream_end_capture,    \
    .stream_is_capturing = guarded_gpu_stream_is_capturing, .graph_launch = guarded_gpu_graph_launch,                   \
    .graph_destroy = guarded_gpu_graph_destroy, .stream_waits_for_itself = stream_waits_for_itself,              \
    .event_waits_for_itself = NULL /* an event does not know its record's stream (the README says so) */

static const tp_backend gpu_table = {
    GPU_SHARED_ENTRIES,
    .stream_wait_event = guarded_gpu_capture_wait_event,
    .event_destroy = guarded_gpu_capture_event_destroy,
    .event_record = guarded_gpu_capture_event_record,
    .event_query = guarded_gpu_capture_event_query,
    .event_synchronize = guarded_gpu_capture_event_synchronize,
    .event_elapsed = guarded_gpu_capture_event_elapsed,
    .event_ipc_export = NULL, /* the core lets only interprocess events export */
};

static const tp_backend gpu_ipc_table = {
    GPU_SHARED_ENTRIES,
    .stream_wait_event = guarded_gpu_capture_ipc_wait_event,
    .event_destroy = guarded_gpu_ipc_event_destroy,
    .event_record = guarded_gpu_capture_ipc_event_record,
    .event_query = guarded_gpu_ipc_event_query,
    .event_synchronize = guarded_gpu_ipc_event_synchronize,
    .event_elapsed = guarded_gpu_capture_event_elapsed, /* the core lets only timing events, never interprocess ones (rule 8) */
    .event_ipc_export = guarded_gpu_event_ipc_export,
};

/* Wrappers of native events their callers own (tp_event_from_native): the plain
 * entries, but for a record that goes on the native event and a destroy that
 * leaves it alone; never interprocess. */
static const tp_backend gpu_wrapped_table = {
    GPU_SHARED_ENTRIES,
    .stream_wait_event = guarded_gpu_capture_wait_event,
    .event_destroy = guarded_gpu_wrapped_event_destroy,
    .event_record = guarded_gpu_wrapped_event_record, /* not marked as captured: the caller's own event */
    .event_query = guarded_gpu_capture_event_query,
    .event_synchronize = guarded_gpu_capture_event_synchronize,
    .event_elapsed = guarded_gpu_capture_event_elapsed,
    .event_ipc_export = NULL,
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
