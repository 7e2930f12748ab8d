/*
 * The GPU backend in a child created by fork() after the parent initialized the
 * driver (gpu_device.c), which the child must not use: each entry that can reach
 * the runtime fails at once, naming the public call, with nothing on the call's
 * path (the tables' entries are replaced in the child, gpu_backend.c). The entries
 * that never reach the runtime (gpu_entries.h: LOCAL) stay.
 */
#include "backends/gpu/gpu_internal.h"

#include <unistd.h>

static tp_status forked_device_synchronize(int device)
{
    (void)device;
    return gpu_forked_fail("tp_device_synchronize");
}

static tp_status forked_stream_create(int device, int priority, tp_stream **out)
{
    (void)device;
    (void)priority;
    (void)out;
    return gpu_forked_fail("tp_stream_create");
}

static tp_status forked_stream_from_native(int device, void *native, tp_stream **out)
{
    (void)device;
    (void)native;
    (void)out;
    return gpu_forked_fail("tp_stream_from_native");
}

static tp_status forked_stream_default(int device, tp_stream **out)
{
    (void)device;
    (void)out;
    return gpu_forked_fail("tp_stream_default");
}

static tp_status forked_stream_destroy(tp_stream *stream)
{
    (void)stream;
    return gpu_forked_fail("tp_stream_destroy");
}

static tp_status forked_stream_query(tp_stream *stream, bool *idle)
{
    (void)stream;
    (void)idle;
    return gpu_forked_fail("tp_stream_query");
}

static tp_status forked_stream_synchronize(tp_stream *stream)
{
    (void)stream;
    return gpu_forked_fail("tp_stream_synchronize");
}

static tp_status forked_stream_launch_host_fn(tp_stream *stream, void (*fn)(void *), void *arg)
{
    (void)stream;
    (void)fn;
    (void)arg;
    return gpu_forked_fail("tp_stream_launch_host_fn");
}

static tp_status forked_event_create(int device, unsigned flags, tp_event **out)
{
    (void)device;
    (void)flags;
    (void)out;
    return gpu_forked_fail("tp_event_create");
}

static tp_status forked_event_ipc_import(int device, const unsigned char *payload, size_t length, tp_event **out)
{
    (void)device;
    (void)payload;
    (void)length;
    (void)out;
    return gpu_forked_fail("tp_event_from_ipc_handle");
}

static tp_status forked_native_sample(int device, tp_native_op op, uint64_t *samples_ns, size_t count)
{
    (void)device;
    (void)op;
    (void)samples_ns;
    (void)count;
    return gpu_forked_fail("tp_native_sample");
}

static tp_status forked_snapshot_take(tp_event *event, tp_snapshot *out)
{
    (void)event;
    (void)out;
    return gpu_forked_fail("snapshot_take");
}

static tp_status forked_snapshot_query(const tp_snapshot *snapshot, bool *reached)
{
    (void)snapshot;
    (void)reached;
    return gpu_forked_fail("snapshot_query");
}

static tp_status forked_snapshot_synchronize(const tp_snapshot *snapshot)
{
    (void)snapshot;
    return gpu_forked_fail("snapshot_synchronize");
}

static tp_status forked_snapshot_notify(const tp_snapshot *snapshot, void (*fn)(void *), void *arg)
{
    (void)snapshot;
    (void)fn;
    (void)arg;
    return gpu_forked_fail("snapshot_notify");
}

static tp_status forked_stream_hold(tp_stream *stream, void (**release)(void *), void **arg)
{
    (void)stream;
    (void)release;
    (void)arg;
    return gpu_forked_fail("tp_stream_hold");
}

static tp_status forked_wait_mechanism(int device, char *buf, size_t size)
{
    (void)device;
    (void)buf;
    (void)size;
    return gpu_forked_fail("tp_device_wait_mechanism");
}

static tp_status forked_event_timestamp(tp_event *event, int64_t *ns)
{
    (void)event;
    (void)ns;
    return gpu_forked_fail("tp_event_timestamp");
}

static tp_status forked_device_clock(int device, tp_clock_info *info)
{
    (void)device;
    (void)info;
    return gpu_forked_fail("tp_device_clock");
}

static tp_status forked_event_from_native(int device, void *native, tp_event **out)
{
    (void)device;
    (void)native;
    (void)out;
    return gpu_forked_fail("tp_event_from_native");
}

static tp_status forked_stream_priority_range(int device, int *least, int *greatest)
{
    (void)device;
    (void)least;
    (void)greatest;
    return gpu_forked_fail("tp_stream_priority_range");
}

static tp_status forked_stream_begin_capture(tp_stream *stream)
{
    (void)stream;
    return gpu_forked_fail("tp_stream_begin_capture");
}

static tp_status forked_stream_end_capture(tp_stream *stream, tp_graph **out)
{
    (void)stream;
    (void)out;
    return gpu_forked_fail("tp_stream_end_capture");
}

static tp_status forked_stream_is_capturing(tp_stream *stream, bool *capturing)
{
    (void)stream;
    (void)capturing;
    return gpu_forked_fail("tp_stream_is_capturing");
}

static tp_status forked_graph_launch(tp_graph *graph, tp_stream *stream)
{
    (void)graph;
    (void)stream;
    return gpu_forked_fail("tp_graph_launch");
}

static tp_status forked_graph_destroy(tp_graph *graph)
{
    (void)graph;
    return gpu_forked_fail("tp_graph_destroy");
}

static tp_status forked_stream_flush_cache(tp_stream *stream)
{
    (void)stream;
    return gpu_forked_fail("tp_measure");
}

static tp_status forked_stream_launch_empty(tp_stream *stream)
{
    (void)stream;
    return gpu_forked_fail("tp_measure");
}

