/*
 * The backend's snapshot entries (core/backend.h), for both kinds of event.
 *
 * A native event is recorded again in place (CUDA), so it cannot name one record
 * for long: a pending record is marked instead. On a stream of the event's device
 * that has nothing else to do, a wait on the native event takes its latest record
 * now (as cudaStreamWaitEvent does for any wait, rule 6), and a pooled native
 * event recorded right after it, the marker, is reached exactly when that record
 * is. The snapshot holds the marker until it is released; the marker then goes
 * back to its pool once reached, as every native event does.
 *
 * The streams: a few per device, made on first need, each used only while idle
 * (a stream with an earlier marker still pending would make a later marker wait
 * for it too: an order no event asked for, rule 12). When all GPU_SNAPSHOT_STREAMS
 * are busy, the next marker shares one: it may then be reached later than its
 * record, never earlier (docs/semantics.md, "Waits across backends").
 */
#include "backends/gpu/gpu_internal.h"

/* The pool a marker comes from: blocking sync if the event has it, so that a
 * thread waiting on the snapshot sleeps as it would on the event. */
static unsigned marker_flags(unsigned event_flags)
{
    return event_flags & TP_EVENT_BLOCKING;
}

/* Under the device's snapshot lock, with the device current: an idle snapshot
 * stream, made if none is and there is room, else the next in turn. */
static rt_error idle_stream(gpu_device *device, rt_stream *out)
{
    for (int i = 0; i < device->snapshot_stream_count; i++) {
        if (rt_stream_query(device->snapshot_streams[i]) == RT_SUCCESS) {
            *out = device->snapshot_streams[i];
            return RT_SUCCESS;
        }
    }
    if (device->snapshot_stream_count < GPU_SNAPSHOT_STREAMS) {
        rt_error e = rt_stream_create(out, device->least_priority);
        if (e == RT_SUCCESS)
            device->snapshot_streams[device->snapshot_stream_count++] = *out;
        return e;
    }
    *out = device->snapshot_streams[device->snapshot_stream_next++ % GPU_SNAPSHOT_STREAMS];
    return RT_SUCCESS;
}

/* Enqueues on an idle snapshot stream of the device a wait for `native` and then a
 * record of `marker`. */
static tp_status behind_native(gpu_device *device, rt_event native, rt_event marker)
{
    rt_guard guard;
    rt_error e = rt_guard_enter(&guard, device->context, RT_NEED_DEVICE);
    if (e != RT_SUCCESS)
        return gpu_fail_call(RT_CALL("SetDevice"), e);
    const char *call = RT_CALL("StreamCreateWithPriority");
    rt_stream stream;
    /* Rule 16: the caller's thread may be capturing (or another thread, in global
     * mode): the query of the snapshot streams is tpevent's, not the caller's, and
     * must not invalidate that capture. */
    rt_capture_mode mode = rt_thread_capture_relax_save();
    pthread_mutex_lock(&device->snapshot_lock);
    e = idle_stream(device, &stream);
    if (e == RT_SUCCESS) {
        call = RT_STREAM_WAIT_EVENT_CALL;
        e = rt_stream_wait_event(stream, native);
    }
    if (e == RT_SUCCESS) {
        call = RT_CALL("EventRecord");
        e = rt_event_record(marker, stream);
    }
    pthread_mutex_unlock(&device->snapshot_lock);
    rt_thread_capture_restore(mode);
    rt_guard_leave(&guard);
    return e == RT_SUCCESS ? TP_OK : gpu_fail_call(call, e);
}

tp_status gpu_snapshot_take(tp_event *base, tp_snapshot *out)
{
    gpu_event *event = gpu_as_event(base);
    *out = (tp_snapshot){.backend = base->backend, .device = base->device, .flags = base->flags};
    if (!gpu_event_recorded(event)) {
        out->state = TP_SNAPSHOT_NEVER_RECORDED;
        return TP_OK;
    }
    gpu_device *device = gpu_event_device(event);
    rt_event native = gpu_event_native(event);
    const char *call;
    rt_error e = gpu_event_query_relaxed(device, native, &call);
    if (e == RT_SUCCESS) {
        out->state = TP_SNAPSHOT_REACHED;
        return TP_OK;
    }
    if (e != RT_ERROR_NOT_READY)
        return gpu_fail_call(call, e);
    rt_event marker;
    tp_status status = gpu_pool_take(device, marker_flags(base->flags), &marker);
    if (status != TP_OK)
        return status;
    status = behind_native(device, native, marker);
    if (status != TP_OK) {
        gpu_pool_give(device, marker_flags(base->flags), marker, false);
        return status;
    }
    out->state = TP_SNAPSHOT_PENDING;
    out->object = marker;
    return TP_OK;
}

void gpu_snapshot_release(tp_snapshot *snapshot)
{
    if (snapshot->state != TP_SNAPSHOT_PENDING)
        return;
    rt_capture_mode mode = rt_thread_capture_relax_save(); /* rule 16, as below */
    gpu_pool_give(&gpu.devices[snapshot->device.index], marker_flags(snapshot->flags), snapshot->object, true);
    rt_thread_capture_restore(mode);
    snapshot->state = TP_SNAPSHOT_REACHED;
    snapshot->object = NULL;
}

tp_status gpu_snapshot_query(const tp_snapshot *snapshot, bool *reached)
{
    const char *call;
    rt_error e = gpu_event_query_relaxed(&gpu.devices[snapshot->device.index], snapshot->object, &call);
    if (e == RT_SUCCESS || e == RT_ERROR_NOT_READY) {
        *reached = e == RT_SUCCESS;
        return TP_OK;
    }
    return gpu_fail_call(call, e);
}

tp_status gpu_snapshot_synchronize(const tp_snapshot *snapshot)
{
    rt_guard guard;
    rt_error e = gpu_guard_enter_if(RT_SYNCHRONIZE_NEEDS_CONTEXT, &guard, gpu.devices[snapshot->device.index].context,
                                    RT_NEED_CONTEXT);
    if (e != RT_SUCCESS)
        return gpu_fail_call(RT_CALL("SetDevice"), e);
    rt_capture_mode mode = rt_thread_capture_relax_save(); /* as gpu_event_query_relaxed */
    e = rt_event_synchronize(snapshot->object);
    rt_thread_capture_restore(mode);
    rt_guard_leave(&guard);
    return e == RT_SUCCESS ? TP_OK : gpu_fail_call(RT_CALL("EventSynchronize"), e);
}

/* fn runs on the device's poller (gpu_notify.c), which the snapshot_notify contract
 * allows: it is short and does not block. */
tp_status gpu_snapshot_notify(const tp_snapshot *snapshot, void (*fn)(void *), void *arg)
{
    return gpu_notify_when_reached(&gpu.devices[snapshot->device.index], snapshot->object, fn, arg);
}
