/*
 * The top of the OpenCL backend: its table, which wires the entries of every layer
 * below (see ocl_internal.h), init and the entry function. What the backend
 * promises is in ocl_backend.h.
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/opencl/ocl_internal.h"

#include <stdio.h>

/* Not const: a child created by fork() puts failing entries in both tables
 * (ocl_fork.c), so that no call tests for fork on its way. */
static tp_backend ocl_table;

/* The table of events wrapped from a caller's cl_event: the backend's, but a record
 * is refused. Made once, at init, from ocl_table. */
static tp_backend wrapped_table;

static tp_status ocl_record_refused(tp_event *event, tp_stream *stream)
{
    (void)event;
    (void)stream;
    return tp_ocl_host()->fail(TP_ERR_UNSUPPORTED,
                               "tp_event_record: the event wraps a cl_event (tp_event_from_native), which is one "
                               "command's and cannot be recorded again; record an event of tp_event_create");
}

static tp_status ocl_init(const tp_host *host, char *reason, size_t reason_size)
{
    wrapped_table = ocl_table;
    wrapped_table.event_record = ocl_record_refused;
    tp_status status = tp_ocl_module_init(host, &ocl_table, reason, reason_size);
    if (status == TP_OK)
        status = tp_ocl_fork_guard_install(&ocl_table, &wrapped_table, reason, reason_size);
    return status;
}

static tp_status ocl_device_count(int *count)
{
    *count = tp_ocl_device_count();
    return TP_OK;
}

/* The device and its platform, as `tpevent devices` lists them. */
static tp_status ocl_device_name(int index, char *buf, size_t size)
{
    ocl_device *device = tp_ocl_device(index);
    snprintf(buf, size, "%s (%s)", device->name, device->platform_name);
    return TP_OK;
}

static tp_status ocl_wait_mechanism(int device, char *buf, size_t size)
{
    (void)device;
    snprintf(buf, size, "user events (a barrier on clCreateUserEvent's event, released by clSetUserEventStatus)");
    return TP_OK;
}

/* Read-only: query, synchronize, wait, elapsed time and the timestamp answer for the
 * caller's command (its END is the time); a record is refused (see wrapped_table). */
static tp_status ocl_event_from_native(int device, void *native, tp_event **out)
{
    return tp_ocl_event_wrap(device, native, &wrapped_table, out);
}

static tp_status ocl_stream_hold_window(tp_stream *stream, int64_t *ops)
{
    *ops = ((ocl_stream *)stream)->device->hold_window;
    return TP_OK;
}

/* One priority: cl_khr_priority_hints is an extension few platforms have. */
static tp_status ocl_stream_priority_range(int device, int *least, int *greatest)
{
    (void)device;
    *least = 0;
    *greatest = 0;
    return TP_OK;
}

static tp_backend ocl_table = {
    .abi_version = TP_BACKEND_ABI_VERSION,
    .size = sizeof(tp_backend),
    .name = "opencl",
    .type = TP_DEVICE_OPENCL,
    .init = ocl_init,
    .device_count = ocl_device_count,
    .device_name = ocl_device_name,
    .device_synchronize = tp_ocl_device_synchronize,
    .stream_create = tp_ocl_stream_create,
    .stream_from_native = tp_ocl_stream_from_native,
    .stream_default = tp_ocl_stream_default,
    .stream_destroy = tp_ocl_stream_destroy,
    .stream_query = tp_ocl_stream_query,
    .stream_synchronize = tp_ocl_stream_synchronize,
    .stream_wait_event = tp_ocl_stream_wait_event,
    .stream_launch_host_fn = tp_ocl_stream_launch_host_fn,
    .stream_native = tp_ocl_stream_native,
    .event_create = tp_ocl_event_create,
    .event_destroy = tp_ocl_event_destroy,
    .event_record = tp_ocl_event_record,
    .event_query = tp_ocl_event_query,
    .event_synchronize = tp_ocl_event_synchronize,
    .event_elapsed = tp_ocl_event_elapsed,
    .event_timestamp = tp_ocl_event_timestamp,
    .device_clock = tp_ocl_device_clock,
    /* OpenCL cannot share an event between processes (rule 8): event_create
     * refuses TP_EVENT_INTERPROCESS with that reason. */
    .event_ipc_export = NULL,
    .event_ipc_import = NULL,
    .native_sample = NULL, /* bench/opencl (issue 34) */
    .snapshot_take = tp_ocl_snapshot_take,
    .snapshot_release = tp_ocl_snapshot_release,
    .snapshot_query = tp_ocl_snapshot_query,
    .snapshot_synchronize = tp_ocl_snapshot_synchronize,
    .snapshot_time = NULL,
    .snapshot_notify = tp_ocl_snapshot_notify,
    .stream_hold = tp_ocl_stream_hold,
    /* Host functions run on a worker per stream, but a wait across backends holds
     * no thread at all with a user event (rule 14). */
    .host_fn_may_block = false,
    .wait_mechanism = ocl_wait_mechanism,
    .event_native = tp_ocl_event_native,
    .event_from_native = ocl_event_from_native,
    .stream_priority_range = ocl_stream_priority_range,
    /* No capture (rule 16): cl_khr_command_buffer records only its own commands,
     * not markers, waits or host functions. The core answers TP_ERR_UNSUPPORTED, and
     * for tp_stream_is_capturing false. */
    .stream_begin_capture = NULL,
    .stream_end_capture = NULL,
    .stream_is_capturing = NULL,
    .graph_launch = NULL,
    .graph_destroy = NULL,
    .stream_waits_for_itself = tp_ocl_stream_waits_for_itself,
    .event_waits_for_itself = tp_ocl_event_waits_for_itself,
    .stream_hold_window = ocl_stream_hold_window,
    .stream_flush_cache = tp_ocl_stream_flush_cache,
    .stream_launch_empty = tp_ocl_stream_launch_empty,
};

tp_status tp_backend_entry_opencl(uint32_t core_abi, const tp_backend **out, char *reason, size_t reason_size)
{
    if (core_abi != TP_BACKEND_ABI_VERSION) {
        snprintf(reason, reason_size, "the opencl backend speaks backend ABI version %u, the core asked for %u",
                 (unsigned)TP_BACKEND_ABI_VERSION, (unsigned)core_abi);
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    *out = &ocl_table;
    return TP_OK;
}
