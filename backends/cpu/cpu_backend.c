/*
 * The top of the CPU backend: its table, which wires the entries of every layer
 * below (see cpu_internal.h), init and the entry symbol. What the backend promises
 * is in cpu_backend.h; how its objects live is in cpu_internal.h.
 */
#include "backends/cpu/cpu_internal.h"

#include <stdio.h>

static const tp_backend cpu_table;

static tp_status cpu_init(const tp_host *host, char *reason, size_t reason_size)
{
    return tp_cpu_module_init(host, &cpu_table, reason, reason_size);
}

static tp_status cpu_device_count(int *count)
{
    *count = tp_cpu_device_count();
    return TP_OK;
}

static tp_status cpu_device_name(int device, char *buf, size_t size)
{
    if (size == 0)
        return tp_cpu_host()->fail(TP_ERR_INVALID_ARGUMENT, "tp_device_name: buffer of size 0");
    snprintf(buf, size, "CPU (virtual device %d)", device);
    return TP_OK;
}

/* An interprocess event is made by its own layer (cpu_ipc_event.c), which gives
 * it the entries it does its own way; the table's other event entries serve both. */
static tp_status cpu_event_create(int device, unsigned flags, tp_event **out)
{
    if (flags & TP_EVENT_INTERPROCESS)
        return tp_cpu_ipc_event_create(device, flags, out);
    return tp_cpu_event_create(device, flags, out);
}

/* CPU events are tpevent's own: no runtime event is behind them (tp_event_native). */
static tp_status cpu_event_native(tp_event *event, void **native)
{
    (void)event;
    *native = NULL;
    return TP_OK;
}

static tp_status cpu_stream_priority_range(int device, int *least, int *greatest)
{
    (void)device;
    *least = 0;
    *greatest = TP_CPU_PRIORITY_HIGHEST;
    return TP_OK;
}

static const tp_backend cpu_table = {
    .abi_version = TP_BACKEND_ABI_VERSION,
    .size = sizeof(tp_backend),
    .name = "cpu",
    .type = TP_DEVICE_CPU,
    .init = cpu_init,
    .device_count = cpu_device_count,
    .device_name = cpu_device_name,
    .device_synchronize = tp_cpu_device_synchronize,
    .stream_create = tp_cpu_stream_create,
    .stream_from_native = tp_cpu_stream_from_native,
    .stream_default = tp_cpu_stream_default,
    .stream_destroy = tp_cpu_stream_destroy,
    .stream_query = tp_cpu_stream_query,
    .stream_synchronize = tp_cpu_stream_synchronize,
    .stream_wait_event = tp_cpu_capture_wait_event,
    .stream_launch_host_fn = tp_cpu_capture_launch_host_fn,
    .stream_native = tp_cpu_stream_native,
    .event_create = cpu_event_create,
    .event_destroy = tp_cpu_event_destroy,
    .event_record = tp_cpu_capture_event_record,
    .event_query = tp_cpu_event_query,
    .event_synchronize = tp_cpu_event_synchronize,
    .event_elapsed = tp_cpu_event_elapsed,
    .event_timestamp = tp_cpu_event_timestamp,
    .device_clock = tp_cpu_device_clock,
    .event_ipc_export = tp_cpu_event_ipc_export,
    .event_ipc_import = tp_cpu_event_ipc_import,
    .event_ipc_send_prepare = tp_cpu_event_ipc_send_prepare,
    .event_ipc_receive = tp_cpu_event_ipc_receive,
    .native_sample = NULL, /* no runtime underneath to compare with */
    .snapshot_take = tp_cpu_snapshot_take,
    .snapshot_release = tp_cpu_snapshot_release,
    .snapshot_query = tp_cpu_snapshot_query,
    .snapshot_synchronize = tp_cpu_snapshot_synchronize,
    .snapshot_time = NULL, /* the clock issue (rule 13) */
    .snapshot_notify = tp_cpu_snapshot_notify,
    .stream_hold = tp_cpu_stream_hold,
    /* A host function runs on the stream's own worker: the core's waits on other
     * backends' records block it on the record (core/wait_across.c). */
    .host_fn_may_block = true,
    .wait_mechanism = tp_cpu_wait_mechanism,
    .event_native = cpu_event_native,
    .event_from_native = NULL, /* nothing native to wrap: the core says so */
    .stream_priority_range = cpu_stream_priority_range,
    /* Rule 16 (cpu_graph.c, which also wraps record, wait and host functions). */
    .stream_begin_capture = tp_cpu_stream_begin_capture,
    .stream_end_capture = tp_cpu_stream_end_capture,
    .stream_is_capturing = tp_cpu_stream_is_capturing,
    .graph_launch = tp_cpu_graph_launch,
    .graph_destroy = tp_cpu_graph_destroy,
    .stream_waits_for_itself = tp_cpu_stream_waits_for_itself,
    .event_waits_for_itself = tp_cpu_event_waits_for_itself,
    .stream_hold_window = NULL, /* INT64_MAX: a stream's FIFO has no bound */
    .stream_flush_cache = tp_cpu_stream_flush_cache,
    .stream_capture_host_fn = tp_cpu_capture_host_fn, /* rule 16 (cpu_graph.c) */
};

tp_status tp_backend_entry_cpu(uint32_t core_abi, const tp_backend **out, char *reason, size_t reason_size)
{
    if (core_abi != TP_BACKEND_ABI_VERSION) {
        snprintf(reason, reason_size, "the cpu backend speaks backend ABI version %u, the core asked for %u",
                 (unsigned)TP_BACKEND_ABI_VERSION, (unsigned)core_abi);
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    *out = &cpu_table;
    return TP_OK;
}