static tp_status forked_stream_capture_host_fn(tp_stream *stream, void (*fn)(void *), void *arg,
                                               void (*release)(void *))
{
    (void)stream;
    (void)fn;
    (void)arg;
    (void)release;
    return gpu_forked_fail("tp_event_wait");
}

static tp_status forked_event_elapsed(tp_event *start, tp_event *end, float *ms)
{
    (void)start;
    (void)end;
    (void)ms;
    return gpu_forked_fail("tp_event_elapsed_time");
}

static tp_status forked_stream_wait_event(tp_stream *stream, tp_event *event)
{
    (void)stream;
    (void)event;
    return gpu_forked_fail("tp_event_wait");
}

static tp_status forked_event_destroy(tp_event *event)
{
    (void)event;
    return gpu_forked_fail("tp_event_destroy");
}

static tp_status forked_event_record(tp_event *event, tp_stream *stream)
{
    (void)event;
    (void)stream;
    return gpu_forked_fail("tp_event_record");
}

static tp_status forked_event_record_uncaptured(tp_event *event, tp_stream *stream, bool *captured)
{
    (void)event;
    (void)stream;
    (void)captured;
    return gpu_forked_fail("tp_event_record");
}

static tp_status forked_event_query(tp_event *event, bool *done)
{
    (void)event;
    (void)done;
    return gpu_forked_fail("tp_event_query");
}

static tp_status forked_event_synchronize(tp_event *event)
{
    (void)event;
    return gpu_forked_fail("tp_event_synchronize");
}

static tp_status forked_event_ipc_export(tp_event *event, unsigned char *payload, size_t *length)
{
    (void)event;
    (void)payload;
    (void)length;
    return gpu_forked_fail("tp_event_ipc_handle");
}

static tp_status forked_event_ipc_send_prepare(tp_event *event, int *fd, unsigned char *payload, size_t *length)
{
    (void)event;
    (void)fd;
    (void)payload;
    (void)length;
    return gpu_forked_fail("tp_event_ipc_send");
}

static tp_status forked_event_ipc_receive(int device, int fd, const unsigned char *payload, size_t length,
                                          tp_event **out)
{
    (void)device;
    (void)payload;
    (void)length;
    (void)out;
    close(fd); /* the entry takes it in every case */
    return gpu_forked_fail("tp_event_ipc_recv");
}

/* Waits on another runtime's timeline (gpu_timeline_wait.c): refused with no message,
 * as the contract says, and the core's host path then fails as above. */
static tp_status forked_timeline_import_support(int device, const unsigned char uuid[16], char *how, size_t how_size)
{
    (void)device;
    (void)uuid;
    snprintf(how, how_size, "the driver cannot be used in a child created by fork()");
    return TP_ERR_UNSUPPORTED;
}

static tp_status forked_stream_wait_timeline(tp_stream *stream, const tp_timeline_export *timeline,
                                             void (**passed)(void *), void **arg)
{
    (void)stream;
    (void)timeline;
    (void)passed;
    (void)arg;
    return TP_ERR_UNSUPPORTED;
}

void gpu_use_forked_entries(tp_backend *table)
{
    table->device_synchronize = forked_device_synchronize;
    table->stream_create = forked_stream_create;
    table->stream_from_native = forked_stream_from_native;
    table->stream_default = forked_stream_default;
    table->stream_destroy = forked_stream_destroy;
    table->stream_query = forked_stream_query;
    table->stream_synchronize = forked_stream_synchronize;
    table->stream_launch_host_fn = forked_stream_launch_host_fn;
    table->event_create = forked_event_create;
    table->event_ipc_import = forked_event_ipc_import;
    table->native_sample = forked_native_sample;
    table->snapshot_take = forked_snapshot_take;
    table->snapshot_query = forked_snapshot_query;
    table->snapshot_synchronize = forked_snapshot_synchronize;
    table->snapshot_notify = forked_snapshot_notify;
    table->stream_hold = forked_stream_hold;
    table->wait_mechanism = forked_wait_mechanism;
    table->event_timestamp = forked_event_timestamp;
    table->device_clock = forked_device_clock;
    table->event_from_native = forked_event_from_native;
    table->stream_priority_range = forked_stream_priority_range;
    table->stream_begin_capture = forked_stream_begin_capture;
    table->stream_end_capture = forked_stream_end_capture;
    table->stream_is_capturing = forked_stream_is_capturing;
    table->graph_launch = forked_graph_launch;
    table->graph_destroy = forked_graph_destroy;
    table->stream_flush_cache = forked_stream_flush_cache;
    table->stream_launch_empty = forked_stream_launch_empty;
    table->sm_clock = &gpu_sm_clock_forked_ops;
    table->stream_capture_host_fn = forked_stream_capture_host_fn;
    table->event_elapsed = forked_event_elapsed;
    table->stream_wait_event = forked_stream_wait_event;
    table->event_destroy = forked_event_destroy;
    table->event_record = forked_event_record;
    table->event_query = forked_event_query;
    table->event_synchronize = forked_event_synchronize;
    if (table->event_ipc_export) /* interprocess events only */
        table->event_ipc_export = forked_event_ipc_export;
    if (table->event_ipc_send_prepare)
        table->event_ipc_send_prepare = forked_event_ipc_send_prepare;
    table->event_ipc_receive = forked_event_ipc_receive;
    if (table->event_record_uncaptured) /* plain events only */
        table->event_record_uncaptured = forked_event_record_uncaptured;
    table->timeline_import_support = forked_timeline_import_support;
    table->stream_wait_timeline = forked_stream_wait_timeline;
}
