/*
 * The top of the Vulkan backend: its table, which wires the entries of every layer
 * below (see vk_internal.h), init and the entry function. What the backend
 * promises is in vk_backend.h.
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/vulkan/vk_internal.h"

#include <stdio.h>

static const tp_backend vk_table;

static tp_status vk_init(const tp_host *host, char *reason, size_t reason_size)
{
    return tp_vk_module_init(host, &vk_table, reason, reason_size);
}

static tp_status vk_device_count(int *count)
{
    *count = tp_vk_device_count();
    return TP_OK;
}

static tp_status vk_device_name(int index, char *buf, size_t size)
{
    snprintf(buf, size, "%s", tp_vk_device(index)->name);
    return TP_OK;
}

static tp_status vk_wait_mechanism(int device, char *buf, size_t size)
{
    (void)device;
    snprintf(buf, size,
             "the stream's worker thread (a wait-before-signal on the device's one shared queue would "
             "hold up its other streams)");
    return TP_OK;
}

/* A VkQueue is its device's, shared by every stream (a stream is a timeline on it):
 * it names no stream to wrap, and work a caller submits there signals no timeline of
 * tpevent's. */
static tp_status vk_stream_from_native(int device, void *native, tp_stream **out)
{
    (void)native;
    (void)out;
    return tp_vk_host()->fail(TP_ERR_UNSUPPORTED,
                              "tp_stream_from_native: vulkan:%d's VkQueue is shared by all its streams (each stream "
                              "is a timeline semaphore on it), so a queue names no stream to wrap",
                              device);
}

static tp_status vk_stream_priority_range(int device, int *least, int *greatest)
{
    (void)device;
    *least = 0;
    *greatest = 0;
    return TP_OK;
}

static const tp_backend vk_table = {
    .abi_version = TP_BACKEND_ABI_VERSION,
    .size = sizeof(tp_backend),
    .name = "vulkan",
    .type = TP_DEVICE_VULKAN,
    .init = vk_init,
    .device_count = vk_device_count,
    .device_name = vk_device_name,
    .device_synchronize = tp_vk_device_synchronize,
    .stream_create = tp_vk_stream_create,
    .stream_from_native = vk_stream_from_native,
    .stream_default = tp_vk_stream_default,
    .stream_destroy = tp_vk_stream_destroy,
    .stream_query = tp_vk_stream_query,
    .stream_synchronize = tp_vk_stream_synchronize,
    .stream_wait_event = tp_vk_stream_wait_event,
    .stream_launch_host_fn = tp_vk_stream_launch_host_fn,
    .stream_native = tp_vk_stream_native,
    .vulkan_stream_info = tp_vk_stream_info,
    .vulkan_stream_submit = tp_vk_stream_submit,
    .event_create = tp_vk_event_create,
    .event_destroy = tp_vk_event_destroy,
    .event_record = tp_vk_event_record,
    .event_query = tp_vk_event_query,
    .event_synchronize = tp_vk_event_synchronize,
    .event_elapsed = tp_vk_event_elapsed,
    .event_timestamp = tp_vk_event_timestamp,
    .device_clock = tp_vk_device_clock,
    /* No interprocess events (rule 8): event_create refuses TP_EVENT_INTERPROCESS
     * with the reason. */
    .event_ipc_export = NULL,
    .event_ipc_import = NULL,
    .native_sample = tp_vk_native_sample,
    .snapshot_take = tp_vk_snapshot_take,
    .snapshot_release = tp_vk_snapshot_release,
    .snapshot_query = tp_vk_snapshot_query,
    .snapshot_synchronize = tp_vk_snapshot_synchronize,
    .snapshot_time = tp_vk_snapshot_time,
    .snapshot_notify = tp_vk_snapshot_notify,
    .stream_hold = tp_vk_stream_hold,
    /* Host functions run on the stream's own worker, which nothing else needs. */
    .host_fn_may_block = true,
    .wait_mechanism = vk_wait_mechanism,
    .event_native = tp_vk_event_native,
    .event_from_native = NULL,
    .stream_priority_range = vk_stream_priority_range,
    /* No capture (rule 16): a command buffer holds neither host functions nor host
     * waits. The core answers TP_ERR_UNSUPPORTED, and for tp_stream_is_capturing false. */
    .stream_begin_capture = NULL,
    .stream_end_capture = NULL,
    .stream_is_capturing = NULL,
    .graph_launch = NULL,
    .graph_destroy = NULL,
    .stream_waits_for_itself = tp_vk_stream_waits_for_itself,
    .event_waits_for_itself = tp_vk_event_waits_for_itself,
    .stream_hold_window = NULL, /* INT64_MAX: the worker's queue is the host's */
    .stream_flush_cache = tp_vk_stream_flush_cache,
    .stream_launch_empty = tp_vk_stream_launch_empty,
    /* Records as timeline semaphores another runtime waits on, where the driver can
     * export them (vk_export.c). A stream of this backend waits on another backend's
     * records on the host: importing a CUDA record would need CUDA to signal a
     * semaphore after it (cudaSignalExternalSemaphoresAsync on a stream that waited
     * for the event), not yet written. */
    .timeline_export_support = tp_vk_timeline_export_support,
    .snapshot_export_timeline = tp_vk_snapshot_export_timeline,
    .timeline_import_support = NULL,
    .stream_wait_timeline = NULL,
};

tp_status tp_backend_entry_vulkan(uint32_t core_abi, const tp_backend **out, char *reason, size_t reason_size)
{
    if (core_abi != TP_BACKEND_ABI_VERSION) {
        snprintf(reason, reason_size, "the vulkan backend speaks backend ABI version %u, the core asked for %u",
                 (unsigned)TP_BACKEND_ABI_VERSION, (unsigned)core_abi);
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    *out = &vk_table;
    return TP_OK;
}
