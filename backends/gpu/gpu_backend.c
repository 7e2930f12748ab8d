/*
 * The GPU backend's tables (see gpu_internal.h for how its files fit). Events come
 * in two kinds, each with a table of its own: plain ones (gpu_event.c) and
 * interprocess ones (gpu_ipc_event.c, TP_EVENT_INTERPROCESS, which an event keeps
 * for life). The registry knows `gpu_table`; interprocess events point at
 * `gpu_ipc_table`, the same but for the entries that take an event, so a call on
 * either kind is one indirect call, and the plain event's code has no IPC branch.
 * Only creation picks the kind. Wrappers of native events their callers own
 * (tp_event_from_native) have a third, `gpu_wrapped_table`. gpu_entries.h lists the
 * slots of each (tests/gpu_fake checks the tables against it).
 *
 * The capture layer is here: an entry that a capture changes (rule 16) tests for a
 * capture (one or two relaxed loads, gpu_graph.h) and takes gpu_graph.c's path only
 * if one may be involved, which ends in the entry itself where none is after all (a
 * wrapped stream nobody captures, a capture closed since); a hot one first tests
 * for its common case, which no capture is part of, and runs it in place
 * (gpu_event_direct.h, inline): record on CUDA reads in this file,
 * gpu_event_direct.h, gpu_internal.h and runtime_cuda.h.
 */
#include "backends/gpu/gpu_internal.h"
#include "backends/gpu/gpu_event_direct.h"
#include "backends/gpu/gpu_graph.h"
#include "backends/gpu/gpu_timeline_wait.h"
#include "backends/gpu/gpu_tool.h"

#include <stdio.h>

static tp_backend gpu_table, gpu_ipc_table, gpu_wrapped_table;
static void use_forked_tables(void);

/* Once the driver is initialized, a child created by fork() must not use it
 * (gpu_device.c). */
