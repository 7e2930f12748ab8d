/*
 * A record's every case but the common one (gpu_event_direct.h): the first record,
 * a stream that needs a guard, (HIP) a record over a pending one, a record that
 * loses a race to publish its fresh native event; and the pieces of a record that
 * interprocess events (gpu_ipc_event.c) and captures (gpu_graph.c) share. Out of
 * line so that the inline common case calls down into this file and nothing here
 * calls back up into it.
 */
#include "backends/gpu/gpu_internal.h"

tp_status gpu_record_native(rt_event native, gpu_stream *stream)
{
    rt_guard guard;
    rt_error e = gpu_stream_enter(stream, &guard);
    if (TP_UNLIKELY(e != RT_SUCCESS))
        return gpu_fail_call(RT_CALL("SetDevice"), e);
    e = rt_event_record(native, stream->native);
    rt_guard_leave(&guard);
    return TP_LIKELY(e == RT_SUCCESS) ? TP_OK : gpu_fail_call(RT_CALL("EventRecord"), e);
}

tp_status gpu_event_record_fresh(gpu_event *event, gpu_stream *stream, rt_event expected, bool expected_captured,
                                 bool *published)
{
    gpu_device *device = gpu_event_device(event);
    *published = false;
    tp_status status = gpu_device_open(device);
    if (status != TP_OK)
        return status;
    rt_event fresh;
    status = gpu_pool_take(device, event->head.flags, &fresh);
    if (status != TP_OK)
        return status;
    status = gpu_record_native(fresh, stream);
    if (status != TP_OK) {
        gpu_pool_give(device, event->head.flags, fresh, false);
        return status;
    }
    rt_event seen = expected;
    if (!atomic_compare_exchange_strong_explicit(&event->native, &seen, fresh, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        gpu_pool_give(device, event->head.flags, fresh, true);
        return TP_OK;
    }
    *published = true;
    atomic_store_explicit(&event->recorded, true, memory_order_release);
    if (expected && expected_captured)
        gpu_pool_give_captured(device, event->head.flags, expected);
    else if (expected)
        gpu_pool_give(device, event->head.flags, expected, true);
    return TP_OK;
}

/* Everything but the common case: the first record, a stream that needs a guard,
 * (HIP) a record that would overlap the pending one. A record that loses a race
 * to publish its fresh native event records again. */
TP_NOINLINE tp_status gpu_event_record_slow(gpu_event *event, gpu_stream *stream)
{
    for (;;) {
        rt_event native = atomic_load_explicit(&event->native, memory_order_acquire);
        if (native != NULL && !gpu_record_would_overlap(native)) {
            tp_status status = gpu_record_native(native, stream);
            if (status == TP_OK)
                atomic_store_explicit(&event->recorded, true, memory_order_release);
            return status;
        }
        bool published;
        tp_status status = gpu_event_record_fresh(event, stream, native, false, &published);
        if (status != TP_OK || published)
            return status;
    }
}
