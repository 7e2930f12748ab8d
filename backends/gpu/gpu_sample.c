/*
 * The runtime's own calls, timed one at a time on objects made as tpevent makes
 * its own: the baseline column of `tpevent bench` (tp_native_sample). Not on any
 * path of the library's.
 */
#include "backends/gpu/gpu_internal.h"
#include "common/clock.h"

typedef struct sample_setup {
    rt_stream stream, other;
    rt_event first, second;
} sample_setup;

/* Objects for sampling `op`: streams as tpevent creates them, events as the
 * matching tp flags would make them, recorded and reached where the op needs it. */
static rt_error sample_prepare(tp_native_op op, sample_setup *s, const char **call)
{
    bool timing = op == TP_NATIVE_RECORD_TIMING || op == TP_NATIVE_ELAPSED;
    unsigned flags = gpu_native_flags(timing ? TP_EVENT_TIMING : 0);
    *call = RT_CALL("StreamCreateWithPriority");
    rt_error e = rt_stream_create(&s->stream, 0);
    if (e == RT_SUCCESS)
        e = rt_stream_create(&s->other, 0);
    if (e != RT_SUCCESS || op == TP_NATIVE_CREATE_DESTROY)
        return e;
    *call = RT_CALL("EventCreateWithFlags");
    e = rt_event_create(&s->first, flags);
    if (e == RT_SUCCESS)
        e = rt_event_create(&s->second, flags);
    *call = RT_CALL("EventRecord");
    if (e == RT_SUCCESS)
        e = rt_event_record(s->first, s->stream);
    if (e == RT_SUCCESS)
        e = rt_event_record(s->second, s->stream);
    *call = RT_CALL("StreamSynchronize");
    if (e == RT_SUCCESS)
        e = rt_stream_synchronize(s->stream);
    return e;
}

static void sample_release(sample_setup *s)
{
    if (s->stream)
        (void)rt_stream_synchronize(s->stream);
    if (s->other)
        (void)rt_stream_synchronize(s->other);
    if (s->first)
        (void)rt_event_destroy(s->first);
    if (s->second)
        (void)rt_event_destroy(s->second);
    if (s->stream)
        (void)rt_stream_destroy(s->stream);
    if (s->other)
        (void)rt_stream_destroy(s->other);
}

/* One timed runtime call (or pair) of `op`. */
static rt_error sample_once(tp_native_op op, sample_setup *s, uint64_t *ns, const char **call)
{
    rt_error e = RT_SUCCESS;
    float ms;
    rt_event created = NULL;
    uint64_t t0 = tp_now_ns();
    switch (op) {
    case TP_NATIVE_RECORD:
    case TP_NATIVE_RECORD_TIMING:
        e = rt_event_record(s->first, s->stream);
        *call = RT_CALL("EventRecord");
        break;
    case TP_NATIVE_QUERY:
        e = rt_event_query(s->first);
        *call = RT_CALL("EventQuery");
        break;
    case TP_NATIVE_SYNCHRONIZE:
        e = rt_event_synchronize(s->first);
        *call = RT_CALL("EventSynchronize");
        break;
    case TP_NATIVE_STREAM_WAIT:
        e = rt_sample_stream_wait_event(s->other, s->first);
        *call = RT_CALL("StreamWaitEvent");
        break;
    case TP_NATIVE_ELAPSED:
        e = rt_sample_event_elapsed(&ms, s->first, s->second);
        *call = RT_CALL("EventElapsedTime");
        break;
    case TP_NATIVE_CREATE_DESTROY:
        e = rt_event_create(&created, gpu_native_flags(0));
        if (e == RT_SUCCESS)
            e = rt_event_destroy(created);
        *call = RT_CALL("EventCreateWithFlags/EventDestroy");
        break;
    case TP_NATIVE_RECORD_SYNCHRONIZE:
        e = rt_event_record(s->first, s->stream);
        if (e == RT_SUCCESS)
            e = rt_event_synchronize(s->first);
        *call = RT_CALL("EventRecord/EventSynchronize");
        break;
    }
    *ns = tp_now_ns() - t0;
    return e;
}

tp_status gpu_native_sample(int index, tp_native_op op, uint64_t *samples_ns, size_t count)
{
    gpu_device *device = &gpu.devices[index];
    tp_status status = gpu_device_open(device);
    if (status != TP_OK)
        return status;
    rt_guard guard;
    rt_error e = rt_guard_enter(&guard, device->context, RT_NEED_DEVICE);
    if (e != RT_SUCCESS)
        return gpu_fail_call(RT_CALL("SetDevice"), e);
    sample_setup setup = {0};
    const char *call = "";
    e = sample_prepare(op, &setup, &call);
    for (size_t i = 0; e == RT_SUCCESS && i < count; i++)
        e = sample_once(op, &setup, &samples_ns[i], &call);
    sample_release(&setup);
    rt_guard_leave(&guard);
    return e == RT_SUCCESS ? TP_OK : gpu_fail_call(call, e);
}
