/*
 * The hot calls' common case (gpu_entries.h's DIRECT), inline so that the tables'
 * direct layer (gpu_backend.c) runs it with no further jump: record, query,
 * synchronize, wait and elapsed on events recorded before, streams that need no
 * guard, one device. The budget is 3% of the runtime's call (~100-300 ns), and a
 * jump through one more function was a measurable part of it on the H200. Their
 * other cases are gpu_event.c's; what these call out of line (gpu_event_record.c,
 * gpu_clock.c, gpu_device.c) calls nothing here back.
 */
#ifndef TPEVENT_BACKENDS_GPU_EVENT_DIRECT_H
#define TPEVENT_BACKENDS_GPU_EVENT_DIRECT_H

#include "backends/gpu/gpu_internal.h"

/*
 * The direct tests (gpu_entries.h, DIRECT): the common case of a hot call, from
 * flags its path loads anyway, true only where gpu_graph.h's capture tests would
 * be false: a stream is `direct` only while capture_check is off, and an event
 * whose latest record was made inside a capture is not `recorded` (gpu_graph.c:
 * capture_record clears it before the mark goes on; settle sets it only as the
 * mark goes; in between, record_outside's fresh native is the one it has). Where
 * they hold, the direct entries below run with no other test.
 */
static inline bool gpu_record_is_direct(tp_event *event, tp_stream *stream)
{
    return (int)gpu_event_recorded(gpu_as_event(event)) &
           (int)atomic_load_explicit(&gpu_as_stream(stream)->direct, memory_order_relaxed);
}

static inline bool gpu_wait_is_direct(tp_stream *stream, tp_event *event)
{
    return gpu_record_is_direct(event, stream);
}

static inline bool gpu_event_is_direct(tp_event *event)
{
    return gpu_event_recorded(gpu_as_event(event));
}

/* Both recorded, where the runtime needs no context for the call (the core calls
 * event_elapsed for events of one device only: core/backend.h). */
static inline bool gpu_elapsed_is_direct(tp_event *start, tp_event *end)
{
    return !RT_ELAPSED_NEEDS_CONTEXT &&
           ((int)gpu_event_recorded(gpu_as_event(start)) & (int)gpu_event_recorded(gpu_as_event(end)));
}

/* The common case (the record is ~250 ns, the budget 3% of it): recorded before,
 * on a stream that needs no guard. */
static inline tp_status gpu_direct_event_record(tp_event *base, tp_stream *stream_base)
{
    gpu_event *event = gpu_as_event(base);
    gpu_stream *stream = gpu_as_stream(stream_base);
    rt_event native = gpu_event_native(event);
    if (TP_UNLIKELY(gpu_record_would_overlap(native)))
        return gpu_event_record_slow(event, stream);
    rt_error e = rt_event_record(native, stream->native);
    return TP_LIKELY(e == RT_SUCCESS) ? TP_OK : gpu_fail_call(RT_CALL("EventRecord"), e);
}

static inline tp_status gpu_direct_event_query(tp_event *base, bool *done)
{
    gpu_event *event = gpu_as_event(base);
    rt_guard guard;
    rt_error e = gpu_guard_enter_if(RT_QUERY_NEEDS_CONTEXT, &guard, gpu_event_device(event)->context, RT_NEED_CONTEXT);
    if (TP_UNLIKELY(e != RT_SUCCESS))
        return gpu_fail_call(RT_CALL("SetDevice"), e);
    e = rt_event_query(gpu_event_native(event));
    rt_guard_leave(&guard);
    if (TP_LIKELY(e == RT_SUCCESS || e == RT_ERROR_NOT_READY)) {
        *done = e == RT_SUCCESS;
        return TP_OK;
    }
    return gpu_fail_call(RT_CALL("EventQuery"), e);
}

static inline tp_status gpu_direct_event_synchronize(tp_event *base)
{
    gpu_event *event = gpu_as_event(base);
    rt_guard guard;
    rt_error e = gpu_guard_enter_if(RT_SYNCHRONIZE_NEEDS_CONTEXT, &guard, gpu_event_device(event)->context,
                                    RT_NEED_CONTEXT);
    if (TP_UNLIKELY(e != RT_SUCCESS))
        return gpu_fail_call(RT_CALL("SetDevice"), e);
    e = rt_event_synchronize(gpu_event_native(event));
    rt_guard_leave(&guard);
    return TP_LIKELY(e == RT_SUCCESS) ? TP_OK : gpu_fail_call(RT_CALL("EventSynchronize"), e);
}

/* The common case: recorded, on a stream that needs no guard. */
static inline tp_status gpu_direct_stream_wait_event(tp_stream *stream_base, tp_event *event_base)
{
    rt_error e = rt_stream_wait_event(gpu_as_stream(stream_base)->native, gpu_event_native(gpu_as_event(event_base)));
    return TP_LIKELY(e == RT_SUCCESS) ? TP_OK : gpu_fail_call(RT_STREAM_WAIT_EVENT_CALL, e);
}

/* The common case in as few instructions as it takes (the call is ~100 ns, the
 * budget 3% of it): both recorded, one device, no guard needed; then a failure of
 * the call needs nothing but its error, so nothing is kept across it. */
static inline tp_status gpu_direct_event_elapsed(tp_event *start, tp_event *end, float *ms)
{
    rt_error e = rt_event_elapsed(ms, gpu_event_native(gpu_as_event(start)), gpu_event_native(gpu_as_event(end)));
    return TP_LIKELY(e == RT_SUCCESS) ? TP_OK : gpu_elapsed_failed(e);
}

#endif /* TPEVENT_BACKENDS_GPU_EVENT_DIRECT_H */