static tp_status init(const tp_host *host, char *reason, size_t reason_size)
{
    tp_status status = gpu_init(&gpu_table, &gpu_ipc_table, host, reason, reason_size);
    if (status == TP_OK)
        (void)pthread_atfork(NULL, NULL, use_forked_tables);
    return status;
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

/* ------------------------------------------------------- the capture layer */

static tp_status captured_stream_destroy(tp_stream *stream)
{
    if (TP_UNLIKELY(gpu_stream_in_capture(stream)))
        return gpu_capture_stream_destroy(stream);
    return gpu_stream_destroy(stream);
}

static tp_status captured_stream_query(tp_stream *stream, bool *idle)
{
    if (TP_UNLIKELY(gpu_stream_capture_checked(stream)))
        return gpu_capture_stream_query(stream, idle);
    return gpu_stream_query(stream, idle);
}

static tp_status captured_stream_synchronize(tp_stream *stream)
{
    if (TP_UNLIKELY(gpu_stream_capture_checked(stream)))
        return gpu_capture_stream_synchronize(stream);
    return gpu_stream_synchronize(stream);
}

static tp_status captured_stream_launch_host_fn(tp_stream *stream, void (*fn)(void *), void *arg)
{
    bool capture_began = false;
    if (TP_LIKELY(!gpu_stream_capture_checked(stream))) {
        tp_status status = gpu_host_fn_launch(stream, fn, arg, &capture_began);
        if (TP_LIKELY(!capture_began))
            return status;
    }
    return gpu_capture_host_fn_launch(stream, fn, arg);
}

static tp_status captured_snapshot_take(tp_event *event, tp_snapshot *out)
{
    if (TP_UNLIKELY(gpu_event_capture_unsettled(event)))
        return gpu_capture_snapshot_take(event, out);
    return gpu_snapshot_take(event, out);
}

static tp_status captured_event_timestamp(tp_event *event, int64_t *ns)
{
    if (TP_UNLIKELY(gpu_event_capture_unsettled(event)))
        return gpu_capture_event_timestamp(event, ns);
    return gpu_event_timestamp(event, ns);
}

static tp_status captured_event_elapsed(tp_event *start, tp_event *end, float *ms)
{
    if (TP_LIKELY(gpu_elapsed_is_direct(start, end)))
        return gpu_direct_event_elapsed(start, end, ms);
    if (TP_UNLIKELY(gpu_event_capture_unsettled(start) || gpu_event_capture_unsettled(end)))
        return gpu_capture_event_elapsed(start, end, ms);
    return gpu_event_elapsed(start, end, ms);
}

static tp_status captured_plain_stream_wait_event(tp_stream *stream, tp_event *event)
{
    if (TP_LIKELY(gpu_wait_is_direct(stream, event)))
        return gpu_direct_stream_wait_event(stream, event);
    if (TP_UNLIKELY(gpu_stream_capture_checked(stream) || gpu_event_capture_marked(event)))
        return gpu_capture_wait_event(stream, event);
    return gpu_plain_stream_wait_event(stream, event);
}

static tp_status captured_plain_event_destroy(tp_event *event)
{
    if (TP_UNLIKELY(gpu_event_capture_marked(event)))
        return gpu_capture_event_destroy(event);
    return gpu_plain_event_destroy(event);
}

static tp_status captured_plain_event_record(tp_event *event, tp_stream *stream)
{
    if (TP_LIKELY(gpu_record_is_direct(event, stream)))
        return gpu_direct_event_record(event, stream);
    if (TP_UNLIKELY(gpu_stream_capture_checked(stream) || gpu_event_capture_marked(event)))
        return gpu_capture_event_record(event, stream);
    return gpu_plain_event_record(event, stream);
}

/* The trace's marks (core/backend.h): a stream no capture may involve records at
 * once; one tpevent or someone else may capture is asked once, in gpu_graph.c. */
static tp_status captured_plain_event_record_uncaptured(tp_event *event, tp_stream *stream, bool *captured)
{
    if (TP_UNLIKELY(gpu_stream_capture_checked(stream)))
        return gpu_capture_event_record_uncaptured(event, stream, captured);
    *captured = false;
    return captured_plain_event_record(event, stream);
}

static tp_status captured_plain_event_query(tp_event *event, bool *done)
{
    if (TP_LIKELY(gpu_event_is_direct(event)))
        return gpu_direct_event_query(event, done);
    if (TP_UNLIKELY(gpu_event_capture_unsettled(event)))
        return gpu_capture_event_query(event, done);
    return gpu_plain_event_query(event, done);
}

static tp_status captured_plain_event_synchronize(tp_event *event)
{
    if (TP_LIKELY(gpu_event_is_direct(event)))
        return gpu_direct_event_synchronize(event);
    if (TP_UNLIKELY(gpu_event_capture_unsettled(event)))
        return gpu_capture_event_synchronize(event);
    return gpu_plain_event_synchronize(event);
}

static tp_status captured_ipc_stream_wait_event(tp_stream *stream, tp_event *event)
{
    /* An event handed over a socket refuses captures itself (gpu_ipc_page.c). */
    if (TP_UNLIKELY(gpu_stream_capture_checked(stream)) && !gpu_ipc_event_paged(event))
        return gpu_capture_ipc_wait_event(stream, event);
    return gpu_ipc_stream_wait_event(stream, event);
}

static tp_status captured_ipc_event_record(tp_event *event, tp_stream *stream)
{
    if (TP_UNLIKELY(gpu_stream_capture_checked(stream)) && !gpu_ipc_event_paged(event))
        return gpu_capture_ipc_event_record(event, stream);
    return gpu_ipc_event_record(event, stream);
}

/* The slots every table shares. */
#define GPU_SHARED_SLOTS                                                                                               \
    .abi_version = TP_BACKEND_ABI_VERSION, .size = sizeof(tp_backend), .name = RT_BACKEND_NAME,                        \
    .type = RT_DEVICE_TYPE, .init = init, .device_count = gpu_device_count, .device_name = gpu_device_name,            \
    .device_synchronize = device_synchronize, .stream_create = gpu_stream_create,                                      \
    .stream_from_native = gpu_stream_from_native, .stream_default = gpu_stream_default,                                \
    .stream_destroy = captured_stream_destroy, .stream_query = captured_stream_query,                                  \
    .stream_synchronize = captured_stream_synchronize, .stream_launch_host_fn = captured_stream_launch_host_fn,        \
    .stream_native = gpu_stream_native, .event_create = event_create, .event_ipc_import = gpu_event_ipc_import,        \
    .native_sample = gpu_native_sample, .snapshot_take = captured_snapshot_take,                                       \
    .snapshot_release = gpu_snapshot_release, .snapshot_query = gpu_snapshot_query,                                    \
    .snapshot_synchronize = gpu_snapshot_synchronize, .snapshot_time = NULL, /* timestamps go by the event */          \
        .snapshot_notify = gpu_snapshot_notify, .stream_hold = gpu_stream_hold,                                        \
    .stream_hold_window = gpu_stream_hold_window,                                                                      \
    .host_fn_may_block = false, /* stream_hold holds no thread (core/backend.h) */                                     \
        .wait_mechanism = gpu_wait_mechanism, .event_timestamp = captured_event_timestamp,                             \
    .device_clock = gpu_device_clock, .event_native = gpu_event_native_handle, .event_from_native = event_from_native, \
    .stream_priority_range = gpu_stream_priority_range, .stream_begin_capture = gpu_stream_begin_capture,              \
    .stream_end_capture = gpu_stream_end_capture, .stream_is_capturing = gpu_stream_is_capturing,                      \
    .graph_launch = gpu_graph_launch, .graph_destroy = gpu_graph_destroy,                                              \
    .stream_flush_cache = gpu_stream_flush_cache, .stream_launch_empty = gpu_stream_launch_empty,                      \
    .tool_attached = gpu_tool_attached, .tool_range_push = gpu_tool_range_push, .tool_range_pop = gpu_tool_range_pop,  \
    .tool_stream_name = gpu_tool_stream_name, .stream_capture_host_fn = gpu_stream_capture_host_fn,                    \
    .stream_waits_for_itself = stream_waits_for_itself, .sm_clock = &gpu_sm_clock_ops,                                 \
    .event_waits_for_itself = NULL, /* an event does not know its record's stream (the README) */                      \
        .event_elapsed = captured_event_elapsed, .event_ipc_receive = gpu_event_ipc_receive,                           \
    .timeline_import_support = gpu_timeline_import_support, .stream_wait_timeline = gpu_stream_wait_timeline

/* Not const: a child created by fork() puts gpu_forked.c's entries in their place
 * (use_forked_tables), so that no call tests for fork on its way. */
static tp_backend gpu_table = {
    GPU_SHARED_SLOTS,
    .stream_wait_event = captured_plain_stream_wait_event,
    .event_destroy = captured_plain_event_destroy,
    .event_record = captured_plain_event_record,
    .event_query = captured_plain_event_query,
    .event_synchronize = captured_plain_event_synchronize,
    .event_ipc_export = NULL,       /* the core lets only interprocess events export */
    .event_ipc_send_prepare = NULL, /* and send */
    .event_record_uncaptured = captured_plain_event_record_uncaptured,
};

static tp_backend gpu_ipc_table = {
    GPU_SHARED_SLOTS,
    .stream_wait_event = captured_ipc_stream_wait_event,
    .event_destroy = gpu_ipc_event_destroy,
    .event_record = captured_ipc_event_record,
    .event_query = gpu_ipc_event_query,
    .event_synchronize = gpu_ipc_event_synchronize,
    .event_ipc_export = gpu_event_ipc_export,
    .event_ipc_send_prepare = gpu_event_ipc_send_prepare,
    .event_record_uncaptured = NULL, /* the trace's marks are plain events */
};

/* A wrapper's native event is set at creation and never replaced (gpu_event.c), so
 * the plain event's entries serve its waits, queries and synchronizes; its record
 * goes on the caller's own native event, never marked as captured. */
static tp_backend gpu_wrapped_table = {
    GPU_SHARED_SLOTS,
    .stream_wait_event = captured_plain_stream_wait_event,
    .event_destroy = gpu_wrapped_event_destroy,
    .event_record = gpu_wrapped_event_record,
    .event_query = captured_plain_event_query,
    .event_synchronize = captured_plain_event_synchronize,
    .event_ipc_export = NULL,
    .event_ipc_send_prepare = NULL,
    .event_record_uncaptured = NULL, /* the trace's marks are plain events */
};

/* pthread_atfork's child handler: the child has one thread, this one, so the
 * tables change under no call. */
static void use_forked_tables(void)
{
    gpu_use_forked_entries(&gpu_table);
    gpu_use_forked_entries(&gpu_ipc_table);
    gpu_use_forked_entries(&gpu_wrapped_table);
}

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
